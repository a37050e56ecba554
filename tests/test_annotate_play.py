"""Play the user: the study's dialogues through the one engine (resume, two participants at once, a failed call),
its pages and API, its export, and ``prefdisco report`` of the human run beside a simulated one."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import get_model
from starlette.testclient import TestClient
from typer.testing import CliRunner

from play_world import ANSWER, JUDGE, MODEL, PREF_ALIGN, QUESTIONS, TOOL_MODEL, USER, play_scenario, words
from prefdisco import cli
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.play_app import create_play_app
from prefdisco.annotate.play_export import export_play
from prefdisco.annotate.play_service import load_models, prepare_play
from prefdisco.annotate.play_session import PLAY_MAX_TOKENS, PlaySettings, PlayStudy
from prefdisco.annotate.play_store import PlayStore, StaleDialogue
from prefdisco.errors import UserError
from prefdisco.evaluation.run import run_conditions
from prefdisco.evaluation.settings.config import RunConfig
from scripted import Scripted, make_scenario
from test_annotate_bench import write_bench
from transfer_world import SCRIPTS

REPLIES = ("Very detailed, please.", "Yes, machine ones.")  # what play_world's simulated user says
cli._register()


class Counting:
    """A scripted model name whose calls are counted."""

    def __init__(self, name: str) -> None:
        self.name, self.calls = name, 0
        script = SCRIPTS[name.split("/", 1)[1]]

        def counted(messages):  # type: ignore[no-untyped-def]
            self.calls += 1
            return script(messages)

        SCRIPTS[f"counted-{id(self)}"] = counted
        self.model = get_model(f"scripted/counted-{id(self)}", memoize=False)


def study_db(tmp_path: Path, scenarios=None, **settings) -> Path:  # type: ignore[no-untyped-def]
    db = tmp_path / "play.sqlite"
    bench = write_bench(tmp_path / "bench", scenarios or [play_scenario()])
    prepare_play(bench, db, MODEL, JUDGE, PlaySettings(**settings))
    return db


def study(db: Path, model=None, judge=None) -> PlayStudy:  # type: ignore[no-untyped-def]
    store = PlayStore(db)
    return PlayStudy(
        store, model or get_model(MODEL), judge or get_model(JUDGE), PlaySettings.from_meta(store.play_meta())
    )


def test_a_dialogue_waits_for_the_person_and_is_scored_as_a_simulated_one(tmp_path):
    db = study_db(tmp_path)
    play = study(db)

    async def run():  # type: ignore[no-untyped-def]
        first = await play.view("alice", 1)
        assert (first.status, first.pending) == ("running", QUESTIONS[0])
        second = await play.reply("alice", 1, REPLIES[0])
        assert second.pending == QUESTIONS[1]
        return await play.reply("alice", 1, REPLIES[1])

    end = asyncio.run(run())
    assert end.done and end.state.final == ANSWER and end.state.stop_reason == "answered"
    stored = PlayStore(db).dialogue("alice", 1)
    assert stored is not None and stored.status == "scored" and stored.score is not None
    assert stored.score.value["pref_align"] == pytest.approx(PREF_ALIGN)
    assert stored.score.value["n_questions"] == 2 and stored.score.value["correct"] == 1
    replies = [t for t in stored.state.turns if t.kind == "reply"]
    assert [t.content for t in replies] == list(REPLIES)
    assert all(t.flags == [] and t.redrawn == [] for t in replies)  # screened, never redrawn
    assert {c for _, c in PlayStore(db).references()} == {"baseline", "oracle"}
    # tokens (play_world: a token a word): the three answers are 6 + 5 + 7 words; the model reads the opening (W0
    # words) three times, the first question and reply (6 + 3) twice, the second (5 + 3) once
    opening = sum(words(m.text) for m in stored.state.messages[:2])
    assert stored.state.messages[2].text == f"QUESTION: {QUESTIONS[0]}"  # the opening is two messages
    assert (stored.usage.input_tokens, stored.usage.output_tokens) == (3 * opening + 2 * 9 + 8, 18)
    assert stored.usage.grader_input_tokens > 0 and stored.usage.grader_output_tokens > 0


def test_two_participants_interleaved_never_share_or_lose_state(tmp_path):
    db = study_db(tmp_path)
    play = study(db)

    async def run():  # type: ignore[no-untyped-def]
        await asyncio.gather(play.view("alice", 1), play.view("bob", 1))
        await asyncio.gather(play.reply("alice", 1, "alice-1"), play.reply("bob", 1, "bob-1"))
        await play.reply("bob", 1, "bob-2")  # bob finishes first, alice is still mid-dialogue
        middle = PlayStore(db).dialogue("alice", 1)
        assert middle is not None and middle.state.pending is not None and middle.status == "running"
        await play.reply("alice", 1, "alice-2")

    asyncio.run(run())
    store = PlayStore(db)
    for name in ("alice", "bob"):
        stored = store.dialogue(name, 1)
        assert stored is not None and stored.status == "scored"
        assert [t.content for t in stored.state.turns if t.kind == "reply"] == [f"{name}-1", f"{name}-2"]
    people = store.participants()
    assert (people["alice"].number, people["bob"].number) == (1, 2)
    assert people["alice"].pseudonym != people["bob"].pseudonym and "alice" not in people["alice"].pseudonym


def test_a_participant_resumes_exactly_after_the_server_restarts(tmp_path):
    db = study_db(tmp_path)
    model = Counting(MODEL)
    asyncio.run(study(db, model.model).view("alice", 1))
    asyncio.run(study(db, model.model).reply("alice", 1, REPLIES[0]))
    assert model.calls == 2
    again = asyncio.run(study(db, model.model).view("alice", 1))  # a new server process, a reload
    assert again.pending == QUESTIONS[1] and model.calls == 2  # nothing asked again, nothing lost
    assert [t.content for t in again.state.turns] == [QUESTIONS[0], REPLIES[0], QUESTIONS[1]]


def test_a_write_from_a_stale_copy_is_refused(tmp_path):
    db = study_db(tmp_path)
    asyncio.run(study(db).view("alice", 1))
    store = PlayStore(db)
    stored = store.dialogue("alice", 1)
    assert stored is not None
    store.save("alice", 1, stored.state, stored.version)
    with pytest.raises(StaleDialogue):
        store.save("alice", 1, stored.state, stored.version)


def test_a_failed_model_call_is_kept_and_tried_again(tmp_path):
    db = study_db(tmp_path)
    failing = Scripted(lambda call, i: (_ for _ in ()).throw(RuntimeError("provider down")))
    down = asyncio.run(study(db, failing.model).view("alice", 1))
    assert down.status == "error" and down.error == "provider down"
    up = asyncio.run(study(db).view("alice", 1))
    assert up.status == "running" and up.pending == QUESTIONS[0]


def test_a_judging_that_fails_half_way_keeps_the_tokens_it_spent(tmp_path):
    db = study_db(tmp_path)
    spent: list[tuple[int, int]] = []  # the judge's calls that finished before the failure: (input, output)
    failed = []

    def judge_once_down(messages):  # type: ignore[no-untyped-def]
        if "checking a conversation" in "\n".join(m.text for m in messages) and not failed:
            failed.append(True)
            raise RuntimeError("judge down")  # the audit, after the rubric's calls
        reply = SCRIPTS["play-judge"](messages)
        spent.append((reply.usage.input_tokens, reply.usage.output_tokens))
        return reply

    SCRIPTS["play-judge-once-down"] = judge_once_down
    flaky = get_model("scripted/play-judge-once-down", memoize=False)

    async def run(name: str, judge):  # type: ignore[no-untyped-def]
        play = study(db, judge=judge)
        await play.view(name, 1)
        await play.reply(name, 1, REPLIES[0])
        return await play.reply(name, 1, REPLIES[1])

    down = asyncio.run(run("alice", flaky))
    assert down.status == "error" and "judge down" in (down.error or "")
    before = list(spent)
    assert before  # the rubric's calls finished before the audit failed
    stored = PlayStore(db).dialogue("alice", 1)
    assert stored is not None and stored.usage.grader_input_tokens == sum(n for n, _ in before)
    again = asyncio.run(study(db, judge=flaky).view("alice", 1))  # the next visit judges it again, whole
    assert again.done
    asyncio.run(run("bob", get_model(JUDGE)))  # the same dialogue judged once, cleanly
    store = PlayStore(db)
    alice, bob = store.dialogue("alice", 1), store.dialogue("bob", 1)
    assert alice is not None and bob is not None
    assert alice.usage.grader_input_tokens == bob.usage.grader_input_tokens + sum(n for n, _ in before)
    assert alice.usage.grader_output_tokens == bob.usage.grader_output_tokens + sum(n for _, n in before)
    assert (alice.usage.input_tokens, alice.usage.output_tokens) == (bob.usage.input_tokens, bob.usage.output_tokens)


def test_the_tool_protocol_is_played_as_prefdisco_eval_plays_it(tmp_path):
    """--protocol tools: the model asks through ask_user calls, the person's reply is the call's result (a tool
    message with the call's id), and the dialogue scores and costs what `prefdisco eval --protocol tools` gives for
    a simulated user with the same replies."""
    db = tmp_path / "play.sqlite"
    bench = write_bench(tmp_path / "bench", [play_scenario()])
    prepare_play(bench, db, TOOL_MODEL, JUDGE, PlaySettings(ask="tools"))
    store = PlayStore(db)
    play = PlayStudy(store, get_model(TOOL_MODEL), get_model(JUDGE), PlaySettings.from_meta(store.play_meta()))
    assert play.settings.ask == "tools" and play.settings.rules().ask == "tools"

    async def run():  # type: ignore[no-untyped-def]
        first = await play.view("alice", 1)
        assert first.pending == QUESTIONS[0]
        calls = first.state.messages[-1].tool_calls
        assert calls is not None and [c.id for c in calls] == ["call-1"]
        await play.reply("alice", 1, REPLIES[0])
        return await play.reply("alice", 1, REPLIES[1])

    end = asyncio.run(run())
    assert end.done and end.state.final == ANSWER and end.state.asked == 2
    results = [m for m in end.state.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.text.split("\n")[0]) for m in results] == [
        ("call-1", REPLIES[0]),
        ("call-2", REPLIES[1]),
    ]
    human = tmp_path / "human"
    export_play(db, human)
    assert json.loads((human / "protocol.json").read_text())["settings"]["ask"] == "tools"

    config = RunConfig(
        models=[TOOL_MODEL], user_model=USER, grader_model=JUDGE, log_dir=tmp_path / "sim", ask="tools",
        modes=["baseline", "discovery", "oracle"], display="none",
    )  # fmt: skip
    config.validate()
    run_conditions([play_scenario()], config)
    mine = pd.read_csv(human / "results.csv").set_index("mode")
    theirs = pd.read_csv(tmp_path / "sim" / "results.csv").set_index("mode")
    columns = ["pref_align", "correct", "n_questions", "input_tokens", "output_tokens", "grader_input_tokens"]
    for mode in ("baseline", "discovery", "oracle"):
        assert [mine.loc[mode, c] for c in columns] == pytest.approx([theirs.loc[mode, c] for c in columns]), mode
    assert mine.loc["discovery", "pref_align"] == pytest.approx(PREF_ALIGN)


def test_the_paper_preset_is_played_with_its_prompts_and_temperatures(tmp_path):
    """--preset paper: the paper's prompts, its ask-again rule (the early answer after two questions brings the
    final-answer instruction) and its fixed temperatures (the model 0.7, the judge 0.1) — the dialogue prefdisco
    eval --preset paper plays with a simulated user giving the same replies, scored alike."""
    from prefdisco.annotate.play_service import load_models
    from prefdisco.evaluation.settings.preset_rules import preset_settings

    heat: dict[str, set[float | None]] = {"model": set(), "judge": set()}

    def hot(role: str, name: str):  # type: ignore[no-untyped-def]
        def script(messages, config):  # type: ignore[no-untyped-def]
            heat[role].add(config.temperature)
            return SCRIPTS[name](messages)

        return script

    SCRIPTS["paper-assistant"], SCRIPTS["paper-judge"] = hot("model", "play-assistant"), hot("judge", "play-judge")
    model, judge = "scripted/paper-assistant", "scripted/paper-judge"
    db = tmp_path / "play.sqlite"
    bench = write_bench(tmp_path / "bench", [play_scenario()])
    settings = PlaySettings(preset="paper")
    prepare_play(bench, db, model, judge, settings)
    store = PlayStore(db)
    play = PlayStudy(store, *load_models(model, judge, settings), PlaySettings.from_meta(store.play_meta()))

    async def run():  # type: ignore[no-untyped-def]
        await play.view("alice", 1)
        await play.reply("alice", 1, REPLIES[0])
        return await play.reply("alice", 1, REPLIES[1])

    end = asyncio.run(run())
    assert end.done and end.state.asked == 2 and end.state.stop_reason == "answered"
    assert "assistant_discovery_paper" in play.settings.rules().style.discovery
    assert heat == {"model": {0.7}, "judge": {0.1}}
    texts = [m.text for m in end.state.messages]
    assert sum(t.startswith("ANSWER:") for t in texts) == 2  # asked again after the early answer
    human = tmp_path / "human"
    export_play(db, human)
    record = json.loads((human / "protocol.json").read_text())
    assert record["settings"]["preset"] == "paper" and record["settings"]["grader_temperature"] == 0.1

    heat["model"].clear()
    heat["judge"].clear()
    config = RunConfig(
        **preset_settings("paper", {}), models=[model], user_model=USER, grader_model=judge,
        log_dir=tmp_path / "sim", modes=["baseline", "discovery", "oracle"], display="none",
    )  # fmt: skip
    config.validate()
    run_conditions([play_scenario()], config)
    assert heat == {"model": {0.7}, "judge": {0.1}}  # eval sends the same temperatures
    mine = pd.read_csv(human / "results.csv").set_index("mode")
    theirs = pd.read_csv(tmp_path / "sim" / "results.csv").set_index("mode")
    columns = ["pref_align", "correct", "n_questions", "input_tokens", "output_tokens"]
    for mode in ("baseline", "discovery", "oracle"):
        assert [mine.loc[mode, c] for c in columns] == pytest.approx([theirs.loc[mode, c] for c in columns]), mode


def test_fixed_k_asks_exactly_k(tmp_path):
    db = study_db(tmp_path, mode="fixed_k", k=1)
    play = study(db)
    first = asyncio.run(play.view("alice", 1))
    assert first.state.rules.forced and first.state.rules.condition == "fixed_k1"
    end = asyncio.run(play.reply("alice", 1, "detailed"))
    assert end.done and end.state.asked == 1 and end.state.stop_reason == "budget"


# -- the pages and the API ------------------------------------------------------------------------------------


def logged_in(app, name: str) -> TestClient:  # type: ignore[no-untyped-def]
    client = TestClient(app)
    response = client.post("/login", data={"name": name}, follow_redirects=False)
    assert response.status_code == 303
    return client


def test_the_page_shows_the_persona_the_profile_and_the_question_and_takes_a_reply(tmp_path):
    db = study_db(tmp_path)
    app = create_play_app(db, get_model(MODEL), get_model(JUDGE), Tokens())
    assert TestClient(app).post("/api/play", json={"position": 1, "reply": "x"}).status_code == 401
    client = logged_in(app, "alice")
    assert client.get("/play", follow_redirects=False).headers["location"] == "/play/1"
    page = client.get("/play/1").text
    scenario = play_scenario()
    assert scenario.persona.name in page and scenario.persona.summary in page
    for item in scenario.profile.items:
        assert item.value in page and item.justification in page
    assert QUESTIONS[0] in page and 'id="reply-form"' in page
    assert "RUBRIC" not in page and MODEL not in page and JUDGE not in page  # blind: no rubric, no model
    assert client.post("/api/play", json={"position": 1, "reply": ""}).status_code == 422
    answer = client.post("/api/play", json={"position": 1, "reply": REPLIES[0]})
    assert answer.status_code == 200 and answer.json()["next"] == "/play/1"
    assert QUESTIONS[1] in client.get("/play/1").text
    form = client.post("/play/1", data={"reply": REPLIES[1]}, follow_redirects=False)  # the no-script fallback
    assert form.status_code == 303
    done = client.get("/play/1").text
    assert ANSWER in done and 'id="finished"' in done and 'id="reply-form"' not in done
    late = client.post("/api/play", json={"position": 1, "reply": "more"})
    assert late.status_code == 409
    assert "all-done" in client.get("/overview").text


SEEN_MAX_TOKENS: list[int | None] = []


def test_a_model_that_never_asks_is_named_on_the_page_with_the_fixed_k_study_to_run_instead(tmp_path):
    """Issue 35, class 7: a model that answers at once (the embedded one does) left the participant with nothing
    to answer and no word why. The finished page says so and names the fixed-K study; under fixed-K, where the
    model must ask, the note is not shown. Every turn of the model under test is capped (PLAY_MAX_TOKENS)."""

    def at_once(messages, config):  # type: ignore[no-untyped-def]
        SEEN_MAX_TOKENS.append(config.max_tokens)
        return f"ANSWER: {ANSWER}"

    SEEN_MAX_TOKENS.clear()
    SCRIPTS["answers-at-once"] = at_once
    db = study_db(tmp_path)
    tested, judge = load_models("scripted/answers-at-once", JUDGE)  # as the server loads them
    app = create_play_app(db, tested, judge, Tokens())
    page = logged_in(app, "alice").get("/play/1").text
    assert 'id="finished"' in page and 'id="never-asked"' in page and "--mode fixed_k --k 2" in page

    assert SEEN_MAX_TOKENS and set(SEEN_MAX_TOKENS) == {PLAY_MAX_TOKENS}  # every turn of the model is capped
    (tmp_path / "fixed").mkdir()
    forced_db = study_db(tmp_path / "fixed", mode="fixed_k", k=2)
    forced = create_play_app(forced_db, get_model(MODEL), get_model(JUDGE), Tokens())
    client = logged_in(forced, "bob")
    assert QUESTIONS[0] in client.get("/play/1").text  # the first visit starts the dialogue
    for reply in REPLIES:
        assert client.post("/api/play", json={"position": 1, "reply": reply}).status_code == 200
    done = client.get("/play/1").text
    assert 'id="finished"' in done and 'id="never-asked"' not in done


# -- export and report --------------------------------------------------------------------------------------


def test_export_is_a_run_folder_report_shows_beside_a_simulated_run(tmp_path, play_runs):
    db = study_db(tmp_path)
    play = study(db)

    async def run(name: str) -> None:
        await play.view(name, 1)
        for reply in REPLIES:
            await play.reply(name, 1, reply)

    asyncio.run(run("alice"))
    asyncio.run(run("bob"))
    human = tmp_path / "human"
    done = export_play(db, human)
    assert (done.dialogues, done.references, done.participants) == (2, 2, 2)
    results = pd.read_csv(human / "results.csv")
    discovery = results[results["mode"] == "discovery"].sort_values("epoch")
    assert list(discovery["epoch"]) == [1, 2]
    people = PlayStore(db).participants()
    assert list(discovery["user_model"]) == [f"human:{people[n].pseudonym}" for n in ("alice", "bob")]
    assert set(results[results["mode"] != "discovery"]["user_model"]) == {"human"}
    assert "alice" not in (human / "results.csv").read_text() + (human / "transcripts.jsonl").read_text()
    record = json.loads((human / "protocol.json").read_text())
    assert record["settings"]["user_type"] == "human" and record["user_model"] == "human"
    assert record["id"].startswith("human-") and record["judges"] == [JUDGE]
    assert (human / "attributes.csv").is_file() and (human / "transcripts.jsonl").is_file()

    sim = play_runs()
    simulated = pd.read_csv(sim / "results.csv")
    same = simulated[simulated["mode"] == "discovery"].iloc[0]
    alice = discovery.iloc[0]
    # the same turns scored by the same judge with the same seeds: the same numbers
    for column in ("pref_align", "correct", "n_questions", "elicited_weight", "assistant_seed", "grader_seed"):
        assert alice[column] == pytest.approx(same[column]), column
    assert alice["pref_align"] == pytest.approx(PREF_ALIGN)
    # the same calls: the model's and the judge's tokens are the simulated run's; a person costs no user tokens
    tokens = ["input_tokens", "output_tokens", "grader_input_tokens", "grader_output_tokens"]
    for mode in ("baseline", "discovery", "oracle"):
        mine = results[results["mode"] == mode].iloc[0]
        theirs = simulated[simulated["mode"] == mode].iloc[0]
        assert [mine[c] for c in tokens] == [theirs[c] for c in tokens], mode
        assert mine["grader_input_tokens"] > 0 and mine["user_input_tokens"] == mine["user_output_tokens"] == 0
    assert same["user_input_tokens"] > 0  # the simulated user's
    assert results["cost_usd"].isna().all()  # scripted models have no packaged price

    book = tmp_path / "prices.json"
    book.write_text(json.dumps({MODEL: {"input": 1.0, "output": 2.0}, JUDGE: {"input": 0.5, "output": 4.0}}))
    priced = tmp_path / "priced"
    said = CliRunner().invoke(
        cli.app, ["annotate", "export-play", "--db", str(db), "--out", str(priced), "--prices", str(book)]
    )
    assert said.exit_code == 0, said.output
    costs = pd.read_csv(priced / "results.csv")
    by_hand = (
        costs["input_tokens"] * 1.0
        + costs["output_tokens"] * 2.0
        + costs["grader_input_tokens"] * 0.5
        + costs["grader_output_tokens"] * 4.0
    ) / 1_000_000
    assert costs["cost_usd"].to_numpy() == pytest.approx(by_hand.to_numpy())
    cost = json.loads((priced / "play.json").read_text())["cost"]
    played = costs[costs["mode"] == "discovery"]
    assert cost["per_dialogue"]["cost_usd"] == pytest.approx(played["cost_usd"].mean())
    assert cost["per_dialogue"]["grader_input_tokens"] == pytest.approx(played["grader_input_tokens"].mean())
    assert cost["per_reference"]["cost_usd"] == pytest.approx(costs[costs["mode"] != "discovery"]["cost_usd"].mean())
    assert "per dialogue:" in said.output and "no price" not in said.output

    runner = CliRunner()
    refused = runner.invoke(cli.app, ["report", str(human), str(sim), "--out", str(tmp_path / "r0")])
    assert refused.exit_code == 2 and "user_type" in refused.output and "--allow-mixed" in refused.output
    out = tmp_path / "report"
    shown = runner.invoke(
        cli.app, ["report", str(human), str(sim), "--out", str(out), "--allow-mixed", "--bootstrap", "200"]
    )
    assert shown.exit_code == 0, shown.output
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["models"]) == {f"{MODEL} @ human", f"{MODEL} @ sim"}
    again = runner.invoke(cli.app, ["annotate", "export-play", "--db", str(db), "--out", str(human)])
    assert again.exit_code == 2 and "--overwrite" in again.output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    runner = CliRunner()
    bench = write_bench(tmp_path / "bench", [make_scenario("play-1")])
    db = tmp_path / "p.sqlite"
    common = ["annotate", "serve-play", str(bench), "--model", MODEL, "--judge-model", JUDGE, "--db", str(db)]
    bad_mode = runner.invoke(cli.app, [*common, "--mode", "oracle"])
    assert bad_mode.exit_code == 2 and "--mode: expected one of discovery, fixed_k" in bad_mode.output
    bad_k = runner.invoke(cli.app, [*common, "--k", "9"])
    assert bad_k.exit_code == 2 and "--k: expected 0..5" in bad_k.output
    bad_protocol = runner.invoke(cli.app, [*common, "--protocol", "xml"])
    assert bad_protocol.exit_code == 2 and "--ask: expected one of text, tools, got 'xml'" in bad_protocol.output
    paper_k = runner.invoke(cli.app, [*common, "--preset", "paper", "--k", "3"])
    assert paper_k.exit_code == 2 and "--k 3 contradicts --preset paper" in paper_k.output
    paper_tools = runner.invoke(cli.app, [*common, "--preset", "paper", "--protocol", "tools"])
    assert paper_tools.exit_code == 2 and "--preset paper asks in its own text prompts" in paper_tools.output
    missing = runner.invoke(cli.app, ["annotate", "export-play", "--db", str(db), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "not found" in missing.output
    prepare_play(bench, db, MODEL, JUDGE, PlaySettings())
    empty = runner.invoke(cli.app, ["annotate", "export-play", "--db", str(db), "--out", str(tmp_path / "o")])
    assert empty.exit_code == 2 and "no dialogue" in empty.output
    (tmp_path / "prices.json").write_text('{"m": {"input": 1}}')
    export = ["annotate", "export-play", "--db", str(db), "--out", str(tmp_path / "o")]
    bad_prices = runner.invoke(cli.app, [*export, "--prices", str(tmp_path / "prices.json")])
    assert bad_prices.exit_code == 2 and "--prices" in bad_prices.output and "m: expected" in bad_prices.output
    assert not (tmp_path / "o").exists()
    other = runner.invoke(cli.app, [*common, "--judge-model", "scripted/other", "--port", str(free_port())])
    assert other.exit_code == 2 and "--judge-model" in other.output and "use a new --db" in other.output
    tools = runner.invoke(cli.app, [*common, "--protocol", "tools", "--port", str(free_port())])  # --ask's older name
    assert tools.exit_code == 2 and "started with --ask text, not tools; use a new --db" in tools.output
    # a study stored before the ask channel had its own name: its "protocol" is read as the ask channel
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET key = 'play_protocol', value = 'tools' WHERE key = 'play_ask'")
    assert "ask" not in PlayStore(db).play_meta() and PlaySettings.from_meta(PlayStore(db).play_meta()).ask == "tools"
    prepare_play(bench, db, MODEL, JUDGE, PlaySettings(ask="tools"))  # the same settings: it goes on
    with pytest.raises(UserError, match=r"started with --ask tools, not text; use a new --db"):
        prepare_play(bench, db, MODEL, JUDGE, PlaySettings())


def test_two_server_processes_on_one_database_continue_one_dialogue(tmp_path):
    db = study_db(tmp_path)
    one, two = study(db), study(db)  # two servers: separate locks, one file
    asyncio.run(one.view("alice", 1))
    asyncio.run(two.reply("alice", 1, REPLIES[0]))
    end = asyncio.run(one.reply("alice", 1, REPLIES[1]))
    assert end.done and [t.content for t in end.state.turns if t.kind == "reply"] == list(REPLIES)


def test_a_step_another_process_stored_first_shows_the_stored_dialogue(tmp_path, monkeypatch):
    db = study_db(tmp_path)
    play = study(db)
    asyncio.run(play.view("alice", 1))
    real_save = PlayStore.save

    def raced(self, participant, position, state, version, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_save(self, participant, position, state, version, *args, **kwargs)  # the other process's write
        return real_save(self, participant, position, state, version, *args, **kwargs)  # ours: stale

    monkeypatch.setattr(PlayStore, "save", raced)
    shown = asyncio.run(play.reply("alice", 1, REPLIES[0]))
    monkeypatch.undo()
    assert shown.status == "running"  # no error page, no lost step: the stored dialogue is shown
    stored = PlayStore(db).dialogue("alice", 1)
    assert stored is not None and [t.content for t in stored.state.turns if t.kind == "reply"] == [REPLIES[0]]
