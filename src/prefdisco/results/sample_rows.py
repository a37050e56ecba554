"""One finished sample as table rows: its results row, its judged criteria and its transcript.

``sample_rows(spec, sample)`` needs only the task's spec (model, metadata, model roles) and the sample itself, so
the same rows come from a sample read back from an eval log (``logs.py``) and from a sample handed to the
streaming hook the moment it finishes (``stream.py``). Costs are left out: they depend on the price table of
whoever reads the rows (``logs.with_cost``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from prefdisco.dialogue.carry import SESSION_KEY
from prefdisco.dialogue.hygiene import flag_reasons
from prefdisco.dialogue.targeted import MAPPER_ROLE
from prefdisco.prices import sent_by_batch
from prefdisco.results.contract import (
    BATCHED,
    BATCHED_KEY,
    COVERAGE,
    DEFAULT_JUDGE,
    DEFAULT_REPEAT,
    END_COLUMNS,
    IN_PREF_ALIGN,
    JUDGE_CALL,
    JUDGE_POSITION,
    PROTOCOL_ID,
    QUALITY,
    SENT_REAL_TIME,
    SESSION_LABEL,
    SIMULATOR_COLUMNS,
    UNSCORED_REASON,
    USER_FLAG_REASONS,
)
from prefdisco.results.judgings import extra_judgements, extra_usage, first_judging_roles, primary_score
from prefdisco.results.strategy_columns import strategy_columns
from prefdisco.schema import DialogueTurn
from prefdisco.scoring.alignment import COVERAGE_REASON
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.non_answer import RESPONSE_STOP
from prefdisco.seeds import TrialSeeds

_FAMILIES = {
    "openai": "openai",
    "azureai": "openai",
    "anthropic": "anthropic",
    "bedrock": "anthropic",
    "google": "google",
    "vertex": "google",
    "prefdisco": "local",
    "llama-cpp-python": "local",
    "ollama": "local",
    "vllm": "local",
    "sglang": "local",
    "hf": "local",
    "mockllm": "mock",
}


def model_family(model: str) -> str:
    """Provider family of an inspect model name (``openai/gpt-4.1`` → ``openai``)."""
    provider, _, name = model.partition("/")
    if provider in ("openrouter", "together", "fireworks", "openai-api", "bedrock") and name:
        vendor = name.split("/")[0].lower()
        for family in ("openai", "anthropic", "google"):
            if family in vendor or (family == "anthropic" and "claude" in vendor):
                return family
        if "gemini" in name.lower():
            return "google"
        if "claude" in name.lower():
            return "anthropic"
    return _FAMILIES.get(provider, provider or "unknown")


def interrupted(error: str | None) -> bool:
    """Whether a sample's error (its message, as the log or its summary holds it) is the cancellation of an
    interrupted run (Ctrl-C: inspect cancels every running sample): a sample not finished, not a failure."""
    return bool(error) and str(error).lstrip().startswith("CancelledError")


def error_cause(message: str) -> str:
    """One line saying why a sample failed: the provider's ``Error code: ...`` line when there is one (a
    generate error's message also carries the request, prompt included), else its first line; at most 300 chars."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        found = re.search(r"Error code: \d+.*", line)
        if found:
            return found.group(0)[:300]
    for line in lines:
        if not line.startswith(("{", "[", '"')):
            return line[:300]
    return (lines[0] if lines else "unknown error")[:300]


def role_model(spec: Any, role: str) -> str | None:
    """The model name a task's spec (``EvalSpec``) gives ``role``."""
    config = (spec.model_roles or {}).get(role)
    if isinstance(config, list):
        config = config[0] if config else None
    return getattr(config, "model", None)


def batched(roles: Any, model: str, judge: str | None) -> str | None:
    """The ``batched`` column: the task's batched roles whose model inspect sends by batch (``prices.sent_by_batch``:
    any other model's calls go as usual)."""
    kept = [r for r in roles if sent_by_batch(model if r == "assistant" else judge or "")]
    return " ".join(kept) or None


def _is_judge(role: str) -> bool:
    """The first judge's role ``grader`` or a panel judge's ``grader_2``, ``grader_3``, …"""
    return role == "grader" or role.startswith("grader_")


def _on_grader(role: str) -> bool:
    """A role whose calls the judge's model makes and the ``grader_*`` columns count: the judges, and the targeted
    user's question mapping (its own role ``mapper``, real-time even under ``--batch``)."""
    return _is_judge(role) or role == MAPPER_ROLE


USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "input_tokens_cache_read",
    "cache_write_tokens": "input_tokens_cache_write",
    "reasoning_tokens": "reasoning_tokens",
}
"""A results column (per role) → inspect's ``ModelUsage`` field: ``input_tokens`` is billed at the full rate (cached
input apart, read and written), ``reasoning_tokens`` are part of ``output_tokens``."""


def _usage(sample: Any) -> dict[str, int]:
    """Tokens of the model under test, the user and the judges (``grader_*``: every judge of a panel, and the
    targeted user's mapping on the first judge's model), each kind of ``USAGE_FIELDS``: the user's and the judges'
    from their roles, the model's the rest."""
    roles = dict(sample.role_usage or {})
    models = list((sample.model_usage or {}).values())
    row = {}
    for column, name in USAGE_FIELDS.items():
        total = sum(getattr(u, name) or 0 for u in models)
        for role in ("user", "grader"):
            usage = [u for r, u in roles.items() if (_on_grader(r) if role == "grader" else r == role)]
            row[f"{role}_{column}"] = sum(getattr(u, name) or 0 for u in usage)
        row[column] = total - row[f"user_{column}"] - row[f"grader_{column}"]
    return row


def session_columns(metadata: dict[str, Any]) -> dict[str, Any]:
    """``session_id`` and ``position`` of a sample of a sessions run (``dialogue/carry.SESSION_KEY``), else empty."""
    where = metadata.get(SESSION_KEY) or {}
    return {"session_id": where.get("session_id"), "position": where.get("position")}


def scores_digest(scores: dict[str, Any] | None) -> dict[str, Any]:
    """Each score's value by scorer name: what a sample summary in the log also holds, so a reader can tell that
    rows were made from the sample as the log has it now (a rescored log has other values)."""
    return {name: getattr(score, "value", None) for name, score in sorted((scores or {}).items())}


def pushback_turns(score: Any) -> list[dict[str, Any]]:
    """The pushback after the final answer (``--pushback``) as a transcript keeps it: each challenge, the reply and
    the correctness of the answer the assistant holds after the reply (1, 0; None: not judged) and whether the reply
    was held (1: no answer read in it, so it keeps the answer before it; ``scoring/harms.py``), from the score's
    metadata; empty without pushback."""
    meta = (score.metadata or {}) if score is not None else {}
    checks = iter(meta.get("pushback_checks") or [])  # one per reply given, in order (``scoring/harms.py``)
    recorded = "pushback_kept" in meta  # absent in a log of an earlier version: there, each reply's own check
    kept = iter(meta.get("pushback_kept") or [])
    turns = []
    for turn in meta.get("pushback") or []:
        check = next(checks, None) if turn.get("reply") is not None else None
        result = None if check is None else CorrectnessResult.model_validate(check)
        held = None if result is None or result.answered is None else int(not result.answered)
        if result is None:
            correct = None
        elif recorded:
            correct = next(kept, None)
        else:
            correct = int(result.correct) if result.answered and result.correct is not None else None
        turns.append({"challenge": turn.get("challenge"), "reply": turn.get("reply"), "correct": correct, "held": held})
    return turns


def _flag_reasons(score: Any) -> str | None:
    """The ``user_flag_reasons`` of a sample: the hygiene faults of its dialogue's kept replies, from the score's
    recorded turns (``dialogue/hygiene.flag_reasons``); None without a screened reply (an older log too)."""
    turns = (score.metadata or {}).get("turns") if score is not None else None
    return flag_reasons([DialogueTurn.model_validate(t) for t in turns or []])


@dataclass
class SampleRows:
    """The rows of one sample (one trial of one scenario in one condition)."""

    uuid: str | None
    result: dict[str, Any]
    attributes: list[dict[str, Any]] = field(default_factory=list)
    transcript: dict[str, Any] = field(default_factory=dict)
    judge_usage: list[tuple[Any, ...]] = field(default_factory=list)
    """(model, input, output tokens[, cache read, cache write][, how sent]) of every role on a judge's model (the
    judges, the targeted user's ``mapper``) and every further judging, for ``cost_usd``; how it was sent
    (``contract.SENT_BY_BATCH`` / ``SENT_REAL_TIME``) where the row's ``batched`` does not say it."""
    scores: dict[str, Any] = field(default_factory=dict)
    """``scores_digest`` of the sample the rows were made from."""


def sample_rows(spec: Any, sample: Any) -> SampleRows:
    """The rows of ``sample`` (an ``EvalSample``) of the task ``spec`` (an ``EvalSpec``)."""
    meta = spec.metadata or {}
    model = spec.model
    key = {"model": model, "mode": meta["prefdisco_mode"], "fixed_k": meta.get("prefdisco_fixed_k")}
    score, judged = primary_score(sample.scores)  # a --judge later sample not judged yet: pending, not failed
    judge_roles = first_judging_roles(spec)  # a judging prefdisco judge applied names its own judges

    def judge_model(role: str) -> str | None:
        return judge_roles.get(role) or role_model(spec, role)

    seeds = sample.store_as(TrialSeeds)
    trial = {"epoch": int(sample.epoch)}
    seeded = {"assistant_seed": seeds.assistant, "user_seed": seeds.user, "grader_seed": seeds.grader}
    value = score.value if score is not None and isinstance(score.value, dict) else {}
    score_meta = (score.metadata or {}) if score is not None else {}
    task = (sample.metadata or {}).get("benchmark", spec.task)
    failed = sample.error is not None or score is None
    # a judged response without PrefAlign: its valid criteria cover less than half the weight (none at all included)
    unscored = judged and not failed and value.get("pref_align") is None
    result = {
        **key,
        **trial,
        "family": model_family(model),
        "task": task,
        "scenario_id": str(sample.id),
        "pref_align": value.get("pref_align"),
        COVERAGE: value.get(COVERAGE),
        UNSCORED_REASON: score_meta.get(UNSCORED_REASON) or (COVERAGE_REASON if unscored else None),
        "correct": value.get("correct"),
        "n_questions": value.get("n_questions"),
        "judge_invalid": value.get("judge_invalid"),
        "user_turns": value.get("user_turns"),
        "user_leaks": value.get("user_leaks"),
        **{name: value.get(name) for name in SIMULATOR_COLUMNS},
        USER_FLAG_REASONS: _flag_reasons(score),
        "user_model": role_model(spec, "user"),
        "grader_model": judge_model("grader"),
        PROTOCOL_ID: meta.get("prefdisco_protocol_id"),
        BATCHED: batched(meta.get(BATCHED_KEY) or (), model, judge_model("grader")),
        "decoy_scenario_id": (sample.metadata or {}).get("decoy_scenario_id"),
        "pushback_target": (score.metadata or {}).get("pushback_target") if score is not None else None,
        "correct_after_pushback": value.get("correct_after_pushback"),
        "flip_turn": value.get("flip_turn"),
        "pushback_held": value.get("pushback_held"),
        "belief_agreement": value.get("belief_agreement"),
        QUALITY: value.get(QUALITY),
        END_COLUMNS[0]: score_meta.get(RESPONSE_STOP),  # the final response's stop reason: text, in the metadata
        **{name: value.get(name) for name in END_COLUMNS[1:]},
        **session_columns(sample.metadata or {}),
        **strategy_columns(sample, meta),
        "judged": judged,
        "failed": int(failed),
        "error": error_cause(sample.error.message) if sample.error else ("not scored" if score is None else None),
        **_usage(sample),
        **seeded,
    }
    session_labels = ((sample.metadata or {}).get(SESSION_KEY) or {}).get("labels") or {}
    attributes = [
        {
            **key,
            **trial,
            "task": task,
            "scenario_id": str(sample.id),
            "attribute": j["attribute"],
            "weight": j["weight"],
            "score": j["score"],
            "judge": judge,
            "repeat": int(j.get("repeat", DEFAULT_REPEAT)),
            IN_PREF_ALIGN: in_pref_align,
            SESSION_LABEL: session_labels.get(j["attribute"]),
            JUDGE_CALL: j.get(JUDGE_CALL),
            JUDGE_POSITION: j.get(JUDGE_POSITION),
        }
        for judge, j, in_pref_align in [
            *(
                (judge_model(j.get("judge_role", "grader")) or j.get("judge") or DEFAULT_JUDGE, j, 1)
                for j in ((score.metadata or {}).get("judgements", []) if score is not None else [])
            ),
            # further judges (prefdisco judge): their own names, reported beside PrefAlign, never inside it
            *((judge, j, 0) for judge, j in extra_judgements(spec, sample.scores)),
        ]
    ]
    transcript = {
        **key,
        **trial,
        **seeded,
        "task": task,
        "scenario_id": str(sample.id),
        "messages": [{"role": m.role, "content": m.text} for m in sample.messages],
        "turns": (score.metadata or {}).get("turns", []) if score else [],
        "final_response": score.answer if score else None,
    }
    pushback = pushback_turns(score)
    if pushback:  # the challenges and replies that end ``messages`` (read by ``export-training``)
        transcript["pushback"] = pushback
    judges: list[tuple[Any, ...]] = [
        (
            judge_model("grader" if role == MAPPER_ROLE else role),
            u.input_tokens,
            u.output_tokens,
            u.input_tokens_cache_read or 0,
            u.input_tokens_cache_write or 0,
            *([SENT_REAL_TIME] if role == MAPPER_ROLE else []),  # never batched: a turn waits for it
        )
        for role, u in (sample.role_usage or {}).items()
        if _on_grader(role)
    ]
    judges += extra_usage(spec, sample.scores)  # further judgings (prefdisco judge): in cost_usd too
    return SampleRows(sample.uuid, result, attributes, transcript, judges, scores_digest(sample.scores))
