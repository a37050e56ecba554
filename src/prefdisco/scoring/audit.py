"""The simulator-leak audit: did the simulated user reveal preferences it was not asked about?

tau2-bench found that up to 30 % of agent failures came from the user simulator, so ours must be checkable.
After a dialogue with at least one question, one grader call reads the question/reply turns and the profile's
attribute names (and meanings), and lists per turn which preferences the question asked about and which the
reply revealed (schema-constrained to those names). A turn *leaks* when its reply reveals a preference its
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


def audit_schema(names: list[str], n_turns: int) -> ResponseSchema:
    name_list = JSONSchema(type="array", items=JSONSchema(type="string", enum=names))
    turn = JSONSchema(
        type="object",
        properties={"asked": name_list, "revealed": name_list},
        required=["asked", "revealed"],
        additionalProperties=False,
    )
    return ResponseSchema(
        name="user_audit",
        json_schema=JSONSchema(
            type="object",
            properties={"turns": JSONSchema(type="array", items=turn, minItems=n_turns, maxItems=n_turns)},
            required=["turns"],
            additionalProperties=False,
        ),
    )


def parse_audit(text: str, names: set[str], n_turns: int) -> list[tuple[set[str], set[str]]] | None:
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 and end > start else None
    except (json.JSONDecodeError, ValueError):
        return None
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(turns, list) or len(turns) != n_turns:
        return None
    parsed = []
    for entry in turns:
        if not isinstance(entry, dict):
            return None
        asked, revealed = entry.get("asked"), entry.get("revealed")
        if not isinstance(asked, list) or not isinstance(revealed, list):
            return None
        parsed.append(({a for a in asked if a in names}, {r for r in revealed if r in names}))
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
    attributes = "\n".join(f"- {i.attribute}: {i.description or '(no description)'}" for i in profile.items)
    transcript = "\n\n".join(
        f"Turn {n}\nAssistant asked: {q}\nUser replied: {r}" for n, (q, r) in enumerate(pairs, start=1)
    )
    prompt = render("audit_user", attributes=attributes, turns=transcript)
    base = grader.config
    config = GenerateConfig(
        temperature=0.0 if base.temperature is None else None,
        max_tokens=64 + 48 * len(pairs) if base.max_tokens is None else None,
        response_schema=audit_schema(names, len(pairs)),
    )
    last = ""
    for attempt in range(retries + 1):
        output = await grader.generate(prompt, config=config, cache=cache if attempt == 0 else False)
        parsed = parse_audit(output.completion, set(names), len(pairs))
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
