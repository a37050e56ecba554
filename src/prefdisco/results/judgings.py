"""Which judgings a log holds, as the results reader reads them.

A sample's scores (``scoring/deferred.py``):

* ``prefdisco_scorer`` — the first judging, inline or by ``prefdisco judge``: the results row is read from it;
* ``prefdisco_dialogue`` — a ``--judge later`` sample not judged yet: its row is *pending* (``judged`` 0,
  PrefAlign empty), never failed;
* ``prefdisco_judge``, ``prefdisco_judge1``, … — further judges (``prefdisco judge RUN_DIR --judge-model OTHER``):
  their criterion scores add attribute rows under their own judge names; the results row stays the first's.

A log ``prefdisco judge`` judged lists each judging it applied in its task metadata (``JUDGINGS``): the score key,
the judge models in panel order (roles ``grader``, ``grader_2``, …), the judge kind, repeats and log-probability
setting. A judgement's ``judge_role`` is mapped to a model through its own judging's list: the eval's
``model_roles`` (which ``prefdisco judge`` leaves untouched, so a rerun of ``prefdisco eval`` still recognises
its logs) name the judges of an inline judging only.
"""

from __future__ import annotations

from typing import Any

from prefdisco.prices import sent_by_batch
from prefdisco.results.contract import SENT_BY_BATCH, SENT_REAL_TIME
from prefdisco.scoring.deferred import EXTRA_SCORE, JUDGED_SCORE, PENDING_SCORE
from prefdisco.scoring.panel import panel_roles

JUDGINGS = "prefdisco_judgings"
USAGE_KEY = "usage"
"""A further judging's score metadata key: [model, input tokens, output tokens] of its calls for that sample."""
"""The task-metadata key of the judgings ``prefdisco judge`` applied to a log."""


def recorded_judgings(spec: Any) -> list[dict[str, Any]]:
    """The judgings ``prefdisco judge`` recorded in a log's ``EvalSpec`` (none for an inline-judged log)."""
    found = (getattr(spec, "metadata", None) or {}).get(JUDGINGS) or []
    return [j for j in found if isinstance(j, dict) and isinstance(j.get("score"), str)]


def judging_roles(record: dict[str, Any]) -> dict[str, str]:
    """role → judge model of one recorded judging."""
    models = [str(m) for m in record.get("models") or []]
    return dict(zip(panel_roles(len(models)), models, strict=True)) if models else {}


def first_judging_roles(spec: Any) -> dict[str, str]:
    """role → model of the log's first judging when ``prefdisco judge`` applied it; {} otherwise (then the eval's
    ``model_roles`` name the judges)."""
    for record in recorded_judgings(spec):
        if record["score"] == JUDGED_SCORE:
            return judging_roles(record)
    return {}


def primary_score(scores: dict[str, Any] | None) -> tuple[Any | None, int]:
    """The score a results row is read from and whether it is judged (1) or pending / absent (0)."""
    scores = scores or {}
    if JUDGED_SCORE in scores:
        return scores[JUDGED_SCORE], 1
    return scores.get(PENDING_SCORE), 0


def extra_judgements(spec: Any, scores: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    """(judge model, judgement record) of every further judging of one sample, in the order they were applied."""
    out: list[tuple[str, dict[str, Any]]] = []
    for record in recorded_judgings(spec):
        key = record["score"]
        score = (scores or {}).get(key)
        if not key.startswith(EXTRA_SCORE) or score is None:
            continue
        roles = judging_roles(record)
        for j in (score.metadata or {}).get("judgements", []):
            out.append((roles.get(j.get("judge_role", "grader")) or j.get("judge") or key, j))
    return out


def extra_usage(spec: Any, scores: dict[str, Any] | None) -> list[tuple[Any, ...]]:
    """(judge model, input, output tokens[, 0, 0, how sent]) of every further judging's calls for one sample (for
    ``cost_usd``): how they were sent (``SENT_BY_BATCH`` / ``SENT_REAL_TIME``) where the judging recorded it
    (``batched``; a judging recorded before it: as the row's ``batched`` says)."""
    out: list[tuple[Any, ...]] = []
    for record in recorded_judgings(spec):
        key = record["score"]
        score = (scores or {}).get(key)
        if key.startswith(EXTRA_SCORE) and score is not None:
            for m, i, o in (score.metadata or {}).get(USAGE_KEY, []):
                by_batch = bool(record.get("batched")) and sent_by_batch(str(m))
                how = () if "batched" not in record else (0, 0, SENT_BY_BATCH if by_batch else SENT_REAL_TIME)
                out.append((str(m), int(i), int(o), *how))
    return out
