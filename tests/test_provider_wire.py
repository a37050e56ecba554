"""Provider conformance (issue 32, part 1): ``prefdisco eval`` through inspect's real provider clients, each against
the mock server speaking that provider's wire format as a reasoning model answers (``tests/mock_wire.py``).

Per format — OpenAI Responses (``openai/o3``: what inspect uses for o-series and gpt-5), Anthropic Messages
(``anthropic/…``: JSON and streamed), Google ``generateContent`` (``google/…``) and OpenAI-compatible chat
completions with ``reasoning_content`` (vLLM, DeepSeek) — the model under test answers with its thinking in the
format's own reasoning part, and baseline, discovery and oracle run under both ask channels (text with the
per-criterion judge; tools with the structured one and every other condition too, fixed-K 1 included; under text
also ``--judge later`` then ``prefdisco judge`` through the Anthropic client). Asserted: every row scored,
discovery asked its questions, the thinking never reached a simulated user's or a judge's request (the server looks
in every one), every judge request carried its schema, and — the replies being the same text in every format — the
same PrefAlign and correctness as the plain chat-completions run. The RL episode's user and judge run over the
Gemini and Anthropic clients alike, and so does the play study (a person in the user's seat). A refusal in each
format is scored by rule (``test_refusals.py``).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, providers_env, tagged_scenarios, write_scenarios

THOUGHT = "PRIVATE-THOUGHT: the person probably wants a worked example"
MODES = "baseline,discovery,oracle"
EVERY_CONDITION = (
    "--modes",
    "baseline,discovery,oracle,wrong_persona,oracle_distractor,stated_belief",
    "--fixed-k",
    "1",
)
"""The tools channel's runs: every per-scenario condition, fixed-K included."""


def run(tmp_path, name: str, model: str, *extra: str) -> pd.DataFrame:
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / name)]
    if "--modes" not in extra:
        args += ["--modes", MODES]
    result = CliRunner().invoke(cli.app, [*args, "--display", "none", *extra])
    assert result.exit_code == 0, result.output
    return pd.read_csv(tmp_path / name / "results.csv").sort_values(["scenario_id", "mode"], ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize(("ask", "judge"), [("text", "per_criterion"), ("tools", "structured")])
def test_every_wire_format_runs_scores_alike_and_keeps_the_thinking_private(tmp_path, monkeypatch, ask, judge):
    cli._register()
    with MockOpenAI(MockConfig(thinking=THOUGHT)) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        port = mock.port
        flags = ("--ask", ask, "--judge", judge, *(EVERY_CONDITION if ask == "tools" else ()))
        runs = {
            "chat": run(tmp_path, "chat", f"openai-api/mock/m{port}", *flags),
            "responses": run(tmp_path, "responses", f"openai/o3-m{port}", *flags),
            "anthropic": run(tmp_path, "anthropic", f"anthropic/claude-sonnet-4-5-m{port}", *flags),
            "gemini": run(tmp_path, "gemini", f"google/gemini-2.5-flash-m{port}", *flags),
        }
        if ask == "text":  # the dialogues now, the judging later (prefdisco judge), through Anthropic's client
            later = f"anthropic/claude-sonnet-4-5-later{port}"
            run(tmp_path, "later", later, "--ask", ask, "--judge", "later")
            judged = CliRunner().invoke(cli.app, ["judge", str(tmp_path / "later"), "--judge", judge])
            assert judged.exit_code == 0, judged.output
            runs["later"] = pd.read_csv(tmp_path / "later" / "results.csv").sort_values(
                ["scenario_id", "mode"], ignore_index=True
            )
        stats = mock.stats()
        wire = {(body["_format"], role) for role, body in mock.wire}
        streamed = {body["_format"] for role, body in mock.wire if body.get("stream")}
        judged = [body for role, body in mock.wire if role == "judge"]
    for body in judged:  # every judge request asks for its JSON schema in its format's own field
        config = body.get("generationConfig") or {}
        schema = {
            "anthropic": body.get("output_format"),
            "responses": (body.get("text") or {}).get("format"),
            "gemini": config.get("responseJsonSchema") or config.get("responseSchema"),
        }[body["_format"]]
        assert schema, body["_format"]
    assert stats["reasoning_leaks"] == 0  # no user, judge, audit or quality request held the thinking
    for fmt in ("responses", "anthropic"):  # each format carried every role; both streamed some answers
        assert {(fmt, "assistant"), (fmt, "user"), (fmt, "judge")} <= wire, fmt
    assert streamed == {"responses", "anthropic"} or streamed == {"anthropic"}
    # what each client sent is read back from its own request shape: Gemini's generationConfig holds the user's and
    # the judge's temperatures (sent); the Responses client sends o3 none (not sent)
    gemini = json.loads((tmp_path / "gemini" / "protocol.json").read_text())
    assert gemini["not_sent"] == [] and gemini["sent"]["user"]["sent"]["temperature"] == 0.7
    assert gemini["sent"]["grader"]["sent"]["temperature"] == 0.0 and gemini["asked_id"] is None  # the flags' id
    o3 = json.loads((tmp_path / "responses" / "protocol.json").read_text())
    assert (
        f"user temperature 0.7: not sent (openai/o3-m{port}): OpenAI's reasoning model o3-m{port} takes no temperature"
        in o3["not_sent"]
    )
    reference = runs["chat"]
    for name, rows in runs.items():
        assert (rows["failed"] == 0).all() and rows["pref_align"].notna().all(), name
        assert (rows.loc[rows["mode"] == "discovery", "n_questions"] == 2).all(), name
        assert (rows.loc[rows["mode"] == "fixed_k", "n_questions"] == 1).all(), name
        assert (rows["refused"] == 0).all() and (rows["empty"] == 0).all(), name
        # the same replies in every format: the same scores as the chat-completions run
        assert rows["pref_align"].tolist() == pytest.approx(reference["pref_align"].tolist()), name
        assert rows["correct"].tolist() == reference["correct"].tolist(), name


EPISODE = [
    "QUESTION: How much detail would you like?",
    "QUESTION: Any examples?",
    "ANSWER: Worked out: the answer is B",
]


def episode(user_model: str, judge_model: str) -> dict:
    """One gymnasium episode of text actions with the simulated user and the judge on the given models."""
    import gymnasium

    import prefdisco.env  # noqa: F401  (registers PrefDisco-v0)

    env = gymnasium.make("PrefDisco-v0", scenarios=tagged_scenarios(1), user_model=user_model, judge_model=judge_model)
    env.reset(seed=0)
    for action in EPISODE:
        _, reward, done, _, info = env.step(action)
        if done:
            return {"reward": reward, **info}
    raise AssertionError("the episode did not end")


@pytest.mark.slow
def test_an_rl_episode_runs_its_user_and_judge_over_each_wire_format(tmp_path, monkeypatch):
    """The RL episode's simulated user and judge through inspect's Gemini and Anthropic clients score the episode as
    through chat completions (the mock's replies are the same text in every format)."""
    with MockOpenAI() as mock:
        providers_env(monkeypatch, mock, tmp_path)
        port = mock.port
        chat = episode(f"openai-api/mock/u{port}", f"openai-api/mock/j{port}")
        wire = episode(f"google/gemini-2.5-flash-u{port}", f"anthropic/claude-sonnet-4-5-j{port}")
        formats = {(body["_format"], role) for role, body in mock.wire}
    assert {("gemini", "user"), ("anthropic", "judge")} <= formats
    assert wire["n_questions"] == chat["n_questions"] == 2
    assert wire["score"]["pref_align"] == pytest.approx(chat["score"]["pref_align"])
    assert wire["reward"] == pytest.approx(chat["reward"])


@pytest.mark.slow
def test_a_person_plays_the_user_of_a_model_and_judge_on_other_wire_formats(tmp_path, monkeypatch):
    """The play study (a person in the user's seat): the model under test through inspect's Anthropic client and the
    judge through its Gemini client. The model asks its two questions, waits for the person, answers, and the
    dialogue is scored; its thinking reaches neither the page's turns nor the judge."""
    import asyncio

    from inspect_ai.model import get_model

    from play_world import play_scenario
    from prefdisco.annotate.play_service import prepare_play
    from prefdisco.annotate.play_session import PlaySettings, PlayStudy
    from prefdisco.annotate.play_store import PlayStore
    from test_annotate_bench import write_bench

    with MockOpenAI(MockConfig(thinking=THOUGHT)) as mock:
        providers_env(monkeypatch, mock, tmp_path)
        model, judge = f"anthropic/claude-sonnet-4-5-p{mock.port}", f"google/gemini-2.5-flash-p{mock.port}"
        db = tmp_path / "play.sqlite"
        prepare_play(write_bench(tmp_path / "bench", [play_scenario()]), db, model, judge, PlaySettings())
        store = PlayStore(db)
        play = PlayStudy(store, get_model(model), get_model(judge), PlaySettings.from_meta(store.play_meta()))

        async def person() -> object:
            view = await play.view("alice", 1)
            for reply in ("Step by step, please.", "One worked example."):
                assert view.pending and view.pending.endswith("?"), view
                view = await play.reply("alice", 1, reply)
            return view

        end = asyncio.run(person())
        stats, wire = mock.stats(), list(mock.wire)
    assert end.done  # type: ignore[attr-defined]
    stored = PlayStore(db).dialogue("alice", 1)
    assert stored is not None and stored.status == "scored" and stored.score is not None
    assert stored.score.value["n_questions"] == 2 and stored.score.value["pref_align"] is not None
    assert all(THOUGHT not in t.content for t in stored.state.turns)  # the page shows visible text only
    assert stats["reasoning_leaks"] == 0
    assert {(body["_format"], role) for role, body in wire} >= {("anthropic", "assistant"), ("gemini", "judge")}
