"""Scripted inspect models for tests: mockllm with a callable that sees every request and records it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model

from prefdisco.schema import (
    Persona,
    PreferenceItem,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
    TraitScore,
)


@dataclass
class Call:
    messages: list[ChatMessage]
    config: GenerateConfig

    @property
    def text(self) -> str:
        return "\n".join(m.text for m in self.messages)

    @property
    def system(self) -> str:
        return "\n".join(m.text for m in self.messages if m.role == "system")


@dataclass
class Scripted:
    """A mock model whose reply is ``respond(call, index)``; every call is kept in ``calls``."""

    respond: Callable[[Call, int], str]
    calls: list[Call] = field(default_factory=list)
    name: str = "mockllm/model"
    """The model's name (judges of a panel need names of their own)."""
    model: Model = field(init=False)

    def __post_init__(self) -> None:
        def outputs(input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
            call = Call(list(input), config)
            self.calls.append(call)
            text = self.respond(call, len(self.calls) - 1)
            output = ModelOutput.from_content(model="mockllm", content=text)
            # set usage ourselves: mockllm would otherwise count tokens with tiktoken, which downloads its
            # encoding on first use (tests are offline)
            n_in, n_out = len(call.text) // 4 + 1, len(text) // 4 + 1
            output.usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
            return output

        self.model = get_model(self.name, custom_outputs=outputs, memoize=False)


def listed_criteria(call: Call) -> list[str]:
    """The attributes a structured judge call lists, in the order listed (``Criterion cN — attribute`` lines)."""
    return [
        line.split(" — ", 1)[1] for line in call.text.splitlines() if line.startswith("Criterion c") and " — " in line
    ]


QUALITY_ASKED = '"reasoning": N, "completeness": N, "facts": N}'
"""How a structured judge's call that also asks the general quality ends its keys."""


def structured_reply(call: Call, scores: dict[str, int], quality: dict[str, int] | None = None) -> str:
    """A structured judge's reply giving each listed attribute its score in ``scores``, keyed by its place, and the
    general quality's levels (``quality``; 3 each when not given) when the call asks them."""
    reply = {f"c{i}": scores[a] for i, a in enumerate(listed_criteria(call), start=1)}
    if QUALITY_ASKED in call.text:
        reply |= quality or {"reasoning": 3, "completeness": 3, "facts": 3}
    return json.dumps(reply)


def replies(*texts: str) -> Callable[[Call, int], str]:
    """Reply with ``texts`` in order, repeating the last one."""
    return lambda call, i: texts[min(i, len(texts) - 1)]


def constant(text: str) -> Callable[[Call, int], str]:
    return lambda call, i: text


def make_persona(pid: str = "p1", name: str = "Ada Okoye") -> Persona:
    return Persona(
        id=pid,
        name=name,
        age=41,
        occupation="ferry engineer",
        location="Lagos",
        education="technical diploma",
        summary=f"{name} maintains ferry engines and learns by taking things apart.",
        big_five={
            t: TraitScore(level="medium", score=3.0)
            for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
        },
        expertise={"mechanics": "expert", "algebra": "novice"},
        backstory="Left school at 17 to work in the port.",
    )


def make_scenario(
    sid: str = "s1",
    persona: Persona | None = None,
    weights: tuple[float, ...] = (0.5, 0.3, 0.2),
    values: tuple[str, ...] = ("step by step", "machine analogies", "plain words"),
    problem: Problem | None = None,
) -> Scenario:
    names = ["Explanation depth", "Use of analogies", "Technical vocabulary"][: len(weights)]
    items = [
        PreferenceItem(
            attribute=n,
            value=v,
            weight=w,
            justification=f"because of {n.lower()} SECRET-JUSTIFICATION-{i}",
            description=f"what {n.lower()} means",
        )
        for i, (n, v, w) in enumerate(zip(names, values, weights, strict=False))
    ]
    rubric = [
        RubricCriterion(
            attribute=n,
            preferred_value=v,
            description=f"RUBRIC-DESCRIPTION {n}",
            levels={lvl: f"RUBRIC-LEVEL-{lvl} for {n}" for lvl in range(1, 6)},
        )
        for n, v in zip(names, values, strict=False)
    ]
    return Scenario(
        id=sid,
        problem=problem
        or Problem(
            id="prob-1",
            benchmark="demo",
            domain="math",
            question="A ferry carries 12 cars per trip. How many trips for 30 cars?",
            choices=["2", "3", "4", "5"],
            answer="B",
            answer_type="letter",
        ),
        persona=persona or make_persona(),
        profile=PreferenceProfile(items=items),
        rubric=rubric,
    )


def run_eval_set(
    tasks: list[Any],
    log_dir: Any,
    assistant: Scripted,
    user: Scripted,
    grader: Scripted,
    panel: dict[str, Scripted] | None = None,
) -> bool:
    """Run ``tasks`` as an inspect eval-set in ``log_dir`` with scripted assistant, user and grader (and the further
    judges of a panel, ``panel``: role ``grader_2`` … → model); True when every sample finished."""
    from inspect_ai import eval_set

    judges = {role: judge.model for role, judge in (panel or {}).items()}
    success, _ = eval_set(
        tasks,
        log_dir=str(log_dir),
        model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model, **judges},
        display="none",
        log_level="warning",
        max_samples=8,
    )
    return success


def tagged_scenario(sid: str) -> Scenario:
    """``make_scenario`` with a ``[case SID]`` tag in its question, so the mock server (``tests/mock_openai.py``)
    attributes every call to it, and the letter answer B, which the mock's answers give."""
    problem = Problem(
        id=f"p-{sid}",
        benchmark="demo",
        domain="math",
        question=f"A ferry carries 12 cars per trip. How many trips for 30 cars? [case {sid}]",
        choices=["2", "3", "4", "5"],
        answer="B",
        answer_type="letter",
    )
    return make_scenario(sid, problem=problem)
