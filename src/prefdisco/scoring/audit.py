"""The simulator-leak audit: did the simulated user reveal preferences it was not asked about?

tau2-bench found that up to 30 % of agent failures came from the user simulator, so ours must be checkable.
After a dialogue with at least one question, one grader call reads the question/reply turns and the profile's
attribute names (and meanings), and marks per turn and attribute whether the question asked about it and
whether the reply revealed it: the reply is a pydantic model built per dialogue (``audit_reply_model``) with
turn keys ``t<i>`` holding ``asked``/``revealed`` objects of boolean flags ``a<j>``, every key required, so even
a tiny grammar-constrained model returns a complete, bounded answer. The call goes through
``structured.generate_structured`` (an invalid reply is re-asked with a one-line reason; every attempt cached).

A turn *leaks* when its reply reveals a preference its question did not ask about. Per sample we record the
number of user turns, of leaking turns and the leaked attributes; the run's leak rate is leaking turns / user
turns. An audit still invalid after the retries is recorded as ``audit_valid = False`` and left out of the rate,
never counted as "no leak".

A passive user should leak rarely; the cooperative user volunteers one preference per turn by design, so its
leak rate is expected to be high — the audit measures the simulator, it does not judge the assistant.
"""

from __future__ import annotations

from functools import cache as memoize
from typing import Any

from inspect_ai.model import CachePolicy, Model
from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model

from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile
from prefdisco.scoring.grader_config import grader_config
from prefdisco.structured import StructuredOutputError, generate_structured

AUDIT_RETRIES = 1


class UserAudit(BaseModel):
    user_turns: int = Field(ge=0)
    leaked_turns: int = Field(ge=0)
    leaked_attributes: list[list[str]] = Field(default_factory=list, description="per turn")
    asked_attributes: list[list[str]] = Field(default_factory=list, description="per turn")
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
    """Per turn ``t<i>``, per attribute ``a<j>``: asked / revealed booleans (bounded, unlike free lists)."""
    flag_fields: dict[str, Any] = {a: (StrictBool, ...) for a in _keys("a", n_attributes)}
    flags = create_model("AttributeFlags", __config__=_CLOSED, **flag_fields)
    turn = create_model("TurnAudit", __config__=_CLOSED, asked=(flags, ...), revealed=(flags, ...))
    turn_fields: dict[str, Any] = {t: (turn, ...) for t in _keys("t", n_turns)}
    return create_model("UserAuditReply", **turn_fields)


def _named(flags: dict[str, bool], names: list[str]) -> set[str]:
    return {name for key, name in zip(_keys("a", len(names)), names, strict=True) if flags[key]}


async def audit_user(
    grader: Model,
    profile: PreferenceProfile,
    turns: list[dict[str, Any]],
    retries: int = AUDIT_RETRIES,
    cache: CachePolicy | bool = False,
) -> UserAudit | None:
    """None when there was no user turn to audit."""
    pairs = _exchanges(turns)
    if not pairs:
        return None
    names = [i.attribute for i in profile.items]
    attributes = "\n".join(
        f"- a{n} — {i.attribute}: {i.description or '(no description)'}" for n, i in enumerate(profile.items, start=1)
    )
    transcript = "\n\n".join(
        f"t{n}\nAssistant asked: {q}\nUser replied: {r}" for n, (q, r) in enumerate(pairs, start=1)
    )
    flags = ", ".join(f'"{a}": true|false' for a in _keys("a", len(names)))
    shape = ", ".join(f'"{t}": {{"asked": {{{flags}}}, "revealed": {{{flags}}}}}' for t in _keys("t", len(pairs)))
    max_tokens = 32 + 16 * len(pairs) * (len(names) + 2)
    try:
        result = await generate_structured(
            grader,
            render("audit_user", attributes=attributes, turns=transcript, shape=shape),
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
    parsed = [(_named(reply[t]["asked"], names), _named(reply[t]["revealed"], names)) for t in _keys("t", len(pairs))]
    leaked = [sorted(revealed - asked) for asked, revealed in parsed]
    return UserAudit(
        user_turns=len(pairs),
        leaked_turns=sum(bool(x) for x in leaked),
        leaked_attributes=leaked,
        asked_attributes=[sorted(asked) for asked, _ in parsed],
    )
