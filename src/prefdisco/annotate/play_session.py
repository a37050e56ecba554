"""Play the user: a person answers, live, the questions of the model under test, through the one dialogue engine.

Each (participant, scenario) is one ``Dialogue`` (``dialogue/engine.py``) of the study's condition, started from
the condition's own opening (``dialogue/openings.py``) and with no simulated user: the engine hands every question
back as pending and the participant's text is given to it as the user's reply (``Dialogue.reply``). How a dialogue
runs, resumes, is scored and what its tokens count are described once, in docs/evaluation.md, "Play the user".

Every reply is screened (``dialogue/hygiene.py``) and never drawn again, since a person has no model to redraw
from (``redraw`` is only reached through a simulated user, and returns None for a user without a model). The
model under test is called here, server-side, through inspect (``get_model``: keys stay in the server's
environment, never in a page). After every step the dialogue's state is written to the database
(``PlayStore.save``, versioned); one lock per (participant, scenario) orders the steps of one dialogue. A finished
dialogue is scored with the scorer's own code (``scoring/finished.score_finished``, the path the RL episode scores
through), and every call's tokens are counted (``call_usage.counting``) and stored with the dialogue
(``play_store.PlayUsage``), with what each role's first request carried (``sent_settings.recording_sent``), so the
export settles the study's protocol as ``prefdisco eval`` settles a run's.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model
from inspect_ai.scorer import Score
from pydantic import BaseModel, ConfigDict

from prefdisco.annotate.play_store import PlayItem, PlayStore, PlayUsage, StaleDialogue, StoredDialogue
from prefdisco.call_usage import counting
from prefdisco.dialogue.dialogue_state import DialogueRules, DialogueState
from prefdisco.dialogue.drive import play
from prefdisco.dialogue.engine import Dialogue
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.plan import MAX_DISCOVERY_QUESTIONS, PlanSettings, condition_key, opening_for, rules_for
from prefdisco.dialogue.presets import PRESET_NAMES, preset_named
from prefdisco.dialogue.tool_protocol import ASK_CHANNELS
from prefdisco.dialogue.wrong_answers import wrong_answer, wrong_answer_key
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import DEFAULT_SETTINGS
from prefdisco.evaluation.settings.preset_rules import check_ask, contradiction
from prefdisco.results.protocol_record import renamed
from prefdisco.results.sample_rows import error_cause
from prefdisco.results.sent_settings import recording_sent
from prefdisco.schema import Mode, Scenario
from prefdisco.scoring.finished import score_finished
from prefdisco.seeds import call_seed, seed_scope, seeded_model

log = logging.getLogger(__name__)

PLAY_MODES = ("discovery", "fixed_k")
JUDGE_ROLE = "grader"
"""The role the judge's calls are recorded under (the judge is a model the study built, with no inspect role): an
eval's judge's, so the export's protocol reads them as the judge's (``play_export``)."""
REFERENCE_CONDITIONS = (Mode.BASELINE.value, Mode.ORACLE.value)


PLAY_MAX_TOKENS = 1024
"""The longest turn of the model under test a participant is shown (its tokens): a question or an answer a person
reads, not a wall of text (``prefdisco eval`` leaves the model its provider's limit)."""


class PlaySettings(BaseModel):
    """What a play study runs: the condition, its budget, the seed, the judge, and whether to add references."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: str = "discovery"
    k: int = MAX_DISCOVERY_QUESTIONS
    seed: int = 0
    judge: str = "per_criterion"
    references: bool = True
    ask: str = "text"
    preset: str = "default"

    def model_post_init(self, context: Any, /) -> None:
        if self.mode not in PLAY_MODES:
            raise UserError(f"--mode: expected one of {', '.join(PLAY_MODES)}, got {self.mode!r}")
        if self.ask not in ASK_CHANNELS:
            raise UserError(f"--ask: expected one of {', '.join(ASK_CHANNELS)}, got {self.ask!r}")
        if self.preset not in PRESET_NAMES:
            raise UserError(f"--preset: expected one of {', '.join(PRESET_NAMES)}, got {self.preset!r}")
        check_ask(self.ask, self.preset, False, None)
        fixed = preset_named(self.preset).settings
        if fixed.get("judge", self.judge) != self.judge:
            raise UserError(contradiction(self.preset, "judge", self.judge, fixed["judge"]))
        if self.mode == "discovery" and fixed.get("max_questions", self.k) != self.k:
            raise UserError(
                f"--k {self.k} contradicts --preset {self.preset}, which fixes discovery's budget to "
                f"{fixed['max_questions']}; drop the flag, or use --preset default to choose it yourself"
            )
        low = 1 if self.mode == "fixed_k" else 0
        if not low <= self.k <= MAX_DISCOVERY_QUESTIONS:
            raise UserError(f"--k: expected {low}..{MAX_DISCOVERY_QUESTIONS} for {self.mode}, got {self.k}")

    @property
    def condition(self) -> str:
        """The condition's key in seeds and caches, as ``prefdisco eval``'s (``plan.condition_key``): ``discovery`` or
        ``fixed_k<K>``."""
        return condition_key(Mode(self.mode), self.k if self.mode == "fixed_k" else None)

    @property
    def fixed_k(self) -> int | None:
        return self.k if self.mode == "fixed_k" else None

    def rules(self) -> DialogueRules:
        """The played dialogue's rules (``dialogue/plan.rules_for``): the study's budget K, a person's replies never
        redrawn, no pushback."""
        return rules_for(self.mode, PlanSettings(self.preset, self.ask, max_questions=self.k), self.fixed_k)

    def tested_config(self) -> GenerateConfig:
        """The model under test's generation settings: its provider's defaults, or the preset's temperature (as
        ``prefdisco eval --preset`` sends them), each turn capped at ``PLAY_MAX_TOKENS``: a person reads it."""
        temperature = preset_named(self.preset).settings.get("temperature")
        return GenerateConfig(temperature=temperature, max_tokens=PLAY_MAX_TOKENS)

    def judge_config(self) -> GenerateConfig:
        """The judge's: ``prefdisco eval``'s grader temperature (0), or the preset's."""
        fixed = preset_named(self.preset).settings
        return GenerateConfig(temperature=fixed.get("grader_temperature", DEFAULT_SETTINGS["grader_temperature"]))

    def opening(self, scenario: Scenario) -> list[ChatMessage]:
        return opening_for(self.mode, self.rules(), scenario, {})

    def meta(self) -> dict[str, str]:
        return {
            "mode": self.mode,
            "k": str(self.k),
            "seed": str(self.seed),
            "judge": self.judge,
            "references": "1" if self.references else "0",
            "ask": self.ask,
            "preset": self.preset,
        }

    @classmethod
    def from_meta(cls, meta: dict[str, str]) -> PlaySettings:
        meta = renamed(meta)  # a study stored before the ask channel had its own name
        return cls(
            mode=meta["mode"],
            k=int(meta["k"]),
            seed=int(meta["seed"]),
            judge=meta["judge"],
            references=meta.get("references", "1") == "1",
            ask=meta.get("ask", "text"),
            preset=meta.get("preset", "default"),
        )

    def seed_of(self, scenario_id: str, condition: str, epoch: int, role: str) -> int:
        return call_seed(seed_scope(self.seed), scenario_id, condition, epoch, role)

    def wrong_answer(self, scenario: Scenario) -> str | None:
        """The scenario's seeded wrong answer, as ``prefdisco eval --seed SEED`` names it (``belief_agreement``)."""
        return wrong_answer(scenario.problem, wrong_answer_key(seed_scope(self.seed), scenario.id))


@dataclass
class PlayView:
    """One dialogue as its page shows it."""

    item: PlayItem
    state: DialogueState
    status: str
    error: str | None = None

    @property
    def pending(self) -> str | None:
        return None if self.state.pending is None else self.state.pending.question

    @property
    def done(self) -> bool:
        return self.state.done and self.status == "scored"


@dataclass
class PlayStudy:
    """The running study: its store, the model under test, the judge and the settings."""

    store: PlayStore
    model: Model
    judge_model: Model
    settings: PlaySettings
    items: list[PlayItem] = field(default_factory=list)
    _locks: dict[Any, asyncio.Lock] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.items = self.items or self.store.play_items()
        self.by_position = {item.position: item for item in self.items}

    def lock(self, key: Any) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    # -- a participant's dialogue -----------------------------------------------------------------------------

    async def view(self, participant: str, position: int) -> PlayView:
        """The dialogue of ``participant`` on the scenario at ``position``, started on the first visit and moved
        on as far as the model can go without the participant (their reply, or the end)."""
        async with self.lock((participant, position)):
            stored = self.store.dialogue(participant, position)
            return await self._advance(participant, self.by_position[position], stored)

    async def reply(self, participant: str, position: int, text: str) -> PlayView:
        """Give the participant's ``text`` to the engine as the reply to the pending question, then move on."""
        async with self.lock((participant, position)):
            stored = self.store.dialogue(participant, position)
            if stored is None or stored.state.pending is None:
                raise LookupError("no question is waiting for your reply")
            dialogue = Dialogue.restore(stored.state, screen=Screen(self.by_position[position].scenario))
            await dialogue.reply(text)
            try:
                self.store.save(participant, position, dialogue.state, stored.version)
            except StaleDialogue:  # another server process moved this dialogue on first: show where it is
                return self._as_stored(participant, position)
            return await self._advance(
                participant, self.by_position[position], self.store.dialogue(participant, position)
            )

    async def _advance(self, participant: str, item: PlayItem, stored: StoredDialogue | None) -> PlayView:
        number = self.store.participant(participant).number
        scenario = item.scenario
        if stored is None:
            rules = self.settings.rules()
            dialogue = Dialogue.start(scenario.id, rules, self.settings.opening(scenario), screen=Screen(scenario))
            usage = PlayUsage()
            version = self.store.save(participant, item.position, dialogue.state, 0, usage=usage)
        elif stored.status == "scored":
            return PlayView(item, stored.state, stored.status)
        else:
            dialogue = Dialogue.restore(stored.state, screen=Screen(scenario))
            version, usage = stored.version, stored.usage
        condition = self.settings.condition
        model = seeded_model(self.model, self.settings.seed_of(scenario.id, condition, number, "assistant"))
        base = usage
        try:
            with counting() as spent, recording_sent() as sent:

                def save_step(played: Dialogue) -> None:  # after every step, with what its calls spent so far
                    nonlocal version
                    usage_now = base.plus(spent, sent=sent)
                    version = self.store.save(participant, item.position, played.state, version, usage=usage_now)

                try:  # the one model loop, stopping where the person must reply
                    await play(dialogue, model, until_pending=True, after_step=save_step)
                finally:  # a call that failed half-way has still spent what its finished calls did
                    usage = base.plus(spent, sent=sent)
            if not dialogue.done:
                return PlayView(item, dialogue.state, "running")
            with counting() as spent, recording_sent(JUDGE_ROLE) as sent:
                try:
                    score = await self._score(scenario, dialogue.state, condition, number)
                finally:  # a judging that failed half-way has still spent its finished calls
                    usage = usage.plus(spent, judge=True, sent=sent)
            self.store.save(participant, item.position, dialogue.state, version, "scored", score=score, usage=usage)
        except StaleDialogue:  # another server process moved this dialogue on first: show where it is
            return self._as_stored(participant, item.position)
        except Exception as e:  # a provider's error: kept (one line), and the next visit tries again
            cause = error_cause(str(e) or type(e).__name__)
            log.warning("play: dialogue %s of participant #%s: %s", scenario.id, number, cause)
            self.store.save(participant, item.position, dialogue.state, version, "error", error=cause, usage=usage)
            return PlayView(item, dialogue.state, "error", cause)
        if self.settings.references:
            await self._references(item)
        return PlayView(item, dialogue.state, "scored")

    def _as_stored(self, participant: str, position: int) -> PlayView:
        stored = self.store.dialogue(participant, position)
        assert stored is not None  # a stale write means another one was stored
        return PlayView(self.by_position[position], stored.state, stored.status, stored.error)

    async def _score(self, scenario: Scenario, state: DialogueState, condition: str, epoch: int) -> Score:
        return await score_finished(
            scenario,
            state,
            self.judge_model,
            grader_seed=self.settings.seed_of(scenario.id, condition, epoch, "grader"),
            judge=self.settings.judge,
            wrong_answer=self.settings.wrong_answer(scenario),
        )

    # -- baseline and oracle ----------------------------------------------------------------------------------

    async def _references(self, item: PlayItem) -> None:
        """Baseline and oracle of ``item``'s scenario, played and scored once (epoch 1), for NormAlign."""
        async with self.lock(("references", item.scenario_id)):
            done = {condition for sid, condition in self.store.references() if sid == item.scenario_id}
            for condition in REFERENCE_CONDITIONS:
                if condition in done:
                    continue
                try:
                    with counting() as answered, recording_sent() as sent:
                        state = await self._single_turn(item.scenario, condition)
                    with counting() as judged, recording_sent(JUDGE_ROLE) as judge_sent:
                        score = await self._score(item.scenario, state, condition, 1)
                except Exception as e:  # tried again when the next dialogue of this scenario ends
                    log.warning("play: %s of %s: %s", condition, item.scenario_id, error_cause(str(e) or repr(e)))
                    continue
                usage = PlayUsage().plus(answered, sent=sent).plus(judged, judge=True, sent=judge_sent)
                self.store.save_reference(item.scenario_id, condition, state, score, usage)

    async def _single_turn(self, scenario: Scenario, condition: str) -> DialogueState:
        rules = rules_for(condition, PlanSettings(self.settings.preset))  # the preset's own prompts
        opening = opening_for(condition, rules, scenario, {})
        dialogue = Dialogue.start(scenario.id, rules, opening, screen=Screen(scenario))
        model = seeded_model(self.model, self.settings.seed_of(scenario.id, condition, 1, "assistant"))
        await play(dialogue, model)
        return dialogue.state
