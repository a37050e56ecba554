"""A session as an RL episode (issue 22, part 5): K problems with one person, one reward per problem, the carry arm
chosen at construction — the framework-neutral ``SessionEpisode`` and its gymnasium and verl adapters, on scripted
models (tests/scripted.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from typer.testing import CliRunner

import prefdisco.env
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.env import Episode, SessionEpisode
from prefdisco.env.gym_session import PrefDiscoSessionEnv
from prefdisco.env.verl_session import SESSION_INTERACTION_NAME, PrefDiscoSessionInteraction, session_rewards
from prefdisco.errors import UserError
from prefdisco.evaluation.sessions_run import carried_next
from prefdisco.schema import Problem
from prefdisco.sessions.model import (
    Session,
    SessionSet,
    SessionSetHeader,
    label_positions,
    read_session_set,
    write_session_set,
)
from scripted import Scripted, constant, make_scenario, replies
from test_env import TURNS, WEIGHTS, grading
from test_sessions_plan import release_file


def sessions_app():
    import prefdisco.cli as cli

    cli._register()
    return cli.app


FERRY = make_scenario("s-ferry")
CRATES = make_scenario(
    "s-crates",
    problem=Problem(
        id="prob-2", benchmark="demo", domain="math", question="A crate holds 6 bolts. How many crates for 13 bolts?",
        choices=["2", "3", "4"], answer="B", answer_type="letter",
    ),
)  # fmt: skip
# Position 1 plays test_env's dialogue: two questions, PrefAlign 3.8, correct, one critical user turn:
# (3.8 - 1) / 4 + 0.5 · 1 - 0.1 · 2 - 0.25 · 1 = 0.75. Position 2 answers at once: 0.7 + 0.5 = 1.2 (no question,
# nothing to audit).
FIRST, SECOND = list(TURNS), ["ANSWER: The answer is B: 3 crates."]
REWARDS = [0.75, 1.2]
USER_REPLIES = ("Very detailed, please.", "Yes, machine ones.")


def session() -> Session:
    profiles = [{i.attribute: i.value for i in s.profile.items} for s in (FERRY, CRATES)]
    return Session(
        session_id="ada-1", persona_id="p1", scenario_ids=[FERRY.id, CRATES.id], labels=label_positions(profiles)
    )


def models() -> tuple[Scripted, Scripted]:
    return Scripted(replies(*USER_REPLIES)), Scripted(grading)


def files(tmp_path):
    bench = tmp_path / "scenarios.jsonl"
    bench.write_text("".join(s.model_dump_json() + "\n" for s in (FERRY, CRATES)))
    path = tmp_path / "sessions.jsonl"
    header = SessionSetHeader(source=str(bench), length=2, n_sessions=1)
    write_session_set(path, SessionSet(header=header, sessions=[session()]))
    return bench, path


def play(episode: SessionEpisode, *turns: str):
    episode.reset()
    return [episode.step(t) for t in turns]


# -- the framework-neutral episode ----------------------------------------------------------------------------


def test_position_2_carries_position_1s_dialogue_in_the_transcript_arm():
    user, grader = models()
    chain = [FERRY, CRATES]
    episode = SessionEpisode(session(), chain, user.model, grader.model, arm="carry_transcript", reward=WEIGHTS)
    steps = play(episode, *FIRST)
    ended = steps[-1]
    assert (ended.done, ended.info["problem_done"], ended.info["next"], ended.info["position"]) == (
        False, True, "opening", 1,
    )  # fmt: skip
    system, problem = ended.info["messages"]
    assert problem == {"role": "user", "content": CRATES.problem.prompt_text()}
    earlier = (
        "Earlier task 1:\n"
        "A ferry carries 12 cars per trip. How many trips for 30 cars?\n\nA. 2\nB. 3\nC. 4\nD. 5\n\n"
        "You asked: How detailed should I be?\n"
        "They replied: Very detailed, please.\n"
        "You asked: Do you like analogies?\n"
        "They replied: Yes, machine ones.\n"
        "Your response: The answer is B: 3 trips."
    )
    assert system["role"] == "system" and system["content"].endswith("\n\n" + earlier)
    assert "at most 5 questions" in system["content"]  # discovery's own prompt comes first
    assert "SECRET-THOUGHT" not in system["content"]  # the carried dialogue is the turns as read
    assert ended.observation == system["content"] + "\n\n" + problem["content"]
    # what prefdisco eval carries into position 2 from the same finished dialogue
    first = episode.positions[0].dialogue.state
    record = DialogueRecord(store=first.record().store)
    done = {("m", "carry_transcript", FERRY.id, 1): (record, None)}
    known = {FERRY.id: FERRY, CRATES.id: CRATES}
    expected = carried_next("m", "carry_transcript", session(), 2, known, episode.positions[0].carried, done, 1)
    assert episode.carried == expected
    last = episode.step(SECOND[0])
    assert last.done and last.info["position"] == 2 and last.info["next"] is None
    assert last.info["rewards"] == pytest.approx(REWARDS) and episode.rewards == pytest.approx(REWARDS)
    with pytest.raises(RuntimeError, match="call reset"):
        episode.step("ANSWER: again")
    episode.close()


def test_the_notes_arm_asks_the_agent_for_its_notes_and_carries_them():
    user, grader = models()
    episode = SessionEpisode(session(), [FERRY, CRATES], user.model, grader.model, arm="carry_notes", reward=WEIGHTS)
    *_, ended = play(episode, *FIRST)
    assert ended.info["next"] == "notes" and ended.reward is not None
    prompt = ended.observation
    assert prompt is not None and ended.info["messages"] == [{"role": "user", "content": prompt}]
    assert "Your notes so far:\n(none yet)\n" in prompt
    assert "The task you just finished:\nA ferry carries 12 cars per trip." in prompt
    assert (
        "You asked: Do you like analogies?\nThey replied: Yes, machine ones.\nYour response: The answer is B" in prompt
    )
    assert "At most 120 words." in prompt
    assert episode.messages == [{"role": "user", "content": prompt}]

    notes = episode.step("<think>SECRET-NOTE-THOUGHT</think>Wants full detail; likes machine analogies.")
    assert (notes.info["kind"], notes.info["position"], notes.info["next"]) == ("notes", 1, "opening")
    assert notes.reward is None and not notes.done
    assert notes.info["notes"] == "Wants full detail; likes machine analogies." and episode.notes == [
        notes.info["notes"]
    ]
    system, problem = notes.info["messages"]
    assert system["content"].endswith(
        "Your notes:\n\nWants full detail; likes machine analogies.\n\nUse what your notes say about them; ask only "
        "about what you do not know yet, or what may be different for this\ntask."
    )
    assert "Earlier task" not in system["content"] and "SECRET-NOTE-THOUGHT" not in system["content"]
    assert problem["content"] == CRATES.problem.prompt_text()
    last = episode.step(SECOND[0])
    assert last.done and last.info["next"] is None  # no notes after the last problem: nothing reads them
    assert episode.rewards == pytest.approx(REWARDS)
    episode.close()


def test_the_cold_arm_carries_nothing():
    user, grader = models()
    episode = SessionEpisode(session(), [FERRY, CRATES], user.model, grader.model, arm="cold")
    *_, ended = play(episode, *FIRST)
    fresh = Episode(CRATES, user.model, grader.model).opening()
    assert ended.info["next"] == "opening" and ended.info["messages"] == fresh
    episode.close()


def test_one_reward_per_problem_equal_to_the_episodes_for_the_same_turns():
    for arm in ("cold", "carry_transcript", "carry_notes"):
        user, grader = models()
        episode = SessionEpisode(session(), [FERRY, CRATES], user.model, grader.model, arm=arm, reward=WEIGHTS)
        notes = ["Likes detail."] if arm == "carry_notes" else []
        steps = play(episode, *FIRST, *notes, *SECOND)
        problem_ends = [s for s in steps if s.info.get("problem_done")]
        assert [s.reward for s in problem_ends] == pytest.approx(REWARDS), arm
        assert [s.reward for s in steps if not s.info.get("problem_done")] == [None] * (len(steps) - 2)
        for scenario, turns, result in zip((FERRY, CRATES), (FIRST, SECOND), problem_ends, strict=True):
            alone_user, alone_grader = models()
            alone = Episode(scenario, alone_user.model, alone_grader.model, reward=WEIGHTS)
            alone.reset()
            *_, single = [alone.step(t) for t in turns]
            assert result.reward == pytest.approx(single.reward)
            assert result.info["score"] == single.info["score"] and result.info["turns"] == single.info["turns"]
            alone.close()
        episode.close()


def test_a_masked_problem_gets_no_reward_and_the_session_goes_on():
    user = Scripted(replies(*USER_REPLIES))
    grader = Scripted(lambda call, i: "no json" if "3 crates" in call.text else grading(call, i))
    episode = SessionEpisode(session(), [FERRY, CRATES], user.model, grader.model, arm="carry_transcript")
    *_, last = play(episode, *FIRST, *SECOND)
    assert last.done and last.reward is None and last.info["masked"] is True
    assert episode.rewards[0] is not None and episode.rewards[1] is None
    episode.close()


def hand_seed(scenario_id: str, condition: str, trial: int, role: str, seed: int = 7) -> int:
    text = f"prefdisco-seed-{seed}\x1f{scenario_id}\x1f{condition}\x1f{trial}\x1f{role}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") % 2**31


def test_each_positions_calls_carry_the_seeds_prefdisco_eval_sends_for_that_scenario():
    for arm, condition in (("carry_transcript", "carry_transcript"), ("cold", "discovery")):
        user, grader = models()
        episode = SessionEpisode(session(), [FERRY, CRATES], user.model, grader.model, arm=arm, seed=7, trial=2)
        play(episode, "QUESTION: Depth?", "ANSWER: B")
        judged_first = len(grader.calls)
        episode.step("QUESTION: Analogies?")
        episode.step("ANSWER: B")
        assert [c.config.seed for c in user.calls] == [
            hand_seed(FERRY.id, condition, 2, "user"),
            hand_seed(CRATES.id, condition, 2, "user"),
        ], arm
        assert judged_first > 0 and len(grader.calls) > judged_first
        assert {c.config.seed for c in grader.calls[:judged_first]} == {hand_seed(FERRY.id, condition, 2, "grader")}
        assert {c.config.seed for c in grader.calls[judged_first:]} == {hand_seed(CRATES.id, condition, 2, "grader")}
        episode.close()


def test_bad_options_are_refused_in_one_line(tmp_path):
    user, grader = models()
    chain = [FERRY, CRATES]
    with pytest.raises(UserError, match=r"^arm: expected one of cold, carry_transcript, carry_notes, got 'warm'$"):
        SessionEpisode(session(), chain, user.model, grader.model, arm="warm")
    with pytest.raises(UserError, match=r"^session options: unknown turns; expected one of ask, audit, judge, "):
        SessionEpisode(session(), chain, user.model, grader.model, arm="cold", turns=3)
    with pytest.raises(UserError, match=r"^max_questions: expected 0..5"):
        SessionEpisode(session(), chain, user.model, grader.model, arm="cold", max_questions=9)
    with pytest.raises(UserError, match=r"^session ada-1: scenario s-crates is neither in the scenarios given nor"):
        SessionEpisode(session(), [FERRY], user.model, grader.model, arm="cold")
    bench, path = files(tmp_path)
    with pytest.raises(UserError, match=r"^session_id: no session 'bob-1' in "):
        SessionEpisode.from_file(path, bench, "bob-1", user.model, grader.model, arm="cold")


# -- gymnasium ------------------------------------------------------------------------------------------------


def make_env(tmp_path, user, grader, **options) -> gymnasium.Env:
    bench, path = files(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gymnasium.make(
            "PrefDiscoSession-v0",
            sessions=str(path),
            scenarios=str(bench),
            user_model=user.model,
            judge_model=grader.model,
            **options,
        )
    assert [str(w.message) for w in caught if "gymnasium" in w.filename] == []
    return env


def test_gymnasium_rewards_each_problem_at_its_end_and_terminates_after_the_last(tmp_path):
    assert prefdisco.env.SESSION_ENV_ID == "PrefDiscoSession-v0" in gymnasium.registry
    user, grader = models()
    env = make_env(tmp_path, user, grader, arm="carry_notes", reward=WEIGHTS)
    assert isinstance(env.unwrapped, PrefDiscoSessionEnv)
    obs, info = env.reset(seed=0)
    assert (info["session_id"], info["position"], info["length"], info["trial"]) == ("ada-1", 1, 2, 1)
    assert obs == "\n\n".join(m["content"] for m in info["messages"])
    steps = [env.step(a) for a in (*FIRST, "Likes detail.", *SECOND)]
    assert [s[1] for s in steps] == pytest.approx([0.0, 0.0, 0.75, 0.0, 1.2])
    assert [s[2] for s in steps] == [False, False, False, False, True] and not any(s[3] for s in steps)
    assert [s[4]["kind"] for s in steps] == ["question", "question", "answer", "notes", "answer"]
    assert steps[-1][0] == ""
    _, info = env.reset(options={"session_id": "ada-1"})
    assert info["trial"] == 2  # the k-th episode of a session is trial k
    with pytest.raises(UserError, match=r"^reset options.session_id: no session 'bob-1' in this environment$"):
        env.reset(options={"session_id": "bob-1"})
    env.close()


def test_gymnasium_gives_a_masked_problem_masked_reward(tmp_path):
    user = Scripted(replies(*USER_REPLIES))
    grader = Scripted(lambda call, i: "no json" if "3 trips" in call.text else grading(call, i))
    env = make_env(tmp_path, user, grader, arm="cold", masked_reward=-1.0)
    env.reset(seed=0)
    steps = [env.step(a) for a in (*FIRST, *SECOND)]
    assert [s[1] for s in steps] == pytest.approx([0.0, 0.0, -1.0, 1.7])  # 1.2 + 0.5: default weights
    assert steps[2][4]["masked"] is True and steps[3][4]["masked"] is False
    env.close()


def test_gymnasiums_own_checker_passes(tmp_path):
    user, grader = Scripted(constant("Short.")), Scripted(grading)
    env = make_env(tmp_path, user, grader, arm="carry_transcript")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    assert [str(w.message) for w in caught if "gymnasium" in w.filename] == []
    env.close()


def test_gymnasium_refuses_bad_options_and_sessions_across_the_split(tmp_path):
    user, grader = models()
    with pytest.raises(UserError, match=r"^arm: expected one of cold, carry_transcript, carry_notes, got None$"):
        make_env(tmp_path, user, grader, arm=None)
    with pytest.raises(UserError, match=r"^max_questions: expected 0..5"):
        make_env(tmp_path, user, grader, arm="cold", max_questions=9)
    with pytest.raises(UserError, match=r"^trial: set by the environment, not an option"):
        make_env(tmp_path, user, grader, arm="cold", trial=3)
    # two problems, half of them train: the one session straddles the split, so no side has a session to play
    with pytest.raises(UserError, match=r"^split: no session has every problem on the train side"):
        make_env(tmp_path, user, grader, arm="cold", train_fraction=0.5, split="train")
    env = make_env(tmp_path, user, grader, arm="cold", train_fraction=0.5)  # without a side, every session plays
    env.reset(seed=0)
    [trains] = env.unwrapped.split_record["train_problems"]
    ferry_side = "train" if trains == "demo/prob-1" else "eval"
    sides = [env.step(a)[4]["split"] for a in ("ANSWER: B", "ANSWER: B")]
    assert sides == [ferry_side, {"train": "eval", "eval": "train"}[ferry_side]]  # info records each problem's side
    env.close()


def test_a_session_planned_on_the_real_release_record_plays_in_gymnasium(tmp_path):
    """The shared example record (the paper's release format) as two people with three problems each
    (test_sessions_plan.release_file), sessions by the real command, played through the real loaders."""
    release = release_file(tmp_path)
    out = tmp_path / "sessions.jsonl"
    result = CliRunner().invoke(sessions_app(), ["sessions", str(release), "--length", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    user = Scripted(constant("Short."))
    grader = Scripted(lambda call, i: json.dumps({"score": 4}))  # every criterion at 4: PrefAlign 4.0
    env = gymnasium.make(
        "PrefDiscoSession-v0", sessions=str(out), scenarios=str(release), user_model=user.model,
        judge_model=grader.model, arm="carry_transcript", reward={"w_correct": 0.0},
    )  # fmt: skip
    played = read_session_set(out).sessions[0]
    _, info = env.reset(options={"session_id": played.session_id})
    problems = [info["messages"][1]["content"]]
    steps = []
    for answer in ("ANSWER: first", "ANSWER: second", "ANSWER: third"):
        steps.append(env.step(answer))
        if not steps[-1][2]:
            problems.append(steps[-1][4]["messages"][1]["content"])
    # (4 - 1) / 4 = 0.75 per problem, correctness weighted 0
    assert [s[1] for s in steps] == pytest.approx([0.75, 0.75, 0.75]) and [s[2] for s in steps] == [False, False, True]
    assert [s[4]["scenario_id"] for s in steps] == played.scenario_ids  # the session's problems in its order
    third_system = steps[1][4]["messages"][0]["content"]
    assert f"Earlier task 1:\n{problems[0]}\n\nYour response: first" in third_system
    assert f"Earlier task 2:\n{problems[1]}\n\nYour response: second" in third_system
    env.close()


# -- verl -----------------------------------------------------------------------------------------------------


def test_the_verl_session_interaction_scores_each_problem_as_a_turn_score(tmp_path):
    bench, path = files(tmp_path)
    user, grader = models()
    config = {
        "name": SESSION_INTERACTION_NAME, "sessions": str(path), "scenarios": str(bench), "arm": "carry_notes",
        "user_model": user.model, "judge_model": grader.model, "reward": WEIGHTS.weights(),
    }  # fmt: skip
    interaction = PrefDiscoSessionInteraction(config)
    row = interaction.row("ada-1")
    kwargs = row["extra_info"]["interaction_kwargs"]
    assert kwargs == {"name": "prefdisco_sessions", "session_id": "ada-1"}

    async def rollout() -> list[tuple]:
        instance = await interaction.start_interaction("req-1", **kwargs)
        messages = list(row["prompt"])
        out = []
        for turn in (*FIRST, "Likes detail.", *SECOND):
            messages.append({"role": "assistant", "content": turn})
            out.append(await interaction.generate_response(instance, messages, **kwargs))
            messages.append({"role": "user", "content": out[-1][1]})
        out.append((await interaction.calculate_score(instance),))
        await interaction.finalize_interaction(instance)
        out.append((await interaction.calculate_score(instance),))
        return out

    *turns, (score,), (after,) = asyncio.run(rollout())
    assert turns[0][3]["opening_matches"] is True
    assert [t[0] for t in turns] == [False, False, False, False, True]
    assert [t[2] for t in turns] == [None, None, pytest.approx(0.75), None, pytest.approx(1.2)]
    assert turns[2][1].startswith("You are helping one person with a series of tasks")  # the notes prompt
    assert turns[3][3]["kind"] == "notes" and CRATES.problem.question in turns[3][1]  # then position 2's opening
    assert score == pytest.approx(1.95) and after is None
    # verl keeps the scores that are not None as turn_scores: one per problem
    kept = [t[2] for t in turns if t[2] is not None]
    assert session_rewards({"turn_scores": kept}, 2) == pytest.approx(REWARDS)
    assert session_rewards({"turn_scores": kept[:1]}, 2) is None


def test_the_verl_session_interaction_refuses_bad_config_and_unknown_sessions(tmp_path):
    bench, path = files(tmp_path)
    user, grader = models()
    base = {"sessions": str(path), "scenarios": str(bench), "user_model": user.model, "judge_model": grader.model}
    with pytest.raises(UserError, match=r"^prefdisco session interaction config: arm: Field required"):
        PrefDiscoSessionInteraction(base)
    interaction = PrefDiscoSessionInteraction({**base, "arm": "cold"})
    with pytest.raises(UserError, match=r"^interaction_kwargs.session_id: expected a session of .*, got 'nope'$"):
        asyncio.run(interaction.start_interaction("r", session_id="nope"))
