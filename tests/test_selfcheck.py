"""``prefdisco selfcheck`` on every row of the ten shared benchmark copies, and on a planted metric bug."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
import prefdisco.scoring.correctness as correctness
from prefdisco.answer_spec import IntegerAnswer, RangeAnswer
from prefdisco.benchmarks import BENCHMARKS, load_problems
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.correctness.numeric_range import check_numeric_range
from prefdisco.scoring.selfcheck import selfcheck


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_selfcheck_passes_on_every_row(shared_benchmarks: Path, name: str) -> None:
    problems = load_problems(name, shared_benchmarks / name)
    (report,) = selfcheck(problems)
    assert report.ok, report.failures[:5]
    assert report.checked + report.not_judgeable + report.needs_grader == len(problems)
    assert report.gold_accepted == report.wrong_rejected == report.checked
    if name == "simpleqa":  # graded by a model: skipped without --grader
        assert report.needs_grader == len(problems) and report.checked == 0
    elif name == "mascqa":  # two voided NUM rows and one voided choice row
        assert report.not_judgeable == 3 and report.checked == len(problems) - 3
    else:
        assert report.not_judgeable == 0 and report.checked == len(problems)


def first_range_only(spec: RangeAnswer, response: str) -> correctness.CorrectnessResult:
    """The reading the issue found: the first range only, at rounding tolerance."""
    narrowed = RangeAnswer(ranges=[spec.ranges[0].model_copy(update={"rel_tol": 1e-6, "single": False})])
    return check_numeric_range(narrowed, response)


def test_selfcheck_finds_the_first_range_only_metric(shared_benchmarks: Path, monkeypatch) -> None:
    monkeypatch.setattr(correctness, "check_numeric_range", first_range_only)
    (report,) = selfcheck(load_problems("mascqa", shared_benchmarks / "mascqa"))
    failed = {f.problem_id for f in report.failures}
    assert all(f.what == "gold rejected" for f in report.failures)
    assert len(failed) == 24  # the 23 single-number golds (their 1 % lost) and the two-range row
    assert "G-META-21-42" in failed


def test_selfcheck_cli_exits_1_and_lists_failures(shared_benchmarks: Path, monkeypatch) -> None:
    runner = CliRunner()
    cli._register()
    source = str(shared_benchmarks / "mascqa")
    good = runner.invoke(cli.app, ["selfcheck", "--benchmark", "mascqa", "--source", source])
    assert good.exit_code == 0, good.output
    assert "mascqa: gold accepted 647/647, wrong rejected 647/647, not judgeable 3" in good.output
    monkeypatch.setattr(correctness, "check_numeric_range", first_range_only)
    bad = runner.invoke(cli.app, ["selfcheck", "--benchmark", "mascqa", "--source", source])
    assert bad.exit_code == 1
    assert "gold accepted 623/647" in bad.output and "G-META-21-42: gold rejected" in bad.output
    assert "(+" in bad.output  # more failures than are listed


def test_selfcheck_states_an_integer_gold_as_written() -> None:
    """The reading the issue found: "1,000" as the alternatives 1 or 0. Boxing each accepted value cannot see it;
    the gold as written ("1,000", which is 1000) is rejected by it."""
    misread = Problem(
        id="k", benchmark="demo", question="q", answer="1,000", answer_type=AnswerType.INTEGER,
        answer_spec=IntegerAnswer(accepted=[1, 0]),
    )  # fmt: skip
    (report,) = selfcheck([misread])
    assert [(f.what, f.response) for f in report.failures] == [
        ("gold rejected", "The answer is \\boxed{1,000}."),
    ]
    (report,) = selfcheck([Problem.model_validate(misread.model_dump(exclude={"answer_spec"}))])
    assert report.ok and report.gold_accepted == report.wrong_rejected == 1
