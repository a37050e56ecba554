"""``prefdisco simfidelity``, the replay: every question a model asked a person, asked again of each simulator.

For each dialogue of the human run (a run whose user was a person — ``prefdisco annotate export-play`` — or any run
taken as the reference) with at least one question, in any condition that asks the user (``replayable``: the
plan's ``dialogue_conditions``), and for each simulator (the user type, model and temperature a
simulated run's protocol record names), the simulator answers the person's questions one by one: it is built as a
run builds its user (``dialogue/user.build_user``), for the same scenario (persona and profile), and before
question *i* its history is the *person's* exchanges 1..i-1, so each reply answers exactly what the person
answered. Each reply is screened by the hygiene checks (``dialogue/hygiene.py``).

Then the grader (``--judge-model``, default the human run's first judge) reads each party's dialogue with the simulator
audit (``scoring/audit.py``: per turn the attributes the question asked about and the reply revealed), and, on each turn
where the person and the simulator revealed an attribute in common, one call (``prompts/simfidelity_values.txt``) says
per common attribute whether they want the ``same`` thing, ``different`` things, or it is ``unclear``.

Every call is seeded (``seeds.call_seed`` of the replay's seed, the scenario, ``simfidelity`` and the trial) and
cached under the output folder's scope, so a rerun after a crash replays finished calls for free. The records (one
per simulator, dialogue and turn) are what ``simfidelity/measures.py`` measures.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache as memoize
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig, Model
from pydantic import BaseModel, create_model

from prefdisco.cache import cache_policy
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.plan import dialogue_conditions
from prefdisco.dialogue.user import build_user
from prefdisco.dialogue.user_reply import redraw
from prefdisco.errors import UserError
from prefdisco.prompts import render
from prefdisco.schema import Scenario
from prefdisco.scoring.audit import audit_user
from prefdisco.scoring.grader_config import grader_config
from prefdisco.seeds import call_seed, seed_scope, seeded_model
from prefdisco.structured import StructuredOutputError, generate_structured

CONDITION = "simfidelity"
Agreement = Literal["same", "different", "unclear"]


@dataclass(frozen=True)
class Simulator:
    """A simulated user to replay the person's questions to, as its run recorded it (``protocol.json``): its label
    (the run), user type (a preset's user is its type: ``paper_passive``), model, temperature, token and reasoning
    limits, and the redraws of a flagged reply (``--user-retry``)."""

    label: str
    user_type: str
    user_model: str
    temperature: float | None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    user_retry: int = 0

    def config(self) -> GenerateConfig:
        """The user model's settings in its run."""
        return GenerateConfig(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
        )


def exchanges(turns: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """A transcript's (question, reply) pairs, in order."""
    pairs, question = [], None
    for turn in turns:
        if turn.get("kind") == "question":
            question = str(turn.get("content", ""))
        elif turn.get("kind") == "reply" and question is not None:
            pairs.append((question, str(turn.get("content", ""))))
            question = None
    return pairs


def history_of(pairs: Sequence[tuple[str, str]]) -> list[ChatMessage]:
    """A simulated user's own view of earlier exchanges (questions in, replies out)."""
    out: list[ChatMessage] = []
    for question, reply in pairs:
        out += [ChatMessageUser(content=question), ChatMessageAssistant(content=reply)]
    return out


def as_turns(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [t for q, r in pairs for t in ({"kind": "question", "content": q}, {"kind": "reply", "content": r})]


@memoize
def values_reply_model(n: int) -> type[BaseModel]:
    fields: dict[str, Any] = {f"a{i}": (Agreement, ...) for i in range(1, n + 1)}
    return create_model(f"ValueAgreement{n}", **fields)


def scope_of(out: Path, *parts: str) -> str:
    return hashlib.sha256("|".join([str(out.resolve()), *parts]).encode()).hexdigest()[:16]


async def value_agreement(
    grader: Model, scenario: Scenario, question: str, first: str, second: str, common: Sequence[str], cache: Any
) -> dict[str, str] | None:
    """Per attribute both replies revealed: ``same``, ``different`` or ``unclear`` (None: the reply stayed invalid)."""
    items = {i.attribute: i for i in scenario.profile.items}
    attributes = "\n".join(
        f"- a{n} — {name}: {items[name].description or '(no description)'}" for n, name in enumerate(common, start=1)
    )
    shape = ", ".join(f'"a{n}": "same"|"different"|"unclear"' for n in range(1, len(common) + 1))
    prompt = render(
        "simfidelity_values", question=question, first=first, second=second, attributes=attributes, shape=shape
    )
    try:
        result = await generate_structured(
            grader,
            prompt,
            values_reply_model(len(common)),
            config=grader_config(grader, 24 + 12 * len(common)),
            retries=1,
            name="value_agreement",
            cache=cache,
        )
    except StructuredOutputError:
        return None
    reply = result.value.model_dump()
    return {name: str(reply[f"a{n}"]) for n, name in enumerate(common, start=1)}


async def replay_dialogue(
    transcript: dict[str, Any],
    scenario: Scenario,
    simulators: Sequence[tuple[Simulator, Model]],
    grader: Model,
    out: Path,
    seed: int,
) -> list[dict[str, Any]]:
    """The records of one human dialogue: each turn, for each simulator."""
    pairs = exchanges(transcript.get("turns") or [])
    if not pairs:
        return []
    sid, epoch = scenario.id, int(transcript.get("epoch") or 1)
    dialogue = f"{transcript.get('model')}|{transcript.get('mode')}|{transcript.get('fixed_k')}|{epoch}"
    audits = cache_policy(scope_of(out, "audit", dialogue), sid, CONDITION, "grader")
    person_audit = await audit_user(grader, scenario.profile, as_turns(pairs), cache=audits, problem=scenario.problem)
    screen = Screen(scenario)
    records: list[dict[str, Any]] = []
    for simulator, model in simulators:
        cache = cache_policy(scope_of(out, simulator.label, dialogue), sid, CONDITION, "user")
        seeded = seeded_model(model, call_seed(seed_scope(seed), sid, CONDITION, epoch, "user"))
        user = build_user(simulator.user_type, seeded, scenario, cache, mapper=grader)
        replies = []
        for i, (question, _) in enumerate(pairs):
            user.history = history_of(pairs[:i])
            said = await user.reply(question)
            for attempt in range(1, simulator.user_retry + 1):  # as its run drew a flagged reply again
                if not screen.check(said).flagged:
                    break
                again = await redraw(user, question, attempt, history_of(pairs[:i]))
                if again is None:
                    break
                said = again
            replies.append((said.text, list(screen.check(said).reasons)))
        sim_pairs = [(q, text) for (q, _), (text, _) in zip(pairs, replies, strict=True)]
        sim_cache = cache_policy(scope_of(out, "audit", simulator.label, dialogue), sid, CONDITION, "grader")
        sim_audit = await audit_user(
            grader, scenario.profile, as_turns(sim_pairs), cache=sim_cache, problem=scenario.problem
        )
        for i, ((question, person), (text, flags)) in enumerate(zip(pairs, replies, strict=True)):
            record: dict[str, Any] = {
                "simulator": simulator.label,
                "user_type": simulator.user_type,
                "user_model": simulator.user_model,
                "model": transcript.get("model"),
                "task": transcript.get("task"),
                "scenario_id": sid,
                "mode": transcript.get("mode"),
                "fixed_k": transcript.get("fixed_k"),
                "epoch": epoch,
                "turn": i + 1,
                "question": question,
                "person_reply": person,
                "simulator_reply": text,
                "person_flags": list(screen.check(person).reasons),
                "simulator_flags": flags,
            }
            for party, audit in (("person", person_audit), ("simulator", sim_audit)):
                valid = audit is not None and audit.audit_valid
                record[f"{party}_asked"] = audit.asked_attributes[i] if valid and audit else None
                record[f"{party}_revealed"] = audit.revealed_attributes[i] if valid and audit else None
            common = sorted(set(record["person_revealed"] or ()) & set(record["simulator_revealed"] or ()))
            record["values"] = (
                await value_agreement(grader, scenario, question, person, text, common, sim_cache) if common else {}
            )
            records.append(record)
    return records


def replayable(transcripts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcripts to replay: those of a condition that asks the simulated user (``dialogue/plan.py``'s
    ``dialogue_conditions``, read when called) with at least one question answered."""
    asking = set(dialogue_conditions())
    return [t for t in transcripts if t.get("mode") in asking and exchanges(t.get("turns") or [])]


def load_model(name: str, config: GenerateConfig, where: str) -> Model:
    """``get_model(name)`` under ``config``, a failure (unknown provider, no key) one line naming ``where``."""
    from inspect_ai.model import get_model

    try:
        return get_model(name, config=config)
    except Exception as err:  # inspect raises plain exceptions for unknown providers and missing keys
        raise UserError(f"{where}: cannot load {name!r}: {err}") from None


def replay(
    transcripts: Sequence[dict[str, Any]],
    scenarios: dict[str, Scenario],
    simulators: Sequence[Simulator],
    grader_model: str,
    out: Path,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Replay every dialogue of ``transcripts`` (the human run's) to each simulator; the records, in order."""
    from inspect_ai._util.platform import platform_init
    from inspect_ai.util._display import init_display_type

    wanted = replayable(transcripts)
    missing = sorted({str(t.get("scenario_id")) for t in wanted} - set(scenarios))
    if missing:
        raise UserError(f"--bench: has no scenario {missing[0]!r}, which the human run's dialogues hold")
    if not wanted:
        raise UserError(
            "--human: the run has no dialogue with a question to replay (in a condition that asks the user)"
        )
    platform_init()
    init_display_type("none")
    grader = load_model(grader_model, GenerateConfig(temperature=0.0), "--judge-model")
    built = [(s, load_model(s.user_model, s.config(), f"--sim {s.label}: user_model")) for s in simulators]

    async def run_all() -> list[list[dict[str, Any]]]:
        return await asyncio.gather(
            *(replay_dialogue(t, scenarios[str(t["scenario_id"])], built, grader, out, seed) for t in wanted)
        )

    return [record for group in asyncio.run(run_all()) for record in group]
