"""The carry arms of a sessions run: discovery with what the assistant kept of the person from earlier problems.

A session is one person and a chain of problems (``sessions/model.py``). Each position of a session is an ordinary
sample of its scenario, played as discovery through the one engine, with one difference: what the assistant keeps
of the earlier positions of the same session, for the same trial, comes first (``Carried``, in the sample's
metadata under ``CARRIED_KEY``, by model under test and epoch; the evaluation writes it from the logs of the earlier
positions,
``evaluation/sessions_run.py``):

* ``carry_transcript`` — the system prompt is discovery's plus the earlier problems, the questions asked, the
  person's replies and the assistant's own responses (``prompts/session_transcript.txt``);
* ``carry_notes`` — discovery's plus the notes the assistant wrote about the person after the previous problem
  (``prompts/session_notes.txt``); after each problem but the session's last it writes its notes again, one call of
  the model under test (``prompts/session_notes_write.txt``, at most ``NOTES_MAX_TOKENS``), kept in the sample's
  ``SessionNotes``.

At the first position nothing is carried: the prompt is discovery's. A bring-your-own assistant plays a carry arm as
it plays discovery, with the carried text in its system prompt and the whole ``Carried`` record in
``state.metadata[CARRIED_KEY]`` (``byo.py``), so it can keep a memory of its own.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

from prefdisco.cache import cache_policy
from prefdisco.dialogue.byo import own_assistant
from prefdisco.dialogue.openings import discovery_opening
from prefdisco.dialogue.plan import PlanSettings, rules_for
from prefdisco.dialogue.presets import DialogueStyle, preset_named
from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.scenario import scenario_of
from prefdisco.dialogue.solver import converse
from prefdisco.dialogue.state import DialogueRecord
from prefdisco.dialogue.tool_protocol import tools_style
from prefdisco.dialogue.visible import visible_text
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn, Mode, Scenario

CARRIED_KEY = "prefdisco_carried"
"""Sample metadata: model under test → epoch (as a string) → the ``Carried`` record of that model's trial."""
SESSION_KEY = "prefdisco_session"
"""Sample metadata: ``{"session_id": …, "position": …}`` of a scenario in a sessions run (every condition)."""
NOTES_MAX_TOKENS = 200
NOTES_CONFIG = GenerateConfig(max_tokens=NOTES_MAX_TOKENS)
NOTES_MAX_WORDS = 120
NO_NOTES = "(none yet)"
TEMPLATES: tuple[str, ...] = ("session_transcript", "session_notes", "session_notes_write")


class CarriedPosition(BaseModel):
    """One earlier position of the session, as the assistant saw it."""

    position: int
    scenario_id: str
    problem: str
    turns: list[DialogueTurn] = Field(default_factory=list)
    response: str | None = None


class Carried(BaseModel):
    """What the assistant keeps of a session before one of its positions, in one trial."""

    session_id: str
    position: int
    earlier: list[CarriedPosition] = Field(default_factory=list)
    notes: str = ""
    """carry_notes: the notes written after the previous position ("" at the first)."""

    def then(self, done: CarriedPosition, notes: str | None) -> Carried:
        """What is carried into the next position once ``done`` (this position) is over."""
        return Carried(
            session_id=self.session_id,
            position=self.position + 1,
            earlier=[*self.earlier, done],
            notes=self.notes if notes is None else notes,
        )


class SessionNotes(StoreModel):
    """The notes the assistant wrote after this position (carry_notes); None in other arms."""

    notes: str | None = None


def carried_of(state: TaskState) -> Carried:
    """What the sample's model under test carries into it, for its trial (``CARRIED_KEY``)."""
    by_model = (state.metadata or {}).get(CARRIED_KEY) or {}
    data = (by_model.get(str(state.model)) or {}).get(str(state.epoch))
    if data is None:
        raise ValueError(f"sample {state.sample_id}: nothing carried for {state.model}, trial {state.epoch}")
    return Carried.model_validate(data)


def dialogue_text(turns: list[DialogueTurn]) -> str:
    """A dialogue as lines: the assistant's questions, the person's replies, the assistant's response."""
    who = {"question": "You asked", "reply": "They replied", "answer": "Your response"}
    return "\n".join(f"{who[t.kind]}: {t.content}" for t in turns) or "(no question, no response)"


def transcript_text(earlier: list[CarriedPosition]) -> str:
    parts = []
    for done in earlier:
        parts.append(f"Earlier task {done.position}:\n{done.problem}\n\n{dialogue_text(done.turns)}")
    return "\n\n".join(parts)


def carried_system(arm: str, style: DialogueStyle, max_questions: int, carried: Carried) -> str | None:
    """The carried part of the system prompt of ``arm`` (None: nothing carried yet)."""
    if arm == Mode.CARRY_TRANSCRIPT.value and carried.earlier:
        return render("session_transcript", earlier=transcript_text(carried.earlier)).strip()
    if arm == Mode.CARRY_NOTES.value and carried.notes.strip():
        return render("session_notes", notes=carried.notes.strip()).strip()
    return None


def carried_opening(
    arm: str, scenario: Scenario, style: DialogueStyle, max_questions: int, carried: Carried
) -> list[ChatMessage]:
    """Discovery's opening with what ``arm`` carries appended to its system prompt."""
    opening = discovery_opening(scenario.problem, style, max_questions)
    extra = carried_system(arm, style, max_questions, carried)
    if extra is None:
        return opening
    system, *rest = opening
    return [ChatMessageSystem(content=f"{system.text}\n\n{extra}"), *rest]


def notes_prompt(carried: Carried, scenario: Scenario, turns: list[DialogueTurn]) -> str:
    """The notes call's prompt after ``scenario``'s dialogue ``turns``, given the notes carried into it."""
    return render(
        "session_notes_write",
        notes=carried.notes.strip() or NO_NOTES,
        problem=scenario.problem.prompt_text(),
        dialogue=dialogue_text(turns),
        max_words=NOTES_MAX_WORDS,
    )


@solver
def write_notes(cache_scope: str | None = None) -> Solver:
    """carry_notes, after the dialogue: the model under test rewrites its notes about the person (one call); none
    after a session's last position (``SESSION_KEY``'s ``last``: nothing follows to carry them into)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if ((state.metadata or {}).get(SESSION_KEY) or {}).get("last"):
            return state
        scenario, carried = scenario_of(state), carried_of(state)
        prompt = notes_prompt(carried, scenario, list(state.store_as(DialogueRecord).turns))
        cache = cache_policy(cache_scope, scenario.id, Mode.CARRY_NOTES.value, "notes")
        output = await get_model().generate([ChatMessageUser(content=prompt)], config=NOTES_CONFIG, cache=cache)
        state.store_as(SessionNotes).notes = strip_markers(visible_text(output))
        return state

    return solve


@solver
def carry(
    arm: str,
    max_questions: int,
    style: DialogueStyle,
    user_type: str = "passive",
    constrain_ask: bool = False,
    cache_scope: str | None = None,
    ask: str = "text",
    pushback: int = 0,
    user_retry: int = 0,
) -> Solver:
    """One position of a session in ``arm`` (module docstring): discovery from the carried opening, then, in
    carry_notes, the notes."""
    settings = PlanSettings(ask=ask, max_questions=max_questions, pushback=pushback, user_retry=user_retry)
    rules = rules_for(arm, settings, style=style)  # the run's ask channel, already made (``style``)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return carried_opening(arm, scenario, style, max_questions, carried_of(state))

    dialogue = converse(rules, opening, user_type, constrain_ask, cache_scope)
    return chain(dialogue, write_notes(cache_scope)) if arm == Mode.CARRY_NOTES.value else dialogue


def own_carry(
    arm: str,
    assistant: Solver,
    max_questions: int,
    user_type: str = "passive",
    cache_scope: str | None = None,
    preset: str = "default",
    user_retry: int = 0,
) -> Solver:
    """``arm`` played by the user's own assistant (``byo.py``): the carried opening under the tool protocol's
    prompts, the ``ask_user`` tool, then the notes in carry_notes."""
    style = tools_style(preset_named(preset).style)

    def opening(state: TaskState, scenario: Scenario) -> list[ChatMessage]:
        return carried_opening(arm, scenario, style, max_questions, carried_of(state))

    played = own_assistant(assistant, max_questions, user_type, cache_scope, style, opening, arm, user_retry)
    return chain(played, write_notes(cache_scope)) if arm == Mode.CARRY_NOTES.value else played
