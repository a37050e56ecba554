"""The targeted simulated user: a grader call maps each question to profile attributes, the user model then sees
only those; vague and off-profile questions get a fixed reply without a call; what each reply revealed is recorded
on its turn; an invalid mapping is answered as vague and recorded; a CLI run on the mock writes the new columns."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import CachePolicy
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockConfig, MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.dialogue.targeted import TargetedUser, mapping_reply_model
from prefdisco.dialogue.user import USERS
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.prompts import render
from prefdisco.results.contract import SIMULATOR_COLUMNS
from prefdisco.seeds import TrialSeeds
from prefdisco.structured import response_schema
from scripted import Call, Scripted, constant, make_scenario, replies

DEPTH, ANALOGIES, VOCABULARY = "Explanation depth", "Use of analogies", "Technical vocabulary"
VAGUE_REPLY = render("user_targeted_vague").strip()
MAPS = {  # question word -> what the scripted grader maps it to
    "deep": [DEPTH],
    "analogies": [ANALOGIES, VOCABULARY, "none"],  # "none" beside names is ignored
    "colour": ["none"],
    "else": ["vague"],
    "empty": [],
}


def mapping(call: Call, i: int) -> str:
    """A scripted grader: maps the question in a mapping prompt by keyword."""
    question = call.text.split("The assistant's question:", 1)[1].split("List the name", 1)[0].lower()
    about = next((v for k, v in MAPS.items() if k in question), ["vague"])
    return json.dumps({"about": about})


def ask(user: TargetedUser, *questions: str) -> list[Any]:
    async def run() -> list[Any]:
        return [await user.reply(q) for q in questions]

    return asyncio.run(run())


def test_the_reply_model_is_one_list_of_the_profiles_names_plus_none_and_vague():
    model = mapping_reply_model((DEPTH, ANALOGIES, VOCABULARY))
    schema = response_schema(model).json_schema
    assert schema.required == ["about"]
    assert schema.properties["about"].items.enum == [DEPTH, ANALOGIES, VOCABULARY, "none", "vague"]
    assert model.model_json_schema()["properties"]["about"]["maxItems"] == 5
    with pytest.raises(ValueError):
        model.model_validate({"about": ["Tone"]})  # not an attribute of this profile


def test_the_user_model_sees_only_the_mapped_attributes():
    scenario = make_scenario()
    grader, user = Scripted(mapping), Scripted(constant("Step by step, please."))
    target = TargetedUser(user.model, scenario, mapper=grader.model)
    [deep, both] = ask(target, "How deep should I go?", "Do you like analogies and jargon?")

    assert len(grader.calls) == 2 and len(user.calls) == 2
    first, second = user.calls[0].system, user.calls[1].system
    assert "step by step" in first and "SECRET-JUSTIFICATION-0" in first and "what explanation depth means" in first
    for absent in ("machine analogies", "plain words", "SECRET-JUSTIFICATION-1", "SECRET-JUSTIFICATION-2"):
        assert absent not in first
    assert "A ferry carries" not in first and "0.5" not in first  # neither the problem nor the weights
    assert "Ada Okoye" in first  # the persona
    assert "machine analogies" in second and "plain words" in second and "step by step" not in second
    assert deep.revealed == (DEPTH,) and deep.mapping == "attributes" and deep.text == "Step by step, please."
    assert both.revealed == (ANALOGIES, VOCABULARY)  # profile order, "none" beside them ignored
    # the mapping prompt lists every attribute's name and meaning, never a value
    prompt = grader.calls[0].text
    assert all(f"- {n}: what {n.lower()} means" in prompt for n in (DEPTH, ANALOGIES, VOCABULARY))
    assert "step by step" not in prompt and "How deep should I go?" in prompt
    config = grader.calls[0].config
    assert config.temperature == 0.0 and config.max_tokens == 32 + 24 * 3
    assert config.response_schema is not None and config.response_schema.name == "question_mapping"
    # the second question's user call carries the first exchange
    assert [m.text for m in user.calls[1].messages[1:]] == [
        "How deep should I go?",
        "Step by step, please.",
        "Do you like analogies and jargon?",
    ]


def test_vague_and_off_profile_questions_get_the_fixed_reply_without_a_user_call():
    grader, user = Scripted(mapping), Scripted(constant("unused"))
    target = TargetedUser(user.model, make_scenario(), mapper=grader.model)
    vague, none, empty = ask(target, "Anything else?", "Favourite colour?", "An empty mapping?")
    assert user.calls == [] and len(grader.calls) == 3
    assert [r.text for r in (vague, none, empty)] == [VAGUE_REPLY] * 3
    assert VAGUE_REPLY == "Hmm, I don't have anything particular in mind there. Whatever you think works."
    assert [(r.revealed, r.mapping, r.output) for r in (vague, none, empty)] == [
        ((), "vague", None),
        ((), "none", None),
        ((), "none", None),
    ]


def test_an_invalid_mapping_is_answered_as_vague_and_recorded():
    grader, user = Scripted(replies("not json", '{"about": ["Tone"]}')), Scripted(constant("unused"))
    target = TargetedUser(user.model, make_scenario(), mapper=grader.model)
    [reply] = ask(target, "How deep?")
    assert len(grader.calls) == 2  # the call and one re-ask
    assert user.calls == []
    assert reply.text == VAGUE_REPLY and reply.revealed == () and reply.mapping == "invalid"
    [record] = target.mappings
    assert record.kind == "invalid" and "after 2 attempt(s)" in (record.error or "")


def test_both_calls_go_through_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    cache = CachePolicy(expiry=None, scopes={"run": "r", "scenario": "s1", "condition": "discovery", "role": "user"})
    grader, user = Scripted(mapping), Scripted(constant("Step by step."))
    for _ in range(2):
        ask(TargetedUser(user.model, make_scenario(), cache, mapper=grader.model), "How deep?")
    assert len(grader.calls) == 1 and len(user.calls) == 1  # the second user replayed both


def test_the_run_records_its_templates():
    assert USERS["targeted"] is TargetedUser
    config = RunConfig(["mockllm/model"], "mockllm/model", "mockllm/model", Path("run"), user_type="targeted")
    names = config.prompt_templates()
    assert {"user_targeted", "user_targeted_map", "user_targeted_vague"} <= set(names)


def test_in_a_sample_the_mapper_is_the_seeded_grader_and_turns_record_what_was_revealed(tmp_path):
    assistant = Scripted(replies("QUESTION: How deep?", "QUESTION: Anything else?", "ANSWER: 3 trips"))
    user = Scripted(constant("Step by step."))

    def grade(call: Call, i: int) -> str:
        if "The assistant's question:" in call.text:
            return mapping(call, i)
        return '{"score": 4}'

    grader = Scripted(grade)
    task = build_task([make_scenario()], RunConfig(user_type="targeted", audit=False), "discovery")
    [log] = inspect_eval(
        task,
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    sample = log.samples[0]
    turns = sample.scores["prefdisco_scorer"].metadata["turns"]
    assert [(t["kind"], t["revealed"], t["mapping"]) for t in turns] == [
        ("question", None, None),
        ("reply", [DEPTH], "attributes"),
        ("question", None, None),
        ("reply", [], "vague"),
        ("answer", None, None),
    ]
    assert turns[3]["content"] == VAGUE_REPLY and len(user.calls) == 1
    mapping_calls = [c for c in grader.calls if "The assistant's question:" in c.text]
    assert len(mapping_calls) == 2
    assert {c.config.seed for c in mapping_calls} == {sample.store_as(TrialSeeds).grader}


# --- a CLI run against the fault-injecting mock ------------------------------------------------------------------


def mock_reply(messages: list[dict[str, Any]], schema: dict[str, Any], h: int) -> Any:
    """Question 1 maps to the profile's first attribute, later ones to vague; the audit flags only turn 1's
    ``helped_task``; anything else gets the mock's default instance."""
    text = "\n".join(str(m.get("content")) for m in messages)
    props = schema.get("properties", {})
    if "about" in props:
        number = int(re.search(r"\(question (\d+)\)", text).group(1))
        return {"about": [props["about"]["items"]["enum"][0] if number == 1 else "vague"]}
    if "t1" in props:
        return {
            t: {
                "asked": dict.fromkeys(spec["properties"]["asked"]["properties"], False),
                "revealed": dict.fromkeys(spec["properties"]["revealed"]["properties"], False),
                "hallucinated": False,
                "contradicted": False,
                "helped_task": t == "t1",
                "broke_character": False,
            }
            for t, spec in props.items()
        }
    return None


def test_a_cli_run_with_the_targeted_user_writes_the_simulator_columns(tmp_path, monkeypatch):
    cli._register()
    scenarios = tagged_scenarios(3)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI(MockConfig(questions=2), structured=mock_reply) as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
        monkeypatch.setenv("INSPECT_DISPLAY", "none")
        model = f"openai-api/mock/m{mock.port}"
        args = ["eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "run"), "--display", "none"]
        result = CliRunner().invoke(cli.app, [*args, "--user-type", "targeted", "--modes", "baseline,discovery"])
    assert result.exit_code == 0, result.output

    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert set(SIMULATOR_COLUMNS) <= set(results.columns)
    assert (results["failed"] == 0).all()
    baseline = results[results["mode"] == "baseline"]
    assert baseline[list(SIMULATOR_COLUMNS)].isna().all().all()  # no dialogue, nothing measured
    weights = {s.id: s.profile.items[0].weight for s in scenarios}
    discovery = results[results["mode"] == "discovery"].set_index("scenario_id")
    assert len(discovery) == 3 and (discovery["n_questions"] == 2).all()
    for sid, row in discovery.iterrows():
        # question 1 revealed the first attribute, question 2 was vague
        assert row["elicited_weight"] == pytest.approx(weights[sid])
        assert (row["elicited_count"], row["question_hit_rate"], row["volunteered_count"]) == (1, 0.5, 0)
        assert row["first_hit_turn"] == 1 and row["user_critical_errors"] == 1
    transcripts = [json.loads(line) for line in (tmp_path / "run" / "transcripts.jsonl").read_text().splitlines()]
    replies_ = [t for row in transcripts if row["mode"] == "discovery" for t in row["turns"] if t["kind"] == "reply"]
    assert [t["mapping"] for t in replies_] == ["attributes", "vague"] * 3
    assert all(math.isfinite(w) for w in discovery["elicited_weight"])
    assert json.loads((tmp_path / "run" / "run.json").read_text())["user_type"] == "targeted"
