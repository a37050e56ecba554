"""The simulator audit: did the simulated user reveal what it was not asked, or make an error that biases the run?

tau2-bench found that up to 30 % of agent failures came from the user simulator, so ours must be checkable.
After a dialogue with at least one question, one grader call reads the task, the question/reply turns and the
profile, and marks per turn and attribute whether the question asked about it and whether the reply revealed it,
plus four error flags per turn (the errors and their severities: docs/evaluation.md, "Simulator audit"). The reply
is a pydantic model built per dialogue (``audit_reply_model``) with turn keys ``t<i>``, each holding
``asked``/``revealed`` objects of boolean flags ``a<j>`` and the four error booleans; every key is required, so
even a tiny grammar-constrained model returns a complete, bounded answer. The call goes through
``structured.generate_structured`` (an invalid reply is re-asked with a one-line reason; every attempt cached).

``revealed_unasked`` is not asked for: it is read off the flags (revealed and not asked), which is exactly a
*leak*, so it can never disagree with ``leaked_turns``. A critical error changes what the assistant can achieve
(a user who hands over the answer helps it; one who states wrong preferences steers it away from the rubric);
a minor one only makes the dialogue easier or odder. An audit still invalid after the retries is recorded as
``audit_valid = False`` and left out of every rate, never counted as "no leak" or "no error".

A passive user should leak rarely; the cooperative user volunteers one preference per turn by design, so its
leak rate is expected to be high — the audit measures the simulator, it does not judge the assistant.
"""

from __future__ import annotations

from functools import cache as memoize
from typing import Any

from inspect_ai.model import CachePolicy, Model
from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model

from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile, Problem
from prefdisco.scoring.grader_config import grader_config
from prefdisco.structured import StructuredOutputError, generate_structured

AUDIT_RETRIES = 1

ASKED_ERRORS: tuple[str, ...] = ("hallucinated", "contradicted", "helped_task", "broke_character")
"""The error flags the grader answers per turn (``revealed_unasked`` is derived)."""
ERROR_SEVERITY: dict[str, str] = {
    "helped_task": "critical_helped",
    "contradicted": "critical_hindered",
    "hallucinated": "critical_hindered",
    "revealed_unasked": "minor",
    "broke_character": "minor",
}
"""Each error's severity (docs/evaluation.md's table), in the order errors are listed per turn."""
SEVERITIES: tuple[str, ...] = ("critical_helped", "critical_hindered", "minor")
CRITICAL: frozenset[str] = frozenset({"critical_helped", "critical_hindered"})


class UserAudit(BaseModel):
    user_turns: int = Field(ge=0)
    leaked_turns: int = Field(ge=0)
    leaked_attributes: list[list[str]] = Field(default_factory=list, description="per turn")
    asked_attributes: list[list[str]] = Field(default_factory=list, description="per turn")
    revealed_attributes: list[list[str]] = Field(default_factory=list, description="per turn")
    errors: list[list[str]] = Field(default_factory=list, description="per turn, in ERROR_SEVERITY order")
    severities: list[list[str]] = Field(default_factory=list, description="per turn, in SEVERITIES order")
    critical_turns: int = Field(default=0, ge=0, description="turns with a critical_* severity")
    audit_valid: bool = True
    error: str | None = None


def _exchanges(turns: list[dict[str, Any]]) -> list[tuple[str, str]]:
    pairs = []
    question = None
    for turn in turns:
        if turn["kind"] == "question":
            question = turn["content"]
        elif turn["kind"] == "reply" and question is not None:
            pairs.append((question, turn["content"]))
            question = None
    return pairs


def _keys(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(1, n + 1)]


_CLOSED = ConfigDict(json_schema_extra={"additionalProperties": False})
"""Nested objects are sent closed (no other keys), as the top level is; extra keys in a reply are ignored."""


@memoize
def audit_reply_model(n_attributes: int, n_turns: int) -> type[BaseModel]:
    """Per turn ``t<i>``: asked / revealed booleans per attribute ``a<j>`` and the ``ASKED_ERRORS`` booleans
    (bounded, unlike free lists)."""
    flag_fields: dict[str, Any] = {a: (StrictBool, ...) for a in _keys("a", n_attributes)}
    flags = create_model("AttributeFlags", __config__=_CLOSED, **flag_fields)
    error_fields: dict[str, Any] = {e: (StrictBool, ...) for e in ASKED_ERRORS}
    turn = create_model("TurnAudit", __config__=_CLOSED, asked=(flags, ...), revealed=(flags, ...), **error_fields)
    turn_fields: dict[str, Any] = {t: (turn, ...) for t in _keys("t", n_turns)}
    return create_model("UserAuditReply", **turn_fields)


def _named(flags: dict[str, bool], names: list[str]) -> set[str]:
    return {name for key, name in zip(_keys("a", len(names)), names, strict=True) if flags[key]}


def turn_errors(turn: dict[str, Any], leaked: list[str]) -> list[str]:
    """A turn's errors, in ``ERROR_SEVERITY`` order: the flagged ones, and ``revealed_unasked`` when it leaked."""
    on = {e for e in ASKED_ERRORS if turn[e]} | ({"revealed_unasked"} if leaked else set())
    return [e for e in ERROR_SEVERITY if e in on]


def severities_of(errors: list[str]) -> list[str]:
    """The distinct severities of a turn's errors, in ``SEVERITIES`` order."""
    found = {ERROR_SEVERITY[e] for e in errors}
    return [s for s in SEVERITIES if s in found]


def _task_text(problem: Problem | None) -> str:
    if problem is None:
        return "(not shown)"
    answer = problem.answer.strip()
    return problem.prompt_text() + (f"\n\nIts correct answer (for your checking only): {answer}" if answer else "")


async def audit_user(
    grader: Model,
    profile: PreferenceProfile,
    turns: list[dict[str, Any]],
    retries: int = AUDIT_RETRIES,
    cache: CachePolicy | bool = False,
    problem: Problem | None = None,
) -> UserAudit | None:
    """None when there was no user turn to audit. ``problem`` lets the grader see what ``helped_task`` means."""
    pairs = _exchanges(turns)
    if not pairs:
        return None
    names = [i.attribute for i in profile.items]
    attributes = "\n".join(
        f"- a{n} — {i.attribute}: {i.description or '(no description)'}. The user wants: {i.value}"
        for n, i in enumerate(profile.items, start=1)
    )
    transcript = "\n\n".join(
        f"t{n}\nAssistant asked: {q}\nUser replied: {r}" for n, (q, r) in enumerate(pairs, start=1)
    )
    flags = ", ".join(f'"{a}": true|false' for a in _keys("a", len(names)))
    errors = ", ".join(f'"{e}": true|false' for e in ASKED_ERRORS)
    shape = ", ".join(
        f'"{t}": {{"asked": {{{flags}}}, "revealed": {{{flags}}}, {errors}}}' for t in _keys("t", len(pairs))
    )
    max_tokens = 32 + 16 * len(pairs) * (len(names) + 2 + len(ASKED_ERRORS))
    try:
        result = await generate_structured(
            grader,
            render("audit_user", task=_task_text(problem), attributes=attributes, turns=transcript, shape=shape),
            audit_reply_model(len(names), len(pairs)),
            config=grader_config(grader, max_tokens),
            retries=retries,
            name="user_audit",
            cache=cache,
        )
    except StructuredOutputError as err:
        return UserAudit(
            user_turns=len(pairs),
            leaked_turns=0,
            audit_valid=False,
            error=f"invalid audit reply after {err.attempts} attempt(s): {'; '.join(err.errors)}",
        )
    reply = result.value.model_dump()
    per_turn = [reply[t] for t in _keys("t", len(pairs))]
    parsed = [(_named(turn["asked"], names), _named(turn["revealed"], names)) for turn in per_turn]
    leaked = [sorted(revealed - asked) for asked, revealed in parsed]
    errors_per_turn = [turn_errors(turn, leak) for turn, leak in zip(per_turn, leaked, strict=True)]
    severities = [severities_of(e) for e in errors_per_turn]
    return UserAudit(
        user_turns=len(pairs),
        leaked_turns=sum(bool(x) for x in leaked),
        leaked_attributes=leaked,
        asked_attributes=[sorted(asked) for asked, _ in parsed],
        revealed_attributes=[sorted(revealed) for _, revealed in parsed],
        errors=errors_per_turn,
        severities=severities,
        critical_turns=sum(bool(CRITICAL.intersection(s)) for s in severities),
    )
