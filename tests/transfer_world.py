"""A planted sessions world for the Transfer metrics (``tests/test_transfer.py``): scripted assistant, simulated user
and judge, run through the real sessions orchestration (``evaluation.run.run_conditions`` with ``--sessions``).

**The hook.** The orchestration resolves its models by name (``get_model(name)``), so a test cannot hand it
inspect's mockllm objects. This module registers a model API ``scripted`` (inspect's ``@modelapi``): the model
``scripted/<name>`` answers with ``SCRIPTS[name](messages)``. Nothing leaves the process, every call goes through
inspect (cache, seeds, logs) as any provider's would.

**The world.** ``N_SESSIONS`` people, each with one session of three problems, the same layout for everyone (their
values differ: ``<attribute>-<session>-old`` / ``-new``). Attributes D (``Explanation depth``), V (``Technical
vocabulary``), A (``Use of analogies``):

| position | profile (weight) | labels |
|---|---|---|
| 1 | D old .6, A .4 | new D, A |
| 2 | D old .5, V .5 | recurring D, new V |
| 3 | D **new** .4, A .3, V .3 | changed D, recurring A, V |

* The targeted user maps a question naming an attribute to it (the mapping call, on the grader role) and replies
  ``About <attribute>: I want <value>.``
* The judge scores a criterion 5 when its preferred value appears in the response, 1 otherwise, so
  PrefAlign = 1 + 4·W (W: the weight whose value the response holds), baseline 1, oracle 5, NormAlign = 100·W.
* The assistant (both kinds): baseline answers ``B.``; oracle writes every value of its system prompt. In discovery
  and the carry arms it knows what the replies of this dialogue said, and — only ``smart`` — what the carried part
  of its system prompt says (the transcript's ``They replied:`` lines, or its notes' ``NOTE`` lines). Knowing
  fewer than two attributes before its first turn, it asks one question, about the first of D, V, A it does not
  know; then (or at once) it answers with every value it knows, the latest value of each attribute winning.
* carry_notes: after each problem ``smart`` writes a ``NOTE <attribute> = <value>`` line for each reply of *this*
  problem only — its notes forget what the earlier notes said; ``forgetful`` writes that it noted nothing.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi

from prefdisco.schema import (
    PreferenceItem,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
)
from prefdisco.sessions.model import Session, SessionSet, SessionSetHeader, label_positions, write_session_set
from scripted import make_persona

D, V, A = "Explanation depth", "Technical vocabulary", "Use of analogies"
ASK_ORDER = (D, V, A)
N_SESSIONS = 4
LAYOUT = (  # per position: (attribute, old/new value, weight)
    ((D, "old", 0.6), (A, "old", 0.4)),
    ((D, "old", 0.5), (V, "old", 0.5)),
    ((D, "new", 0.4), (A, "old", 0.3), (V, "old", 0.3)),
)
ARMS = ("baseline", "discovery", "oracle", "carry_transcript", "carry_notes")

SCRIPTS: dict[str, Callable[..., str | ModelOutput]] = {}
"""``scripted/<name>`` → its reply to a request's messages (a script with a second parameter also gets the call's
``GenerateConfig``: its seed, its max_tokens); text, or a whole ``ModelOutput`` (a stop reason of its own)."""


@modelapi(name="scripted")
def _scripted_api() -> type[ModelAPI]:
    class ScriptedAPI(ModelAPI):
        async def generate(self, input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig):
            script = SCRIPTS[self.model_name]
            wants_config = len(inspect.signature(script).parameters) > 1
            reply = script(list(input), config) if wants_config else script(list(input))
            if isinstance(reply, ModelOutput):
                return reply
            return ModelOutput.from_content(model=self.model_name, content=reply)

    return ScriptedAPI


def value(attribute: str, session: int, which: str) -> str:
    return f"{attribute.split()[-1].lower()}-s{session}-{which}"


def scenario(session: int, position: int) -> Scenario:
    items = [
        PreferenceItem(attribute=a, value=value(a, session, which), weight=w, description=f"what {a.lower()} means")
        for a, which, w in LAYOUT[position - 1]
    ]
    rubric = [
        RubricCriterion(
            attribute=i.attribute,
            preferred_value=i.value,
            description=f"uses {i.value}",
            levels={lvl: f"level {lvl} of {i.attribute}" for lvl in range(1, 6)},
        )
        for i in items
    ]
    problem = Problem(
        id=f"prob-{session}-{position}",
        benchmark="demo",
        domain="math",
        question=f"Problem {position} of person {session}: what is {position} + 1?",
        choices=["0", str(position + 1), "7", "9"],
        answer="B",
        answer_type="letter",
    )
    persona = make_persona(f"person-{session}", f"Person {session}")
    return Scenario(
        id=f"t{session}-{position}",
        problem=problem,
        persona=persona,
        profile=PreferenceProfile(items=items),
        rubric=rubric,
    )


def sessions_world(folder: Path) -> tuple[list[Scenario], Path]:
    """The scenarios and the session file (written in ``folder``)."""
    scenarios, sessions = [], []
    for s in range(N_SESSIONS):
        chain = [scenario(s, p) for p in range(1, len(LAYOUT) + 1)]
        scenarios += chain
        profiles = [{i.attribute: i.value for i in c.profile.items} for c in chain]
        sessions.append(
            Session(
                session_id=f"session-{s}",
                persona_id=f"person-{s}",
                scenario_ids=[c.id for c in chain],
                labels=label_positions(profiles),
            )
        )
    path = folder / "sessions.jsonl"
    header = SessionSetHeader(source="planted", length=len(LAYOUT), n_sessions=len(sessions))
    write_session_set(path, SessionSet(header=header, sessions=sessions))
    return scenarios, path


REPLY = re.compile(r"About (.+?): I want (\S+?)\.")
NOTE = re.compile(r"^NOTE (.+?) = (\S+)$", re.MULTILINE)
ORACLE_LINE = re.compile(r"^- .+?: (\S+) \[importance", re.MULTILINE)


def assistant(remember: bool) -> Callable[[list[ChatMessage]], str]:
    def respond(messages: list[ChatMessage]) -> str:
        system = "\n".join(m.text for m in messages if m.role == "system")
        if "keep notes about them between tasks" in messages[-1].text:  # carry_notes: the notes of this problem
            if not remember:
                return "Nothing worth noting."
            conversation = messages[-1].text.split("The conversation", 1)[1]
            return "\n".join(f"NOTE {a} = {v}" for a, v in REPLY.findall(conversation)) or "Nothing new."
        if not system:  # baseline
            return "B."
        if "QUESTION:" not in system:  # oracle: every value it was shown
            return "B. " + " ".join(ORACLE_LINE.findall(system))
        carried = dict(REPLY.findall(system)) | dict(NOTE.findall(system)) if remember else {}
        replies = [m.text for m in messages[2:] if m.role == "user"]
        asked = sum(1 for m in messages if m.role == "assistant")
        known = carried | {a: v for r in replies for a, v in REPLY.findall(r)}
        if asked == 0 and len(carried) < 2:
            return f"QUESTION: What do you want for {next(a for a in ASK_ORDER if a not in known)}?"
        return "ANSWER: B. " + " ".join(known[a] for a in sorted(known))

    return respond


MAP_QUESTION = re.compile(r"The assistant's question:\n(.*?)\n", re.DOTALL)
PREFERRED = re.compile(r"The person's preferred value: (.+)")
RESPONSE = re.compile(r"<response>\n(.*)\n</response>", re.DOTALL)
USER_ITEM = re.compile(r"^- (.+?) \(.*?\): (\S+?)\.", re.MULTILINE)


def judge(messages: list[ChatMessage]) -> str:
    text = "\n".join(m.text for m in messages)
    if "Decide which of the\nperson's preferences the question asks about" in text:  # the targeted user's mapping
        question = MAP_QUESTION.search(text).group(1)
        named = [n for n in re.findall(r"^- (.+?): what", text, re.MULTILINE) if n in question]
        return json.dumps({"about": named or ["none"]})
    preferred = PREFERRED.search(text).group(1).strip()
    return json.dumps({"score": 5 if preferred in RESPONSE.search(text).group(1) else 1})


def user(messages: list[ChatMessage]) -> str:
    system = "\n".join(m.text for m in messages if m.role == "system")
    return " ".join(f"About {a}: I want {v}." for a, v in USER_ITEM.findall(system))


SMART = "smart-assistant-with-a-name-long-enough-to-wrap-in-every-figure-2025-06-01"
"""The smart assistant's model name (``scripted/SMART``): long, so every report of the world must wrap it, never cut
it (``tests/test_report_browser.py`` reads the same run as ``tests/test_transfer.py``)."""
SCRIPTS |= {SMART: assistant(True), "forgetful": assistant(False)}
SCRIPTS |= {"judge": judge, "user": user}


def planted_run(folder: Path, kind: str, *, user_type: str = "targeted", epochs: int = 1) -> Path:
    """The sessions run of the ``kind`` assistant (``SMART`` or ``forgetful``) in ``folder / kind-user_type``: every
    arm, no audit, no quality call. Returns the run folder."""
    from prefdisco.evaluation.run import run_conditions
    from prefdisco.evaluation.settings.config import RunConfig

    scenarios, sessions = sessions_world(folder)
    config = RunConfig(
        models=[f"scripted/{kind}"],
        user_model="scripted/user",
        grader_model="scripted/judge",
        log_dir=folder / f"{kind}-{user_type}",
        modes=list(ARMS),
        user_type=user_type,
        audit=False,
        quality=False,  # the judge here scores the rubric only
        sessions=sessions,
        epochs=epochs,
        display="none",
    )
    config.validate()
    run_conditions(scenarios, config)
    return config.log_dir


def shared_run(world: Any, kind: str, *, user_type: str = "targeted", epochs: int = 1) -> Path:
    """``planted_run`` of the test session's planted worlds (``conftest.World``, the ``world`` fixture): built the
    first time any test asks, then read by every test and worker that asks again. Read-only to its readers."""
    import prefdisco.cli as cli

    def make(folder: Path) -> Path:
        cli._register()
        return planted_run(folder, kind, user_type=user_type, epochs=epochs)

    return world.get(f"transfer-{kind}-{user_type}-x{epochs}", make)
