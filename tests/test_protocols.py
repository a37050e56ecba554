"""Versioned protocols (issue 25, part 2): the part of a run's settings that changes its numbers has an id
(``NAME-vN.X`` for the shipped ones, ``custom-…`` otherwise), recorded in run.json, every results row, the run's
protocol.json and the report's summary.json; ``prefdisco report`` refuses runs of different protocols in one table
unless ``--allow-mixed``, naming the settings that differ."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from leaderboard_world import N_SCENARIOS
from prefdisco.dialogue.presets import preset_named
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import (
    DEFAULT_SETTINGS,
    SHIPPED,
    protocol_id,
    protocol_record,
    protocol_settings,
    protocol_templates,
)
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.evaluation.settings.preset_rules import preset_settings
from prefdisco.prompts import templates_hash
from prefdisco.results.merge import load_runs


def shipped_config(shipped) -> RunConfig:
    """The run a researcher makes for ``shipped``: its preset, and its other settings as flags (the demo's: what
    ``prefdisco demo`` runs)."""
    if shipped.id.startswith("demo-"):
        from prefdisco.demo import demo_plan

        return demo_plan()[1]
    preset = shipped.settings["preset"]
    fixed = preset_named(preset).settings
    given = {k: v for k, v in shipped.settings.items() if k != "preset" and k not in fixed}
    return RunConfig(**preset_settings(preset, {}), **{k: v for k, v in given.items() if v != DEFAULT_SETTINGS[k]})


@pytest.mark.parametrize("shipped", SHIPPED, ids=[s.id for s in SHIPPED])
def test_a_shipped_protocols_prompts_are_pinned(shipped):
    """Editing a prompt a shipped protocol uses changes its numbers: this fails until the protocol's version is
    bumped (a new ``NAME-v(N+1).0`` in ``SHIPPED`` with the new hash, documented in docs/evaluation.md)."""
    config = shipped_config(shipped)
    assert templates_hash(protocol_templates(config)) == shipped.prompts
    assert protocol_settings(config) == shipped.settings  # every setting it fixes is what that run has
    assert protocol_id(config) == shipped.id


def test_the_packaged_demo_runs_a_shipped_protocol_of_its_own():
    """Issue 49: the packaged demo's run was filed under ``custom-fd30580c``, a hash a reader cannot look up. Its
    settings are the demo's own (its user's replies cut at 60 tokens, the one-call structured judge, a grammar on the
    assistant's turns: its numbers compare with no default run), so it has a documented id of its own; the demo
    on another model runs the defaults, and the same flags on ``prefdisco eval`` give the same id."""
    from prefdisco.demo import demo_plan

    assert protocol_id(demo_plan()[1]) == "demo-v1.0"
    assert protocol_id(demo_plan(model="openai/gpt-4.1")[1]) == "default-v1.0"
    flags = RunConfig(user_max_tokens=60, judge="structured", constrain_ask=True, quality=False)
    assert protocol_id(flags) == "demo-v1.0"
    assert protocol_id(RunConfig(user_max_tokens=60, judge="structured", constrain_ask=True)).startswith("custom-")


def test_the_demo_names_its_benchmark_as_eval_of_the_same_scenarios_would(tmp_path):
    """A demo run's protocol.json named no benchmark, so ``prefdisco submit`` refused it; it now names the hash that
    ``prefdisco eval`` of the same scenarios written as a scenarios.jsonl records (``benchio.source_hash`` of the
    file), for the embedded demo's selection and for the whole packaged set (another --model)."""
    from prefdisco.benchio import source_hash
    from prefdisco.demo import demo_plan

    for model in ("prefdisco/smollm2", "openai/gpt-4.1"):
        scenarios, config = demo_plan(model=model)
        path = tmp_path / f"{len(scenarios)}.jsonl"
        path.write_text("".join(s.model_dump_json() + "\n" for s in scenarios), encoding="utf-8")
        assert config.benchmark == source_hash(path)
    assert demo_plan()[1].benchmark != demo_plan(model="openai/gpt-4.1")[1].benchmark  # its selection vs the whole set


def test_the_default_protocol_is_runconfigs_defaults():
    assert protocol_settings(RunConfig()) == DEFAULT_SETTINGS


def test_what_a_run_is_of_never_changes_its_protocol_and_what_changes_results_does():
    base = protocol_id(RunConfig())
    assert base == "default-v1.0"
    same = [
        RunConfig(models=["openai/gpt-4.1", "x/y"], seed=9, epochs=3, limit=4, workers=2),
        RunConfig(modes=["baseline", "discovery", "oracle", "wrong_persona", "oracle_distractor"], fixed_k=[1, 3]),
        RunConfig(audit=False, quality=False, cache=False, max_connections=3, temperature=0.2, max_tokens=99),
        RunConfig(user_model="openai/gpt-4.1-mini", grader_model="anthropic/claude"),  # named beside the id
    ]
    assert {protocol_id(c) for c in same} == {base}
    changed = [
        RunConfig(user_temperature=1.0),
        RunConfig(grader_temperature=0.3),
        RunConfig(judge="structured"),
        RunConfig(user_type="cooperative"),
        RunConfig(ask="tools"),
        RunConfig(pushback=1),
        RunConfig(user_retry=1),
        RunConfig(judge_repeats=2),
        RunConfig(constrain_ask=True),  # a grammar on the assistant's turns (issue 31, defect 8)
        RunConfig(max_questions=3),
    ]
    ids = [protocol_id(c) for c in changed]
    assert all(i.startswith("custom-") and len(i) == len("custom-") + 8 for i in ids)
    assert len(set(ids)) == len(ids)  # each change its own protocol
    assert protocol_id(RunConfig(user_type="targeted")) == "targeted-v1.0"
    assert protocol_id(RunConfig(**preset_settings("paper", {}))) == "paper-v1.0"
    record = protocol_record(RunConfig(user_model="u", grader_model="j1", judge_panel=["j2"]))
    assert (record.user_model, record.judges, record.rubrics) == ("u", ["j1", "j2"], None)
    assert record.described() == "default-v1.0 (simulator u, judge j1, j2)"


def test_settings_added_later_keep_older_records_comparable_and_strategy_prompts_are_hashed():
    """Issue 31, defect 8: the protocol record left out constrain_ask (a grammar on every assistant turn) and a
    strategy solver's own prompts. A record written before constrain_ask existed reads it at False, the value
    every earlier run ran with; a strategy run's prompt hash holds its strategy's templates."""
    from prefdisco.results.protocol_record import differences

    new = protocol_record(RunConfig())
    old = new.model_copy(update={"settings": {k: v for k, v in new.settings.items() if k != "constrain_ask"}})
    assert new.settings["constrain_ask"] is False and differences(old, new) == []
    grammar = protocol_record(RunConfig(constrain_ask=True))
    assert differences(old, grammar) == ["constrain_ask false vs true"]
    plain, strategy = (protocol_record(RunConfig(solver=s)) for s in (None, "prefdisco/checklist"))
    assert strategy.prompts != plain.prompts


def invoke(cli_app, *args: str):
    return CliRunner().invoke(cli_app, list(args))


RUNS = {"a": "good", "b": "fair", "c": "late", "d": "late"}
"""The leaderboard world's runs (``tests/leaderboard_world.py``) each test reads: A (model good) and B (model fair) on
the default protocol, C and D: model good again with the simulated user at temperature 1.0 (another ask)."""


@pytest.fixture
def runs(leaderboard_runs):
    """``(cli app, {name: run folder})`` for the runs A-D of ``RUNS``."""
    import prefdisco.cli as cli

    cli._register()
    folder, _port = leaderboard_runs
    return cli.app, {name: folder / run for name, run in RUNS.items()}


def test_the_id_is_in_run_json_every_row_and_protocol_json(runs):
    _cli_app, base = runs
    run_json = json.loads((base["a"] / "run.json").read_text())
    assert run_json["protocol_id"] == "default-v1.0"
    results = pd.read_csv(base["a"] / "results.csv")
    assert set(results["protocol_id"]) == {"default-v1.0"} and len(results) == N_SCENARIOS * 3
    record = json.loads((base["a"] / "protocol.json").read_text())
    assert record["id"] == "default-v1.0" and record["settings"]["user_temperature"] == 0.7
    assert record["rubrics"] and record["user_model"].startswith("openai-api/mock/m")
    c = json.loads((base["c"] / "protocol.json").read_text())
    assert c["id"].startswith("custom-") and c["rubrics"] == record["rubrics"]  # the same benchmark


def test_a_report_merges_runs_of_one_protocol(runs, tmp_path):
    cli_app, base = runs
    flags = ["--out", str(tmp_path / "ab"), "--bootstrap", "200", "--no-figures"]
    out = invoke(cli_app, "report", str(base["a"]), str(base["b"]), *flags)
    assert out.exit_code == 0, out.output
    summary = json.loads((tmp_path / "ab" / "summary.json").read_text())
    assert len(summary["models"]) == 2 and summary["protocol_id"] == "default-v1.0"
    assert [p["run"] for p in summary["protocols"]] == [str(base["a"]), str(base["b"])]
    assert "protocol: default-v1.0 (simulator" in out.output
    html = (tmp_path / "ab" / "report.html").read_text()
    assert "protocol <code>default-v1.0 (simulator" in html


def test_runs_of_different_protocols_are_refused_unless_allowed_and_the_difference_is_named(runs, tmp_path):
    cli_app, base = runs
    refused = invoke(cli_app, "report", str(base["a"]), str(base["c"]), "--out", str(tmp_path / "ac"))
    assert refused.exit_code == 2
    assert "ran different protocols (user_temperature 0.7 vs 1.0)" in refused.output
    assert "--allow-mixed" in refused.output and not (tmp_path / "ac").exists()
    flags = ["--out", str(tmp_path / "ac"), "--allow-mixed", "--no-figures"]
    mixed = invoke(cli_app, "report", str(base["a"]), str(base["c"]), *flags)
    assert mixed.exit_code == 0, mixed.output
    summary = json.loads((tmp_path / "ac" / "summary.json").read_text())
    assert summary["protocol_id"] == "mixed"
    assert any("user_temperature 0.7 vs 1.0" in line for line in summary["caveats"])


def test_one_model_in_two_runs_is_named_by_run(runs):
    _cli_app, base = runs
    merged = load_runs([base["a"], base["d"]], allow_mixed=True)
    models = set(merged.data.results["model"].astype(str))
    port_model = next(iter(set(pd.read_csv(base["a"] / "results.csv")["model"])))
    assert models == {f"{port_model} @ good", f"{port_model} @ late"}  # each named by its run folder
    assert set(merged.data.attributes["model"].astype(str)) == models
    assert set(merged.data.transcript_rows["model"].astype(str)) == models
    assert any("appear(s) in more than one run" in n for n in merged.notes)


def test_a_table_made_of_two_protocols_rows_is_refused(runs, tmp_path):
    _cli_app, base = runs
    rows = pd.concat([pd.read_csv(base[n] / "results.csv") for n in ("b", "c")])  # two models, two protocols
    rows.to_csv(tmp_path / "both.csv", index=False)
    with pytest.raises(UserError, match=r"holds rows of 2 protocols \(custom-[0-9a-f]{8}, default-v1\.0\)"):
        load_runs([tmp_path / "both.csv"])
    assert load_runs([tmp_path / "both.csv"], allow_mixed=True).notes
