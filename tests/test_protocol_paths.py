"""Every command that calls a model records what its last calls were sent (issue 45, defect 1).

``protocol.json`` is written from the flags before the first call, and every command that calls a model settles it
after its calls through one function (``evaluation/effective_protocol.settled``). Here every such command runs on
Claude through inspect's real Anthropic client against the mock server (``tests/mock_wire.py``): that client sends
no temperature at all (``models/sampling.drops_temperature``), so a record that names the settings the calls were
sent has the judge's and the simulated user's temperatures null, says they were not sent, and takes the id of the
settings as sent (a ``custom-…`` one, never ``default-v1.0``):

* ``prefdisco eval`` in one process, with ``--workers 2`` and with ``--sessions`` (a carry arm played position by
  position);
* ``prefdisco judge`` of a ``--judge later`` run: the eval made no judge call, so the judge's request can only be
  the judging's (asked for ``--judge-temperature 0.3``). Before, the record kept the eval's ``judge: later``, the
  judge's 0.0 and the flags' id; now it is the inline run's protocol, the same id;
* ``prefdisco regrade`` of the inline run with a corrected rubric and ``--judge-temperature 0.5``: it starts from the
  run's settled record, not ``run.json``'s flags, so it stays the run's ``custom-…`` protocol and its recorded change
  is the rubrics alone (before: ``default-v1.0``, and a temperature change it did not make); its judge's request is
  the regrade's own (asked 0.5);
* the play-the-user study's export (``annotate export --study play``): the judge's request as the study's server
  sent it (its id a ``human-…`` one of the settings as sent).

The RL episode (``env/``) records no protocol: it writes no run folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import get_model
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, providers_env, tagged_scenarios, write_scenarios
from play_world import play_scenario
from prefdisco.annotate.play_export import export_play
from prefdisco.annotate.play_service import prepare_play
from prefdisco.annotate.play_session import PlaySettings, PlayStudy
from prefdisco.annotate.play_store import PlayStore
from test_annotate_bench import write_bench
from test_sessions_eval import session_bench

WHY = "inspect's Anthropic client sends no temperature (Anthropic's current API takes none)"


def file_sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def record(folder: Path) -> dict:
    return json.loads((folder / "protocol.json").read_text())


def assert_as_sent(found: dict, model: str, judge_asked: float, user: bool = True) -> None:
    """The record names what the last calls were sent: the judge (and the simulated user) asked for a temperature
    that was not sent, so the effective settings have none and the notes say why."""
    grader = found["sent"]["grader"]
    assert grader["model"] == model and grader["asked"]["temperature"] == judge_asked
    assert "temperature" not in grader["sent"] and found["settings"]["grader_temperature"] is None
    assert f"grader temperature {judge_asked!r}: not sent ({model}): {WHY}" in found["not_sent"]
    if user:
        assert "temperature" not in found["sent"]["user"]["sent"] and found["settings"]["user_temperature"] is None
        assert f"user temperature 0.7: not sent ({model}): {WHY}" in found["not_sent"]
    assert found["id"] != "default-v1.0" and found["asked_id"] is not None


def rows_id(folder: Path) -> set[str]:
    return set(pd.read_csv(folder / "results.csv")["protocol_id"])


def corrected(scenarios):  # type: ignore[no-untyped-def]
    """The first scenario's first criterion reworded at level 1 (a regrade's corrected rubric)."""
    first, *rest = scenarios
    rubric = [c.model_copy(update={"levels": {**c.levels, 1: "Skips every step."}}) for c in first.rubric[:1]]
    return [first.model_copy(update={"rubric": rubric + list(first.rubric[1:])}), *rest]


@pytest.mark.slow
def test_every_command_that_calls_a_model_records_what_its_last_calls_were_sent(tmp_path, monkeypatch):
    cli._register()
    scenarios = tagged_scenarios(2)
    bench = write_bench(tmp_path / "bench", scenarios)  # a benchmark folder: its manifest names its content hash
    fixed = write_scenarios(tmp_path / "fixed.jsonl", corrected(scenarios))
    sessions_bench, sessions, _ = session_bench(tmp_path / "sessions", length=2, people=1)

    def run(*args: str) -> None:
        result = CliRunner().invoke(cli.app, [*args, "--display", "none"] if args[0] == "eval" else list(args))
        assert result.exit_code == 0, result.output

    with MockOpenAI() as mock:
        providers_env(monkeypatch, mock, tmp_path)
        claude = f"anthropic/claude-sonnet-4-5-m{mock.port}"
        common = ("--model", claude, "--modes", "baseline,discovery")
        run("eval", str(bench), "--log-dir", str(tmp_path / "inline"), *common)
        run("eval", str(bench), "--log-dir", str(tmp_path / "workers"), *common, "--workers", "2")
        run(
            "eval", str(sessions_bench), "--log-dir", str(tmp_path / "sessions-run"), "--model", claude,
            "--sessions", str(sessions), "--modes", "baseline,carry_transcript",
        )  # fmt: skip
        run("eval", str(bench), "--log-dir", str(tmp_path / "later"), *common, "--judge", "later")
        run("judge", str(tmp_path / "later"), "--judge-temperature", "0.3")
        regrade = ["regrade", str(tmp_path / "inline"), "--bench", str(fixed), "--out", str(tmp_path / "regraded")]
        run(*regrade, "--judge-temperature", "0.5")

        db = tmp_path / "play.sqlite"
        prepare_play(write_bench(tmp_path / "play-bench", [play_scenario()]), db, claude, claude, PlaySettings())
        store = PlayStore(db)
        study = PlayStudy(store, get_model(claude), get_model(claude), PlaySettings.from_meta(store.play_meta()))

        async def play() -> None:  # the mock's assistant asks two questions, then answers
            view = await study.view("alice", 1)
            while not view.done:
                assert view.status == "running", view.error
                view = await study.reply("alice", 1, "Short and concrete, please.")

        asyncio.run(play())
        export_play(db, tmp_path / "play-run")

    inline = record(tmp_path / "inline")
    for name in ("inline", "workers", "sessions-run"):
        found = record(tmp_path / name)
        assert_as_sent(found, claude, 0.0)
        assert rows_id(tmp_path / name) == {found["id"]}
    assert record(tmp_path / "workers")["id"] == inline["id"]

    later = record(tmp_path / "later")  # judged afterwards: the inline run's protocol, as its judge was sent
    assert_as_sent(later, claude, 0.3)
    assert later["settings"]["judge"] == "per_criterion" and later["id"] == inline["id"]
    assert rows_id(tmp_path / "later") == {inline["id"]}

    regraded = record(tmp_path / "regraded")  # from the run's settled record; its judge's calls the regrade's
    assert_as_sent(regraded, claude, 0.5)
    assert regraded["id"] == inline["id"] and rows_id(tmp_path / "regraded") == {inline["id"]}
    origin = regraded["regraded_from"]
    assert origin["protocol"] == inline["id"] and [c.split()[0] for c in origin["changes"]] == ["rubrics"]

    played = record(tmp_path / "play-run")  # the study's judge, as its server sent it; a person, no simulated user
    assert_as_sent(played, claude, 0.0, user=False)
    assert played["id"].startswith("human-") and played["id"] != played["asked_id"]
    assert rows_id(tmp_path / "play-run") == {played["id"]}

    # every record names the benchmark its calls were made on (a submission carries it): a folder by its manifest's
    # content hash, a file by the sha256 of its bytes; a judging keeps the run's, a regrade names its --bench
    manifest = json.loads((bench / "manifest.json").read_text())["content_hash"]
    benchmarks = {name: record(tmp_path / name)["benchmark"] for name in ("inline", "workers", "later", "regraded")}
    assert benchmarks == {"inline": manifest, "workers": manifest, "later": manifest, "regraded": file_sha(fixed)}
    assert record(tmp_path / "sessions-run")["benchmark"] == file_sha(sessions_bench)  # a scenarios.jsonl
    play_manifest = json.loads((tmp_path / "play-bench" / "manifest.json").read_text())["content_hash"]
    assert played["benchmark"] == play_manifest != manifest
