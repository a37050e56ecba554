"""The benchmark-folder format round-trips every text a model can write."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from prefdisco.benchio import read_bench, write_bench
from prefdisco.schema import Scenario


def a_scenario() -> Scenario:
    text = files("prefdisco").joinpath("data/demo_scenarios.jsonl").read_text(encoding="utf-8")
    return Scenario.model_validate_json(text.split("\n")[0])


def test_line_separators_inside_strings_survive_a_round_trip(tmp_path: Path) -> None:
    scenario = a_scenario()
    odd = "one\u2028two\u2029three\x85four\x0bfive\x1c"  # str.splitlines() splits on each of these
    scenario.persona.summary = odd
    scenario.problem.question = f"{scenario.problem.question}\u2028{odd}"
    write_bench(tmp_path / "b", [scenario], [scenario.persona], [])
    back = read_bench(tmp_path / "b")
    assert back.scenarios == [scenario]
    assert back.personas[0].summary == odd
