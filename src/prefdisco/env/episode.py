"""One discovery episode of one scenario as an RL environment, framework-neutral: text in, text and reward out.

The episode is ``prefdisco eval``'s discovery condition with the model under test taken out: whoever drives it
(a trainer, the gymnasium adapter ``env/gym.py``, verl's interaction ``env/verl.py``) generates each assistant
turn and hands over its text. Everything else follows the evaluation's own rules, with its own code:

* ``reset`` gives the assistant's opening: the discovery system prompt (``prompts/assistant_discovery.txt``, or
  the preset's, with the budget) and the problem, as the discovery solver builds them (``dialogue/steps.py``);
* each turn is read by its visible text (``dialogue/visible.py``: reasoning blocks and ``<think>`` sections
  removed, so the simulated user, the parser and the judge never see them) under the protocol parser
  (``dialogue/protocol.py``) and the budget rules (``dialogue/loop.QuestionBudget``): a question goes to the
  simulated user (the same user classes, ``dialogue/user.USERS``) and its reply, with the budget's note, is the
  next observation; an answer ends the episode, and so does the budget: the turn after the last allowed question
  is the answer whatever it says. Under a preset that asks again (``paper``) an early answer is followed by the
  final-answer instruction and the next turn is the answer. Nothing else ends an episode;
* the final response is scored by the scorer's own code (``scoring/scorer.assess``: the judge, correctness and
  the audit, one grader), and the reward is the weighted sum of ``env/reward.py``; an episode whose PrefAlign
  was not measured gets reward None and ``info["masked"] = True`` with ``info["mask_reason"]``.

The simulated user and the judge are fixed roles given at construction (``env/roles.py``), never the trained
model. With ``seed``, the user's and the judge's calls carry the seeds ``prefdisco eval --seed SEED`` sends in
trial ``trial`` of the scenario (``prefdisco.seeds``). No call is cached: every episode is a fresh draw.

``areset`` / ``astep`` are the API; ``reset`` / ``step`` run them on a private event loop (``env/runner.py``:
one loop per runner, not thread-safe — one episode, or environment, per thread).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, cast

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput

from prefdisco.dialogue.conditions import MAX_DISCOVERY_QUESTIONS
from prefdisco.dialogue.loop import QuestionBudget
from prefdisco.dialogue.presets import PRESET_NAMES, preset_named
from prefdisco.dialogue.protocol import parse_turn
from prefdisco.dialogue.state import DialogueRecord, StopReason
from prefdisco.dialogue.user import USER_TYPES, USERS
from prefdisco.dialogue.user_reply import SimulatedUser
from prefdisco.dialogue.visible import visible_text
from prefdisco.env.reward import RewardComponents, RewardConfig
from prefdisco.env.roles import ModelSpec, resolve_model
from prefdisco.env.runner import LoopRunner
from prefdisco.env.split import ScenarioSplit
from prefdisco.errors import UserError
from prefdisco.prompts import render
from prefdisco.schema import DialogueTurn, Mode, Scenario
from prefdisco.scoring.judging import JUDGES, judge_named
from prefdisco.scoring.panel import FIRST_ROLE, Judging, PanelVerdict
from prefdisco.scoring.scorer import RubricJudging, Submission, UserAuditing, assess
from prefdisco.seeds import call_seed, seed_scope, seeded_model

CONDITION = Mode.DISCOVERY.value
PROTOCOLS: tuple[str, ...] = ("text",)
"""``text``: the ``QUESTION:`` / ``ANSWER:`` markers of ``dialogue/protocol.py``, read from the turn's text."""

Turn = str | ChatMessage | ModelOutput
Message = dict[str, str]


@dataclass(frozen=True)
class StepResult:
    """One step: the next user message (None once done), whether the episode ended, its reward (only at the end;
    None while running and when masked) and what happened (``info``)."""

    observation: str | None
    done: bool
    reward: float | None
    info: dict[str, Any]


def _raw_text(turn: Turn) -> str:
    if isinstance(turn, str):
        return turn
    if isinstance(turn, ModelOutput):
        return turn.message.text if turn.choices else turn.completion
    return turn.text


class Episode:
    """A discovery dialogue on ``scenario`` with the simulated ``user_model`` and the ``judge_model`` (see the
    module docstring). ``split`` with ``training=True`` refuses a scenario on the split's evaluation side;
    with a split, ``info["split"]`` records the scenario's side."""

    def __init__(
        self,
        scenario: Scenario,
        user_model: ModelSpec,
        judge_model: ModelSpec,
        *,
        max_questions: int = MAX_DISCOVERY_QUESTIONS,
        user_type: str = "passive",
        protocol: str = "text",
        reward: RewardConfig | dict[str, Any] | None = None,
        seed: int | None = None,
        trial: int = 1,
        judge: str = "per_criterion",
        logprobs: bool = False,
        audit: bool = True,
        preset: str = "default",
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
            ("protocol", protocol, PROTOCOLS),
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
        self.reward_config = RewardConfig.parse(reward)
        if self.reward_config.w_critical and not audit:
            raise UserError("reward.w_critical: the user's critical errors need the audit (audit=True)")
        self.user_type, self.judge, self.logprobs, self.audit = user_type, judge, logprobs, audit
        self.style = preset_named(preset).style
        self.budget = QuestionBudget(max_questions, False, self.style)
        scope = None if seed is None else seed_scope(seed)
        self.seeds = {
            role: None if scope is None else call_seed(scope, scenario.id, CONDITION, trial, role)
            for role in ("user", "grader")
        }
        self._runner = runner or LoopRunner()
        self._own_runner = runner is None
        self._user: SimulatedUser | None = None
        self._done = True
        self.result: StepResult | None = None
        """The final step once the episode is over."""

    # -- the opening ------------------------------------------------------------------------------------------

    def opening(self) -> list[Message]:
        """The assistant's first messages: the discovery system prompt and the problem (``dialogue/steps.py``)."""
        problem = self.scenario.problem.prompt_text()
        text = render(self.style.task, problem=problem).strip() if self.style.task else problem
        system = render(self.style.discovery, max_questions=self.budget.limit)
        return [{"role": "system", "content": system}, {"role": "user", "content": text}]

    async def areset(self) -> list[Message]:
        """Start (or restart) the dialogue with a fresh simulated user; the assistant's opening messages."""
        user_model = seeded_model(self.user_model, self.seeds["user"])
        self._user = USERS[self.user_type](user_model, self.scenario, False)
        self._asked = 0
        self._closing = False  # the final-answer instruction followed an early answer: the next turn is final
        self._turns: list[DialogueTurn] = []
        self._unmarked = 0
        self._stop_reason: StopReason = "answered"
        self._messages = self.opening()
        self._done = False
        self.result = None
        return [dict(m) for m in self._messages]

    @property
    def messages(self) -> list[Message]:
        """The assistant's view so far: the opening, its turns as sent (reasoning included) and the replies."""
        return [dict(m) for m in self._messages]

    @property
    def done(self) -> bool:
        return self._done

    # -- a turn -----------------------------------------------------------------------------------------------

    async def astep(self, assistant_turn: Turn) -> StepResult:
        """Read one assistant turn; a question's reply is the observation, an answer (or the budget) ends it."""
        if self._done or self._user is None:
            raise RuntimeError("the episode is not running: call reset() first (a finished episode stays finished)")
        must_answer = self._closing or self.budget.must_answer(self._asked)
        raw = _raw_text(assistant_turn)
        self._messages.append({"role": "assistant", "content": raw})
        turn = parse_turn(visible_text(assistant_turn))  # the visible text only: reasoning never reaches a reader
        self._unmarked += turn.unmarked
        kind = "answer" if must_answer else turn.kind
        if kind == "answer":
            if not self._closing:
                self._stop_reason = "budget" if must_answer else "unmarked" if turn.unmarked else "answered"
            self._turns.append(DialogueTurn(role="assistant", kind="answer", content=turn.content))
            if self.style.ask_again and not must_answer:
                self._closing = True
                note = self.budget.closing_note()
                self._messages.append({"role": "user", "content": note})
                return StepResult(note, False, None, self._info(kind, turn.unmarked))
            return await self._finish(turn.content, turn.unmarked)
        self._asked += 1
        self._turns.append(DialogueTurn(role="assistant", kind="question", content=turn.content))
        reply = await self._user.reply(turn.content)
        revealed = None if reply.revealed is None else list(reply.revealed)
        self._turns.append(
            DialogueTurn(role="user", kind="reply", content=reply.text, revealed=revealed, mapping=reply.mapping)
        )
        note = self.budget.note(reply.text, self._asked)
        self._messages.append({"role": "user", "content": note})
        return StepResult(note, False, None, {**self._info(kind, turn.unmarked), "revealed": revealed})

    def _info(self, kind: str, unmarked: bool) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario.id,
            "split": self.side,
            "kind": kind,
            "unmarked": unmarked,
            "n_questions": self._asked,
            "questions_left": max(0, self.budget.limit - self._asked),
        }

    # -- the end ----------------------------------------------------------------------------------------------

    async def _finish(self, final: str, unmarked: bool) -> StepResult:
        record = DialogueRecord(
            condition=CONDITION,
            final_response=final,
            turns=list(self._turns),
            unmarked_turns=self._unmarked,
            stop_reason=self._stop_reason,
        )
        sub = Submission(self.scenario, visible_text(final), record)
        grader = seeded_model(self.judge_model, self.seeds["grader"])
        judgements = await RubricJudging(judge_named(self.judge), self.logprobs)(grader, sub, False)
        verdict = PanelVerdict([Judging(str(self.judge_model), FIRST_ROLE, 1, judgements)])
        score = await assess(grader, sub, verdict, False, UserAuditing(self.audit))
        value = cast(dict[str, Any], score.value)  # the scorer's value is always its dict
        parts = RewardComponents.of(value)
        reward = self.reward_config.reward(parts)
        info = {
            **self._info("answer", unmarked),
            "stop_reason": self._stop_reason,
            "final_response": score.answer,
            "reward_components": {**asdict(parts), "weights": self.reward_config.weights()},
            "masked": reward.masked,
            "mask_reason": reward.mask_reason,
            "score": dict(value),
            **(score.metadata or {}),
        }
        self._done = True
        self.result = StepResult(None, True, reward.value, info)
        return self.result

    # -- the synchronous API ----------------------------------------------------------------------------------

    def reset(self) -> list[Message]:
        """``areset`` on the private event loop."""
        return self._runner.run(self.areset())

    def step(self, assistant_turn: Turn) -> StepResult:
        """``astep`` on the private event loop."""
        return self._runner.run(self.astep(assistant_turn))

    def close(self) -> None:
        """Close the private event loop (when the episode owns it)."""
        if self._own_runner:
            self._runner.close()
