"""A scripted builder model for the build tests (mockllm ``custom_outputs``), plus the tests of the script.

``FakeBuilder`` answers every build step with valid JSON derived from the response schema that
``generate_structured`` sends (``config.response_schema``): catalogue names come from the schema's enums, so the
replies are valid by construction. Tests override one step with ``handlers`` to return invalid or scripted
replies. It counts calls per step and keeps every prompt.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from inspect_ai.model import GenerateConfig, Model, ModelOutput, ModelUsage, get_model

from prefdisco.schema import AnswerType, Problem

Handler = Callable[["FakeBuilder", str, dict[str, Any], int], Any]


def _schema_dict(config: GenerateConfig) -> tuple[str, dict[str, Any]]:
    assert config.response_schema is not None, "every build call must send a response schema"
    return config.response_schema.name, config.response_schema.json_schema.model_dump(exclude_none=True)


def _range(prompt: str, pattern: str, default: tuple[int, int]) -> tuple[int, int]:
    m = re.search(pattern, prompt)
    return (int(m.group(1)), int(m.group(2))) if m else default


def persona_name(prompt: str) -> str:
    m = re.search(r"^Name: (.+)$", prompt, re.MULTILINE)
    return m.group(1) if m else "?"


def default_persona(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    """A valid persona that follows the blueprint; the n-th call of a FakeBuilder is "Person<n> Tester<n>"
    unless ``fake.stable_names`` is set, in which case the name depends on the prompt only (a rerun that
    regenerates a persona then gets the same one)."""
    lo, _ = _range(prompt, r"age between (\d+) and (\d+)", (30, 40))
    group = re.search(r"occupation group: (.+?) \(", prompt).group(1)  # type: ignore[union-attr]
    tag = hashlib.sha1(prompt.encode()).hexdigest()[:6] if fake.stable_names else str(n)
    return {
        "name": f"Person{tag} Tester{tag}",
        "age": lo,
        "occupation": f"occupation number {tag}",
        "occupation_group": group,
        "location": "Lisbon, Portugal",
        "education": "a degree",
        "summary": f"A test person number {tag} with a life.",
        "backstory": "Grew up somewhere. Works somewhere else.",
        "expertise": {
            "mathematics": "novice",
            "science": "intermediate",
            "medicine": "expert",
            "logic": "advanced",
            "general_knowledge": "intermediate",
            "social_situations": "none",
        },
    }


def default_relevance(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    names = schema["properties"]["relevant"]["items"]["enum"]
    lo, _ = _range(prompt, r"Select the (\d+) to (\d+)", (8, 15))
    reply: dict[str, Any] = {"relevant": names[:lo]}
    if "new_attributes" in schema["properties"]:
        reply["new_attributes"] = []
    return reply


def default_profile(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    """A profile that depends on the persona's name, so different personas get different profiles."""
    options = schema["properties"]["preferences"]["items"]["anyOf"]
    lo, _ = _range(prompt, r"Choose only the (\d+) to (\d+)", (3, 7))
    rng = random.Random(persona_name(prompt) + ("|again" if "Note: another person" in prompt else ""))
    chosen = rng.sample(options, lo)
    return {
        "preferences": [
            {
                "attribute": o["properties"]["attribute"]["enum"][0],
                "value": rng.choice(o["properties"]["value"]["enum"]),
                "justification": "Because of who they are.",
                "importance": rng.randint(1, 5),
            }
            for o in chosen
        ]
    }


def same_profile(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    """The same profile for everyone (unless the duplicate note is in the prompt)."""
    options = schema["properties"]["preferences"]["items"]["anyOf"][:3]
    pick = -1 if "Note: another person" in prompt else 0
    return {
        "preferences": [
            {
                "attribute": o["properties"]["attribute"]["enum"][0],
                "value": o["properties"]["value"]["enum"][pick],
                "justification": "Same as everyone.",
                "importance": 3,
            }
            for o in options
        ]
    }


def default_rubric(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    items = schema["properties"]["criteria"]["items"]
    members = items.get("anyOf") or [items]  # one criterion model per attribute
    names = [m["properties"]["attribute"]["enum"][0] for m in members]
    return {
        "criteria": [
            {
                "attribute": name,
                "description": f"Checks {name} on this task.",
                "levels": {str(k): f"Level {k} for {name}." for k in range(1, 6)},
            }
            for name in names
        ]
    }


DEFAULTS: dict[str, Handler] = {
    "persona": default_persona,
    "relevance": default_relevance,
    "profile": default_profile,
    "rubric": default_rubric,
}


class FakeBuilder:
    """mockllm ``custom_outputs``: schema-driven replies per step, with per-step call counts."""

    def __init__(self, handlers: dict[str, Handler] | None = None, *, stable_names: bool = False) -> None:
        self.handlers = {**DEFAULTS, **(handlers or {})}
        self.stable_names = stable_names
        self.calls: Counter[str] = Counter()
        self.prompts: list[tuple[str, str]] = []
        self.conversations: list[list[str]] = []

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        name, schema = _schema_dict(config)
        prompt = input[-1].text if len(input) == 1 else input[0].text
        self.calls[name] += 1
        self.prompts.append((name, prompt))
        self.conversations.append([m.text for m in input])
        reply = self.handlers[name](self, prompt, schema, self.calls[name])
        content = reply if isinstance(reply, str) else json.dumps(reply)
        out = ModelOutput.from_content(model="mockllm", content=content)
        in_tokens = sum(len(m.text) for m in input) // 4
        out.usage = ModelUsage(input_tokens=in_tokens, output_tokens=len(content) // 4)
        out.usage.total_tokens = out.usage.input_tokens + out.usage.output_tokens
        return out


def fake_model(fake: FakeBuilder, name: str = "model") -> Model:
    return get_model(f"mockllm/{name}", custom_outputs=fake, memoize=False)


def make_problems(n: int, benchmark: str = "toy") -> list[Problem]:
    problems = []
    for i in range(n):
        if i % 2:
            problems.append(
                Problem(
                    id=f"{benchmark}-{i}",
                    benchmark=benchmark,
                    domain="medicine",
                    question=f"Which organ filters blood? (variant {i})",
                    choices=["Heart", "Kidney", "Lung", "Skin"],
                    answer="B",
                    answer_type=AnswerType.LETTER,
                )
            )
        else:
            problems.append(
                Problem(
                    id=f"{benchmark}-{i}",
                    benchmark=benchmark,
                    domain="math",
                    question=f"What is {i} + 2 * 3?",
                    answer=str(i + 6),
                    answer_type=AnswerType.INTEGER,
                )
            )
    return problems


# ---------------------------------------------------------------------------------------------------------
# The script itself must be right, or every build test proves nothing.
# ---------------------------------------------------------------------------------------------------------


def test_fake_builder_answers_from_the_schema_and_counts_calls() -> None:
    import asyncio

    from prefdisco.builder.catalogue import load_catalogue
    from prefdisco.builder.relevance import RelevanceConfig, relevance_prompt, relevance_schema
    from prefdisco.structured import generate_structured

    fake = FakeBuilder()
    catalogue = load_catalogue()
    problem = make_problems(1)[0]
    schema = relevance_schema(tuple(a.name for a in catalogue), 8, 15, 3)
    text = relevance_prompt(problem, catalogue, RelevanceConfig())
    result = asyncio.run(generate_structured(fake_model(fake), text, schema, name="relevance"))
    assert result.value.relevant == [a.name for a in catalogue[:8]]
    assert fake.calls == Counter({"relevance": 1})
    assert result.usage.input_tokens == len(text) // 4
