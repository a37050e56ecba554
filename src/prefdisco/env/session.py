"""One session as an RL episode, framework-neutral: K problems with one person, one reward per problem.

A session (``sessions/model.py``) is one person and a chain of K of their scenarios. ``SessionEpisode`` plays its
positions in order, each one an ``Episode`` (``env/episode.py``: the one dialogue engine, the simulated user and
the scorer's own code) whose opening is the carried opening of ``prefdisco eval``'s carry arms
(``dialogue/carry.carried_opening``, what ``Carried.then`` keeps after each problem: the evaluation's code, not a
copy) and whose rules and seeds are labelled with the arm (``cold``, ``carry_transcript``, ``carry_notes``). The
arms, the per-problem reward, ``info["next"]``, the notes turn and the seeds are described once, in
docs/agents.md, "Sessions: K problems with one person".

The notes of ``carry_notes`` are written by the model being trained, which lives outside the environment: after
each problem but the last the episode asks the agent for them as one extra turn (``dialogue/carry.notes_prompt``,
alone in a fresh chat as ``prefdisco eval`` sends it). No notes are asked after the last problem: nothing reads
them.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspect_ai.model import ChatMessage

from prefdisco.dialogue.carry import Carried, CarriedPosition, carried_opening, notes_prompt
from prefdisco.dialogue.engine import Turn
from prefdisco.dialogue.protocol import strip_markers
from prefdisco.dialogue.visible import visible_text
from prefdisco.env.episode import Episode, Message, StepResult
from prefdisco.env.roles import ModelSpec, resolve_model
from prefdisco.env.runner import SyncAPI
from prefdisco.env.sources import ScenarioSource, SessionSource, chain_of, load_sessions, scenarios_from
from prefdisco.env.split import ScenarioSplit, Side
from prefdisco.errors import UserError
from prefdisco.schema import Mode, Scenario
from prefdisco.sessions.model import Session

COLD = "cold"
ARMS: tuple[str, ...] = (COLD, Mode.CARRY_TRANSCRIPT.value, Mode.CARRY_NOTES.value)
"""The arms a session episode plays: nothing carried, the earlier dialogues, the agent's own notes."""
EPISODE_OPTIONS: frozenset[str] = frozenset(
    name
    for name, p in inspect.signature(Episode.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
"""The options an ``Episode`` takes, and so every position of a session episode."""


def check_arm(arm: object) -> str:
    if arm not in ARMS:
        raise UserError(f"arm: expected one of {', '.join(ARMS)}, got {arm!r}")
    return str(arm)


def condition_of(arm: str) -> str:
    """``prefdisco eval``'s condition label of ``arm`` (its rules and seeds): the cold arm is discovery."""
    return Mode.DISCOVERY.value if arm == COLD else arm


def session_side(split: ScenarioSplit, chain: Sequence[Scenario]) -> Side | None:
    """The side of the split by problem every position of a session is on; None when they straddle it."""
    sides = {split.side(s) for s in chain}
    return sides.pop() if len(sides) == 1 else None


class PositionEpisode(Episode):
    """One position of a session: ``Episode`` on the carried opening of ``arm`` (``carried`` set before each
    reset), its rules and seeds labelled with the arm's condition."""

    def __init__(self, scenario: Scenario, user_model: ModelSpec, judge_model: ModelSpec, *, arm: str, **options: Any):
        self.arm = arm
        self.condition = condition_of(arm)
        self.carried: Carried | None = None
        super().__init__(scenario, user_model, judge_model, **options)

    def _opening(self) -> list[ChatMessage]:
        if self.carried is None:
            raise RuntimeError(f"position of scenario {self.scenario.id} has not started")
        return carried_opening(self.condition, self.scenario, self.rules.style, self.rules.limit, self.carried)


def _text(messages: list[Message]) -> str:
    return "\n\n".join(m["content"] for m in messages)


class SessionEpisode(SyncAPI[StepResult]):
    """A session of K problems in ``arm`` (module docstring). ``scenarios`` holds the session's scenarios (the
    benchmark's; derived ones come with the session); every other keyword is an ``Episode`` option, given to
    each position (``trial``: the session's trial, the same at every position, as in ``prefdisco eval``)."""

    def __init__(
        self,
        session: Session,
        scenarios: Iterable[Scenario] | Mapping[str, Scenario],
        user_model: ModelSpec,
        judge_model: ModelSpec,
        *,
        arm: str,
        **options: Any,
    ) -> None:
        if not isinstance(session, Session):
            raise UserError(f"session: expected a Session (sessions/model.py), got {type(session).__name__}")
        self.arm = check_arm(arm)
        unknown = sorted(set(options) - EPISODE_OPTIONS)
        if unknown:
            known = ", ".join(sorted(EPISODE_OPTIONS))
            raise UserError(f"session options: unknown {', '.join(unknown)}; expected one of {known}")
        self.session = session
        self.scenarios = chain_of(session, scenarios)
        user = resolve_model(user_model, "user", options.pop("user_config", None))
        judge = resolve_model(judge_model, "grader", options.pop("judge_config", None))
        self._use_runner(options.pop("runner", None))
        self.positions = [
            PositionEpisode(s, user, judge, arm=self.arm, runner=self._runner, **options) for s in self.scenarios
        ]  # bad options, and a position on the wrong side of a training split, fail here
        self.positions[0].carried = Carried(session_id=session.session_id, position=1)
        self._index = 0
        self._phase: str | None = None
        """None before the first reset, then ``dialogue``, ``notes`` (carry_notes, between problems) or ``done``."""
        self.rewards: list[float | None] = []
        """One reward per finished problem, in order (None: masked)."""
        self.results: list[StepResult] = []
        """The step that ended each finished problem."""
        self.notes: list[str] = []
        """carry_notes: the notes the agent wrote after each problem but the last, in order."""
        self._notes_prompt: str | None = None

    @classmethod
    def from_file(
        cls,
        sessions: SessionSource,
        scenarios: ScenarioSource,
        session_id: str,
        user_model: ModelSpec,
        judge_model: ModelSpec,
        *,
        arm: str,
        **options: Any,
    ) -> SessionEpisode:
        """The session ``session_id`` of a session file (``prefdisco sessions``) on its benchmark (a folder,
        scenarios file or release file)."""
        every = scenarios_from(scenarios)
        session_set = load_sessions(sessions, every)
        by_id = {s.session_id: s for s in session_set.sessions}
        if session_id not in by_id:
            raise UserError(f"session_id: no session {session_id!r} in {sessions}")
        return cls(by_id[session_id], every, user_model, judge_model, arm=arm, **options)

    # -- where the session is ---------------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """The 1-based position being played (the last one once done)."""
        return self._index + 1

    @property
    def length(self) -> int:
        return len(self.positions)

    @property
    def episode(self) -> PositionEpisode:
        """The position being played, as an ``Episode``."""
        return self.positions[self._index]

    @property
    def carried(self) -> Carried:
        """What the current position carries from the earlier ones."""
        carried = self.episode.carried
        assert carried is not None
        return carried

    @property
    def done(self) -> bool:
        return self._phase in (None, "done")

    @property
    def messages(self) -> list[Message]:
        """The agent's chat now: the current position's dialogue so far, or the notes prompt alone."""
        if self._phase == "notes" and self._notes_prompt is not None:
            return [{"role": "user", "content": self._notes_prompt}]
        return self.episode.messages

    def opening(self) -> list[Message]:
        """The first position's opening (what a rollout's prompt should be)."""
        return self.positions[0].opening()

    # -- reset and step ---------------------------------------------------------------------------------------

    async def areset(self) -> list[Message]:
        """Start (or restart) the session at position 1 with nothing carried; position 1's opening messages."""
        for later in self.positions[1:]:
            later.carried = None
        self._index, self._phase, self._notes_prompt = 0, "dialogue", None
        self.rewards, self.results, self.notes = [], [], []
        self.positions[0].carried = Carried(session_id=self.session.session_id, position=1)
        return await self.positions[0].areset()

    async def astep(self, assistant_turn: Turn) -> StepResult:
        """Read one assistant turn: a turn of the current problem, or (carry_notes, between problems) the notes."""
        if self.done:
            raise RuntimeError("the session is not running: call reset() first (a finished session stays finished)")
        if self._phase == "notes":
            return await self._notes(assistant_turn)
        result = await self.episode.astep(assistant_turn)
        info = {**result.info, **self._where()}
        if not result.done:
            return StepResult(result.observation, False, None, {**info, "next": "reply"})
        self.rewards.append(result.reward)
        self.results.append(result)
        info = {**info, "problem_done": True}
        if self._index == self.length - 1:
            self._phase = "done"
            return StepResult(None, True, result.reward, {**info, "next": None, "rewards": list(self.rewards)})
        if self.arm == Mode.CARRY_NOTES.value:
            self._phase = "notes"
            state = self.episode.dialogue.state
            self._notes_prompt = notes_prompt(self.carried, self.episode.scenario, list(state.turns))
            info = {**info, "next": "notes", "messages": self.messages}
            return StepResult(self._notes_prompt, False, result.reward, info)
        opening = await self._next(None)
        return StepResult(_text(opening), False, result.reward, {**info, "next": "opening", "messages": opening})

    async def _notes(self, turn: Turn) -> StepResult:
        notes = strip_markers(visible_text(turn))
        self.notes.append(notes)
        info = {**self._where(), "kind": "notes", "notes": notes}
        opening = await self._next(notes)
        return StepResult(_text(opening), False, None, {**info, "next": "opening", "messages": opening})

    async def _next(self, notes: str | None) -> list[Message]:
        """Start the next position with what the finished one leaves (``Carried.then``); its opening."""
        finished = self.episode
        state = finished.dialogue.state
        done = CarriedPosition(
            position=self.position,
            scenario_id=finished.scenario.id,
            problem=finished.scenario.problem.prompt_text(),
            turns=list(state.turns),
            response=state.final,
        )
        carried = self.carried.then(done, notes)
        self._index += 1
        self._phase, self._notes_prompt = "dialogue", None
        self.episode.carried = carried
        return await self.episode.areset()

    def _where(self) -> dict[str, Any]:
        return {"session_id": self.session.session_id, "position": self.position, "arm": self.arm}
