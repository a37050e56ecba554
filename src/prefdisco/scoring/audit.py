"""The simulator-leak audit: did the simulated user reveal preferences it was not asked about?

tau2-bench found that up to 30 % of agent failures came from the user simulator, so ours must be checkable.
After a dialogue with at least one question, one grader call reads the question/reply turns and the profile's
attribute names (and meanings), and marks per turn and attribute whether the question asked about it and
whether the reply revealed it (true/false flags under a schema with every key required, so even a tiny
grammar-constrained model returns a complete, bounded answer). A turn *leaks* when its reply reveals a preference its
question did not ask about. Per sample we record the number of user turns, of leaking turns and the leaked
attributes; the run's leak rate is leaking turns / user turns. An unparseable audit is recorded as
``audit_valid = False`` and left out of the rate, never counted as "no leak".

A passive user should leak rarely; the cooperative user volunteers one preference per turn by design, so its
leak rate is expected to be high — the audit measures the simulator, it does not judge the assistant.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ResponseSchema
from inspect_ai.util import JSONSchema
from pydantic import BaseModel, Field

from prefdisco.prompts import render
from prefdisco.schema import PreferenceProfile

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


def audit_schema(n_attributes: int, n_turns: int) -> ResponseSchema:
    """Per turn ``t<i>``, per attribute ``a<j>``: asked / revealed booleans (bounded, unlike free lists)."""
    flags = JSONSchema(
        type="object",
        properties={a: JSONSchema(type="boolean") for a in _keys("a", n_attributes)},
        required=_keys("a", n_attributes),
        additionalProperties=False,
    )
    turn = JSONSchema(
        type="object",
        properties={"asked": flags, "revealed": flags},
        required=["asked", "revealed"],
        additionalProperties=False,
    )
    return ResponseSchema(
        name="user_audit",
        json_schema=JSONSchema(
            type="object",
            properties={t: turn for t in _keys("t", n_turns)},
            required=_keys("t", n_turns),
            additionalProperties=False,
        ),
    )


def parse_audit(text: str, names: list[str], n_turns: int) -> list[tuple[set[str], set[str]]] | None:
    """(asked, revealed) attribute names per turn, or None unless every turn and flag is present."""
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 and end > start else None
    except (json.JSONDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    keys = _keys("a", len(names))
    parsed = []
    for turn_key in _keys("t", n_turns):
        entry = data.get(turn_key)
        if not isinstance(entry, dict):
            return None
        sets = []
        for part in ("asked", "revealed"):
            flags = entry.get(part)
            if not isinstance(flags, dict) or not all(isinstance(flags.get(k), bool) for k in keys):
                return None
            sets.append({name for key, name in zip(keys, names, strict=True) if flags[key]})
        parsed.append((sets[0], sets[1]))
    return parsed


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
    prompt = render("audit_user", attributes=attributes, turns=transcript, shape=shape)
    base = grader.config
    config = GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=32 + 16 * len(pairs) * (len(names) + 2) if base.max_tokens is None else None,
        response_schema=audit_schema(len(names), len(pairs)),
    )
    last = ""
    for attempt in range(retries + 1):
        output = await grader.generate(prompt, config=config, cache=cache if attempt == 0 else False)
        parsed = parse_audit(output.completion, names, len(pairs))
        if parsed is not None:
            leaked = [sorted(revealed - asked) for asked, revealed in parsed]
            return UserAudit(
                user_turns=len(pairs),
                leaked_turns=sum(bool(x) for x in leaked),
                leaked_attributes=leaked,
                asked_attributes=[sorted(asked) for asked, _ in parsed],
            )
        last = output.completion[:200]
    return UserAudit(
        user_turns=len(pairs), leaked_turns=0, audit_valid=False, error=f"unparseable audit reply: {last!r}"
    )
