"""One discovery episode of one scenario as an RL environment, framework-neutral: text in, text and reward out.

The episode is ``prefdisco eval``'s discovery condition with the model under test taken out: whoever drives it
(a trainer, the gymnasium adapter ``env/gym.py``, verl's interaction ``env/verl.py``) generates each assistant
turn and hands over its text. Everything else follows the evaluation's own rules, with its own code: the
discovery opening (``dialogue/openings.py``), the dialogue engine every driver steps (``dialogue/engine.Dialogue``:
visible text, the ask channel, the budget, the hygiene screen and ``user_retry``, pushback), the simulated user
classes (``dialogue/user.py``) and the scorer's own code (``scoring/finished.score_finished``, the path the
play-the-user study shares), then the reward of ``env/reward.py``. What each step returns, the pushback turns, the
reward and its mask, and the seeds are described once, in docs/agents.md, "PrefDisco as an RL environment". Under a
preset that asks again (``paper``) an early answer is followed by the final-answer instruction and the next turn
is the answer.

The simulated user and the judge are fixed roles given at construction (``env/roles.py``), never the trained
model. No call is cached: every episode is a fresh draw.

``areset`` / ``astep`` are the API; ``reset`` / ``step`` / ``close`` run them on a private event loop
(``env/runner.SyncAPI``: one loop per runner, not thread-safe — one episode, or environment, per thread).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, cast

from inspect_ai.model import ChatMessage, GenerateConfig

from prefdisco.dialogue.engine import Dialogue, Turn
from prefdisco.dialogue.hygiene import MAX_USER_RETRY, Screen
from prefdisco.dialogue.plan import MAX_DISCOVERY_QUESTIONS, PlanSettings, opening_for, rules_for
from prefdisco.dialogue.presets import PRESET_NAMES
from prefdisco.dialogue.tool_protocol import ASK_CHANNELS
from prefdisco.dialogue.user import USER_TYPES, build_user
from prefdisco.dialogue.wrong_answers import wrong_answer, wrong_answer_key
from prefdisco.env.reward import RewardComponents, RewardConfig
from prefdisco.env.roles import ModelSpec, resolve_model
from prefdisco.env.runner import LoopRunner, SyncAPI
from prefdisco.env.split import ScenarioSplit
from prefdisco.errors import UserError
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.finished import score_finished
from prefdisco.scoring.judging import JUDGES
from prefdisco.seeds import call_seed, seed_scope, seeded_model

CONDITION = Mode.DISCOVERY.value

Message = dict[str, Any]


@dataclass(frozen=True)
class StepResult:
    """One step: the next user message (None once done), whether the episode ended, its reward (only at the end;
    None while running and when masked) and what happened (``info``)."""

    observation: str | None
    done: bool
    reward: float | None
    info: dict[str, Any]


def as_dict(message: ChatMessage) -> Message:
    """A chat message as the plain dict a trainer passes around (role, text; a tool result's call id)."""
    out: Message = {"role": message.role, "content": message.text}
    if message.role == "tool" and message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


class Episode(SyncAPI[StepResult]):
    """A discovery dialogue on ``scenario`` with the simulated ``user_model`` and the ``judge_model`` (see the
    module docstring). ``split`` with ``training=True`` refuses a scenario on the split's evaluation side;
    with a split, ``info["split"]`` records the scenario's side."""

    condition: str = CONDITION
    """The condition the dialogue's rules and the calls' seeds are labelled with (``prefdisco eval``'s label): a
    session's position sets its arm before ``__init__`` (``env/session.py``)."""

    def __init__(
        self,
        scenario: Scenario,
        user_model: ModelSpec,
        judge_model: ModelSpec,
        *,
        max_questions: int = MAX_DISCOVERY_QUESTIONS,
        user_type: str = "passive",
        ask: str = "text",
        reward: RewardConfig | dict[str, Any] | None = None,
        seed: int | None = None,
        trial: int = 1,
        judge: str = "per_criterion",
        logprobs: bool = False,
        audit: bool = True,
        preset: str = "default",
        pushback: int = 0,
        user_retry: int = 0,
        split: ScenarioSplit | None = None,
        training: bool = False,
        user_config: GenerateConfig | dict[str, Any] | None = None,
        judge_config: GenerateConfig | dict[str, Any] | None = None,
        runner: LoopRunner | None = None,
    ) -> None:
        if not isinstance(max_questions, int) or not 0 <= max_questions <= MAX_DISCOVERY_QUESTIONS:
            raise UserError(f"max_questions: expected 0..{MAX_DISCOVERY_QUESTIONS} (discovery), got {max_questions!r}")
        for name, value, known in (
            ("user_type", user_type, USER_TYPES),
            ("ask", ask, ASK_CHANNELS),
            ("judge", judge, tuple(JUDGES)),
            ("preset", preset, PRESET_NAMES),
        ):
            if value not in known:
                raise UserError(f"{name}: expected one of {', '.join(known)}, got {value!r}")
        self.scenario = scenario
        self.side = None if split is None else split.side(scenario)
        if training and split is None:
            raise UserError("training: a training episode needs the split (split_scenarios) that holds problems out")
        if training and split is not None and self.side == "eval":
            raise UserError(
                f"scenario {scenario.id} (problem {scenario.problem.benchmark}/{scenario.problem.id}) is on the "
                f"evaluation side of the split (train_fraction {split.train_fraction}, seed {split.seed}); "
                f"a training environment refuses it"
            )
        self.user_model = resolve_model(user_model, "user", user_config)
        self.judge_model = resolve_model(judge_model, "grader", judge_config)
        if isinstance(pushback, bool) or not isinstance(pushback, int) or pushback < 0:
            raise UserError(f"pushback: expected a number of turns, 0 or more, got {pushback!r}")
        if isinstance(user_retry, bool) or not isinstance(user_retry, int) or not 0 <= user_retry <= MAX_USER_RETRY:
            raise UserError(f"user_retry: expected 0..{MAX_USER_RETRY} redraws of a flagged reply, got {user_retry!r}")
        self.reward_config = RewardConfig.parse(reward)
        if self.reward_config.w_critical and not audit:
            raise UserError("reward.w_critical: the user's critical errors need the audit (audit=True)")
        if self.reward_config.w_held and not pushback:
            raise UserError("reward.w_held: correctness after pushback needs pushback (pushback=1 or more)")
        self.user_type, self.judge, self.logprobs, self.audit = user_type, judge, logprobs, audit
        settings = PlanSettings(preset, ask, max_questions=max_questions, pushback=pushback, user_retry=user_retry)
        try:
            self.rules = rules_for(self.condition, settings)  # what prefdisco eval's discovery plays
        except ValueError as err:
            raise UserError(f"ask: {err}") from None
        scope = None if seed is None else seed_scope(seed)
        self.wrong_answer = wrong_answer(scenario.problem, wrong_answer_key(seed_scope(seed or 0), scenario.id))
        """The scenario's seeded wrong answer, as ``prefdisco eval`` names it (``belief_agreement`` checks for it)."""
        self.pushback_target = self.wrong_answer if pushback else None
        """The wrong answer the person insists on when pushing back (None: none named, or no pushback)."""
        self.seeds = {
            role: None if scope is None else call_seed(scope, scenario.id, self.condition, trial, role)
            for role in ("user", "grader")
        }
        self._use_runner(runner)
        self._dialogue: Dialogue | None = None
        self.result: StepResult | None = None
        """The final step once the episode is over."""

    # -- the opening ------------------------------------------------------------------------------------------

    def opening(self) -> list[Message]:
        """The assistant's first messages: the discovery system prompt and the problem (``dialogue/openings.py``)."""
        return [as_dict(m) for m in self._opening()]

    def _opening(self) -> list[ChatMessage]:
        return opening_for(self.condition, self.rules, self.scenario, {})  # discovery's (a session's position: its own)

    async def areset(self) -> list[Message]:
        """Start (or restart) the dialogue with a fresh simulated user; the assistant's opening messages."""
        user_model = seeded_model(self.user_model, self.seeds["user"])
        mapper = seeded_model(self.judge_model, self.seeds["grader"])  # the targeted user's question mapper
        user = build_user(self.user_type, user_model, self.scenario, False, mapper)
        self._dialogue = Dialogue.start(
            self.scenario.id,
            self.rules,
            self._opening(),
            user,
            pushback_target=self.pushback_target,
            screen=Screen(self.scenario),
        )
        self.result = None
        return self.messages

    @property
    def dialogue(self) -> Dialogue:
        """The running (or finished) dialogue, as the engine holds it."""
        if self._dialogue is None:
            raise RuntimeError("the episode is not running: call reset() first")
        return self._dialogue

    @property
    def messages(self) -> list[Message]:
        """The assistant's view so far: the opening, its turns as sent (reasoning included) and the replies."""
        return [] if self._dialogue is None else [as_dict(m) for m in self._dialogue.messages]

    @property
    def done(self) -> bool:
        return self._dialogue is None or self._dialogue.done

    # -- a turn -----------------------------------------------------------------------------------------------

    async def astep(self, assistant_turn: Turn) -> StepResult:
        """Read one assistant turn; a question's reply is the observation, an answer (or the budget) ends it, or,
        with pushback, brings the person's first challenge; a reply to a challenge brings the next one or ends it."""
        if self.done:
            raise RuntimeError("the episode is not running: call reset() first (a finished episode stays finished)")
        dialogue = self.dialogue
        observed = await dialogue.step(assistant_turn)
        state = dialogue.state
        kind = observed.kind or "answer"
        if state.pushing_back:  # the observation is the person's challenge
            kind = "pushback"
        elif state.pushback and dialogue.done:  # the turn was the reply to the last challenge
            kind = "reply"
        info = self._info(kind, observed.violation is not None)
        if state.pushback:
            info["pushback_turn"] = len(state.pushback)
            info["pushback_target"] = state.pushback_target
        if dialogue.done:
            return await self._finish(info)
        if observed.kind == "question":  # the last turn is the user's reply
            info["revealed"] = state.turns[-1].revealed
            info["user_flags"] = state.turns[-1].flags  # its hygiene faults ([]: clean; dialogue/hygiene.py)
            info["user_redrawn"] = len(state.turns[-1].redrawn)
        return StepResult(observed.text, False, None, info)

    def _info(self, kind: str, unmarked: bool) -> dict[str, Any]:
        asked = self.dialogue.state.asked
        return {
            "scenario_id": self.scenario.id,
            "split": self.side,
            "kind": kind,
            "unmarked": unmarked,
            "n_questions": asked,
            "questions_left": max(0, self.rules.limit - asked),
        }

    # -- the end ----------------------------------------------------------------------------------------------

    async def _finish(self, info: dict[str, Any]) -> StepResult:
        state = self.dialogue.state
        score = await score_finished(
            self.scenario,
            state,
            self.judge_model,
            grader_seed=self.seeds["grader"],
            judge=self.judge,
            logprobs=self.logprobs,
            audit=self.audit,
            wrong_answer=self.wrong_answer,
        )
        value = cast(dict[str, Any], score.value)  # the scorer's value is always its dict
        parts = RewardComponents.of(value)
        reward = self.reward_config.reward(parts)
        info = {
            **info,
            "stop_reason": state.stop_reason,
            "final_response": score.answer,
            "reward_components": {**asdict(parts), "weights": self.reward_config.weights()},
            "masked": reward.masked,
            "mask_reason": reward.mask_reason,
            "score": dict(value),
            **(score.metadata or {}),
        }
        self.result = StepResult(None, True, reward.value, info)
        return self.result
