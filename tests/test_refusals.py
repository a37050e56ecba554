"""A refused or empty response is scored by rule, never judged (issue 32, part 2).

The planted world: six scenarios on the OpenAI-compatible mock, driven through inspect's real ``openai-api`` client
by ``prefdisco eval`` in baseline, discovery and oracle. Every assistant turn of ``r0`` ends as a refusal
(``message.refusal``), of ``r1`` as a content filter (``finish_reason: content_filter``), of ``r2`` as an empty
completion, of ``r3`` cut at the token limit (``finish_reason: length``, the full answer kept) and of ``r6`` as a
reasoning model that spent its whole budget thinking (its thinking, no answer, cut); ``r4`` and ``r5``
answer. Every judge reply is 4 and every answer is B, the gold, so by hand, in each condition:

* ``--refusals score`` (the default): PrefAlign 1, 1, 1, 4, 4, 4, 1 → mean 16/7; correct 0, 0, 0, 1, 1, 1, 0 →
  accuracy 3/7;
* ``--refusals exclude``: r0-r2 and r6 left out → PrefAlign 4.0 over 3, accuracy 1.0 over 3;

and r0-r2 and r6 make no judge, quality or correctness call at all. The same world through inspect's Anthropic
Messages, OpenAI Responses and Gemini clients (each format's own refusal, cut, empty answer and spent budget) gives
the same flags and numbers.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText, ModelOutput, StopDetails
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, providers_env, write_scenarios
from prefdisco.dialogue.response_end import ResponseEnd, response_end
from prefdisco.scoring.non_answer import non_answer
from scripted import tagged_scenario

ENDINGS = {"r0": "refusal", "r1": "filter", "r2": "empty", "r3": "length", "r6": "thinking"}
CASES = [f"r{i}" for i in range(7)]
CUT = ("r3", "r6")
MODES = ("baseline", "discovery", "oracle")
RULED = {"r0": "refused", "r1": "refused", "r2": "empty", "r6": "empty"}


def scenarios() -> list:
    return [tagged_scenario(sid) for sid in CASES]


def assert_ruled(rows: pd.DataFrame, stats: dict) -> None:
    """The planted world's rows of every condition, each read and ruled as the module docstring says by hand, and no
    judge, quality or correctness call made for a non-answer."""
    for mode in MODES:
        at = rows.xs(mode, level="mode")
        assert at["refused"].to_dict() == {s: int(RULED.get(s) == "refused") for s in CASES}
        assert at["empty"].to_dict() == {s: int(RULED.get(s) == "empty") for s in CASES}
        assert at["truncated"].to_dict() == {s: int(s in CUT) for s in CASES}
        assert at.loc["r3", "stop_reason"] == at.loc["r6", "stop_reason"] == "max_tokens"
        assert at["pref_align"].to_dict() == {s: 1.0 if s in RULED else 4.0 for s in CASES}
        assert at["correct"].to_dict() == {s: 0 if s in RULED else 1 for s in CASES}
        assert at["pref_align"].mean() == pytest.approx(16 / 7) and at["correct"].mean() == pytest.approx(3 / 7)
    for case in RULED:  # never judged: no judge, quality or correctness call for their responses
        assert judged_calls(stats, case) == 0, case
    assert all(judged_calls(stats, case) > 0 for case in CASES if case not in RULED)


PROVIDERS = {
    "anthropic": "anthropic/claude-sonnet-4-5-",  # Messages: stop_reason "refusal", "max_tokens"
    "responses": "openai/o3-",  # Responses: a refusal part, an incomplete response (max_output_tokens)
    "gemini": "google/gemini-2.5-flash-",  # generateContent: finishReason SAFETY, MAX_TOKENS
}
"""The wire formats besides chat completions, each through inspect's own client (``tests/mock_wire.py``)."""


def run(
    tmp_path, monkeypatch, name: str, *extra: str, later: bool = False, provider: str | None = None
) -> tuple[pd.DataFrame, dict, dict]:
    """``prefdisco eval`` of the planted world into ``tmp_path/name`` (with ``later``: ``--judge later``, then
    ``prefdisco judge``), then ``prefdisco report``: the results, the summary and the mock's counts."""
    cli._register()
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios())
    with MockOpenAI(MockConfig(endings=ENDINGS), scores=lambda model, mode, h: 4) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        # a name per server: inspect memoizes models by name
        model = f"{PROVIDERS[provider]}{name}{mock.port}" if provider else f"openai-api/mock/{name}{mock.port}"
        args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / name), "--display", "none"]
        result = CliRunner().invoke(cli.app, [*args, "--modes", ",".join(MODES), *extra])
        assert result.exit_code == 0, result.output
        if later:
            judged = CliRunner().invoke(cli.app, ["judge", str(tmp_path / name)])
            assert judged.exit_code == 0, judged.output
        stats = mock.stats()
    report = CliRunner().invoke(
        cli.app, ["report", str(tmp_path / name), "--out", str(tmp_path / f"{name}-report"), "--no-figures"]
    )
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / f"{name}-report" / "summary.json").read_text())
    return pd.read_csv(tmp_path / name / "results.csv"), summary, stats


def judged_calls(stats: dict, case: str) -> int:
    """The judge, quality and correctness calls made for ``case``'s responses (every condition)."""
    roles = ("judge", "quality", "grader")
    return sum(
        n for key, n in stats["by_case_role"].items() if key.startswith(f"{case}|") and key.split("|")[2] in roles
    )


@pytest.mark.slow
def test_refused_and_empty_responses_are_scored_by_rule_and_counted(tmp_path, monkeypatch):
    results, summary, stats = run(tmp_path, monkeypatch, "ruled")
    assert len(results) == len(CASES) * len(MODES) and (results["failed"] == 0).all()
    rows = results.set_index(["scenario_id", "mode"])
    assert_ruled(rows, stats)
    # chat completions' own stop reasons: a content filter, a refusal part that stops normally
    assert (rows.xs("r1", level="scenario_id")["stop_reason"] == "content_filter").all()
    assert (rows.xs("r0", level="scenario_id")["stop_reason"] == "stop").all() and rows[
        "pref_align_reason"
    ].isna().all()
    [model] = results["model"].unique()
    accuracy = summary["accuracy"][model]["demo"]
    assert accuracy == pytest.approx(dict.fromkeys(MODES, 3 / 7))
    counts = summary["non_answers"][model]["demo"]
    expected = {"n_scenarios": 7, "refused": 2, "empty": 2, "excluded": 0, "truncated": 2}
    assert counts == {mode: expected for mode in MODES}
    [reading] = [r for r in summary["validity"] if r["instrument"] == "Refused and empty responses"]
    assert "2 refused, 2 empty, 2 truncated of 7" in reading["finding"] and "scored by rule" in reading["reading"]
    assert any("12 of 21 responses were refused or empty and scored by rule" in c for c in summary["caveats"])


@pytest.mark.slow
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_providers_refusal_cut_and_empty_answer_are_read_and_ruled(tmp_path, monkeypatch, provider):
    """The same planted world through inspect's Anthropic and Responses clients: each format's refusal (and content
    filter), cut and empty answer give the same flags and the same numbers as chat completions."""
    results, summary, stats = run(tmp_path, monkeypatch, provider, provider=provider)
    assert (results["failed"] == 0).all()
    assert_ruled(results.set_index(["scenario_id", "mode"]), stats)
    [model] = results["model"].unique()
    assert summary["accuracy"][model]["demo"] == pytest.approx(dict.fromkeys(MODES, 3 / 7))
    assert any("12 of 21 responses were refused or empty and scored by rule" in c for c in summary["caveats"])


@pytest.mark.slow
def test_refusals_exclude_leaves_them_out_of_prefalign_and_accuracy(tmp_path, monkeypatch):
    results, summary, stats = run(tmp_path, monkeypatch, "excluded", "--refusals", "exclude")
    rows = results.set_index(["scenario_id", "mode"])
    for mode in MODES:
        at = rows.xs(mode, level="mode")
        assert at["pref_align"].isna().to_dict() == {s: s in RULED for s in CASES}
        assert at["correct"].isna().to_dict() == {s: s in RULED for s in CASES}
        assert at["pref_align_reason"].fillna("").to_dict() == {s: RULED.get(s, "") for s in CASES}
        assert at["pref_align"].mean() == pytest.approx(4.0) and at["correct"].mean() == pytest.approx(1.0)
    assert (results["failed"] == 0).all()
    for case in RULED:
        assert judged_calls(stats, case) == 0, case
    [model] = results["model"].unique()
    assert summary["accuracy"][model]["demo"] == dict.fromkeys(MODES, 1.0)
    assert summary["accuracy_n"][model]["demo"] == dict.fromkeys(MODES, 3)
    assert summary["non_answers"][model]["demo"]["oracle"]["excluded"] == 4
    run_json = json.loads((tmp_path / "excluded" / "run.json").read_text())
    assert run_json["refusals"] == "exclude"
    assert run_json["protocol_id"].startswith("custom-")  # not the default protocol: its numbers are not
    assert any("12 of 21 responses were refused or empty and left out of PrefAlign" in c for c in summary["caveats"])


@pytest.mark.slow
def test_a_run_judged_later_scores_its_refusals_by_the_same_rule(tmp_path, monkeypatch):
    """``--judge later`` then ``prefdisco judge``: the same rows as judging inline, and still no judge call for a
    refused or empty response."""
    results, summary, stats = run(
        tmp_path, monkeypatch, "later", "--judge", "later", "--refusals", "exclude", later=True
    )
    rows = results.set_index(["scenario_id", "mode"]).sort_index()
    assert (rows["judged"] == 1).all() and (rows["failed"] == 0).all()
    assert rows["pref_align_reason"].fillna("").to_dict() == {(s, m): RULED.get(s, "") for s in CASES for m in MODES}
    assert rows["pref_align"].isna().to_dict() == {(s, m): s in RULED for s in CASES for m in MODES}
    assert (rows["pref_align"].dropna() == 4.0).all()
    assert rows["correct"].isna().to_dict() == {(s, m): s in RULED for s in CASES for m in MODES}
    for case in RULED:
        assert judged_calls(stats, case) == 0, case
    [model] = results["model"].unique()
    assert summary["non_answers"][model]["demo"]["discovery"] == {
        "n_scenarios": 7, "refused": 2, "empty": 2, "excluded": 4, "truncated": 2,
    }  # fmt: skip


def test_how_a_generation_ended_is_read_from_every_providers_shape():
    """inspect's own shapes of each provider's refusal, cut and answer (``response_end``)."""
    answered = ModelOutput.from_content("m", "The answer is B")
    assert response_end(answered) == ResponseEnd(stop_reason="stop")
    anthropic = ModelOutput.from_content("m", "", stop_reason="content_filter")  # stop_reason "refusal"
    anthropic.choices[0].stop_details = StopDetails(type="refusal", explanation="declined")
    assert response_end(anthropic) == ResponseEnd(stop_reason="content_filter", refused=True)
    part = ModelOutput.from_content("m", [ContentText(text="I can't help with that.", refusal=True)])
    assert response_end(part) == ResponseEnd(stop_reason="stop", refused=True)  # OpenAI message.refusal, Responses
    cut = ModelOutput.from_content("m", "The answer is", stop_reason="max_tokens")
    assert response_end(cut) == ResponseEnd(stop_reason="max_tokens", truncated=True)
    overflow = ModelOutput.from_content("m", "x", stop_reason="model_length")
    assert response_end(overflow).truncated
    assert response_end("plain text from a driver") is None
    assert response_end(ChatMessageAssistant(content="an agent's message")) is None
    refusing = ChatMessageAssistant(content=[ContentText(text="No.", refusal=True)])
    assert response_end(refusing) == ResponseEnd(refused=True)


def test_what_is_no_answer():
    thought_only = ModelOutput.from_content(
        "m", [ContentReasoning(reasoning="long thinking")], stop_reason="max_tokens"
    )
    end = response_end(thought_only)
    assert end is not None and end.truncated and not end.refused
    assert non_answer("", end) == "empty"  # a reasoning model that spent its budget thinking: nothing visible
    assert non_answer("   \n", None) == "empty"
    assert non_answer("I can't help with that.", ResponseEnd(stop_reason="stop", refused=True)) == "refused"
    assert non_answer("The answer is", ResponseEnd(stop_reason="max_tokens", truncated=True)) is None  # judged
    assert non_answer("B", None) is None
