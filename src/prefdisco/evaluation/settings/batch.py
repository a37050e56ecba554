"""``prefdisco eval --batch``: the calls no one waits for, sent through the provider's batch API by inspect.

A batch API answers within hours at half the price (OpenAI's Batch API, Anthropic's Message Batches, Gemini's
Batch Mode; inspect's ``GenerateConfig.batch`` drives each). A call may wait that long only when no turn of the
dialogue waits for it, and exactly those go by batch:

* every judge call, made when the sample's dialogue has ended (the rubric, the audit, correctness, the quality: the
  ``grader`` roles' calls from the scorer);
* the model under test's answer in a single-turn condition (baseline, oracle, wrong_persona, oracle_distractor)
  without ``--pushback``: the sample's only turn.

Everything a turn waits for stays real-time: every turn of a dialogue (discovery, fixed-K, stated-belief, the carry
arms), the simulated user, the targeted user's mapping of each question (on the judge's model, as its own role
``mapper``: ``dialogue/targeted.mapping_model``), and under ``--pushback`` every answer of a single-turn condition
(the person's challenge waits for the answer, the reply for the challenge).

The flag's value, as inspect's own ``--batch`` takes it: ``on`` (inspect's defaults: batches of up to 100 requests,
sent after 15 s without more), a batch size, or a JSON file of ``BatchConfig`` fields (``size``, ``send_delay``,
``tick``, ``max_batches`` …). A run that batches records it (``run.json``: ``batch``, a setting that changes no
result); each task's metadata says which of its roles were batched (``BATCHED_KEY``), and the results rows'
``batched`` column carries it, so ``cost_usd`` prices those calls at the provider's batch share
(``prices.batch_share``) and the report says which calls went by batch.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.model import BatchConfig, GenerateConfig
from pydantic import ValidationError

from prefdisco.dialogue.plan import SINGLE_TURN
from prefdisco.errors import UserError
from prefdisco.prices import sent_by_batch
from prefdisco.results.contract import BATCHED_KEY

__all__ = ["BATCHED_KEY", "answers_by_batch", "batch_value", "batched_roles", "check_batch", "with_batch"]


def batch_value(value: str | None) -> bool | int | BatchConfig | None:
    """``--batch``'s value as inspect's ``GenerateConfig.batch`` takes it; a bad value is a one-line error."""
    if value is None:
        return None
    text = value.strip()
    if text.lower() in ("on", "true", "yes"):
        return True
    if text.isdigit():
        if int(text) < 1:
            raise UserError(f"--batch {value}: a batch size is at least 1")
        return int(text)
    path = Path(text)
    if not path.is_file():
        raise UserError(f"--batch {value}: expected 'on', a batch size or a JSON file of batch settings")
    try:
        return BatchConfig.model_validate(json.loads(path.read_text()))
    except (ValueError, ValidationError) as err:
        reason = " ".join(str(err).split())[:200]
        what = "not a JSON object of batch settings (size, send_delay, tick)"
        raise UserError(f"--batch {value}: {what}: {reason}") from None


def answers_by_batch(mode: str, pushback: int = 0) -> bool:
    """Whether the model under test's answer in condition ``mode`` waits for no turn: a single-turn condition
    without ``--pushback`` (module docstring)."""
    return mode in SINGLE_TURN and not pushback


def part_by_batch(role: str, part: str, pushback: int = 0) -> bool:
    """Whether ``--batch`` sends the dry run's calls of ``role`` in ``part`` (its plan line) by batch: the judges'
    (not the targeted user's mapping, part ``mapper``: a turn waits for it) and a one-reply condition's answers
    (``answers_by_batch``; a fixed-K part is a dialogue)."""
    grader = role == "grader" and part != "mapper"
    return grader or (role == "assistant" and answers_by_batch(part, pushback))


def batched_roles(mode: str, batch: bool, pushback: int = 0) -> list[str]:
    """The roles a task of condition ``mode`` sends by batch: the judges always, the model under test's answer only
    where no turn waits for it (``answers_by_batch``)."""
    if not batch:
        return []
    return ["assistant", "grader"] if answers_by_batch(mode, pushback) else ["grader"]


def with_batch(config: GenerateConfig, value: str | None) -> GenerateConfig:
    """``config`` with ``--batch``'s value (unchanged without it)."""
    parsed = batch_value(value)
    return config if parsed is None else config.model_copy(update={"batch": parsed})


def check_batch(value: str | None, models: list[str], judges: list[str], modes: list[str], pushback: int = 0) -> None:
    """Refuse ``--batch`` where it would batch nothing: no judge and no model under test of a single-turn condition
    without pushback on a provider with a batch API."""
    if value is None:
        return
    batch_value(value)
    single_turn = [m for m in modes if answers_by_batch(m, pushback)]
    candidates = judges + (models if single_turn else [])
    if not any(sent_by_batch(m) for m in candidates):
        raise UserError(
            f"--batch: none of {', '.join(dict.fromkeys(candidates))} has a batch API inspect drives (openai, "
            "anthropic, google, grok, together); the dialogues, the simulated user and the answers a pushback "
            "challenges are never batched"
        )
