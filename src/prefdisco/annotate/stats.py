"""Agreement statistics over the human labels, and the builder LLM's agreement with the humans.

An *item* is one (scenario_id, attribute) pair. Only items labelled by every annotator enter the statistics
(``n_items``); items some annotators skipped are counted in ``n_items_partial`` and left out.

* ``fleiss_kappa``: Fleiss' κ over those items (statsmodels ``aggregate_raters`` + ``fleiss_kappa``). It is
  None, with a reason in ``fleiss_kappa_note``, for fewer than 2 annotators, no complete item, or when every
  rating carries the same label (κ is 0/0 then).
* ``annotator_accuracy_vs_majority``: per annotator, the share of items where their label equals the
  majority of the *other* annotators (None with fewer than 2 annotators);
  ``annotator_accuracy_vs_majority_all`` compares with the majority of *all* annotators, themselves included.
  ``mean_accuracy_vs_majority`` is the mean of the first.
* ``llm_vs_majority``: the builder's relevance flags (``llm_relevant``) against the majority of all
  annotators, with "relevant" as the positive class: accuracy, precision, recall, Cohen's κ (scikit-learn).
  An undefined value (e.g. precision with no LLM positive) is None.

Tie rule: a majority is taken over 0/1 votes, and a tie — possible only with an even number of voters —
counts as **relevant (1)**: an attribute half of the voters call relevant is kept, not dropped.

:func:`stats` is the ``prefdisco annotate stats`` entry point (labels from a database or an exported CSV).
Only that command imports this module, so serving and exporting never pay for scikit-learn and statsmodels.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_score, recall_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from prefdisco.annotate.labels import TIE_RULE, LabelRow, read_csv
from prefdisco.annotate.store import stored_labels
from prefdisco.errors import UserError


def majority(votes: np.ndarray) -> np.ndarray:
    """Row-wise majority of 0/1 votes (shape items x voters); a tie counts as 1."""
    votes = np.atleast_2d(votes)
    return (2 * votes.sum(axis=1) >= votes.shape[1]).astype(int)


@dataclass
class AgreementStats:
    fleiss_kappa: float | None
    fleiss_kappa_note: str | None
    annotator_accuracy_vs_majority: dict[str, float | None]
    annotator_accuracy_vs_majority_all: dict[str, float | None]
    mean_accuracy_vs_majority: float | None
    llm_vs_majority: dict[str, float | None]
    n_items: int
    n_annotators: int
    n_items_partial: int = 0
    tie_rule: str = field(default=TIE_RULE)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def stats(db: Path | None = None, csv: Path | None = None) -> AgreementStats:
    """``prefdisco annotate stats``: the statistics of a database's labels (``db``) or an exported CSV's."""
    if db is not None and csv is None:
        return agreement_stats(stored_labels(db))
    if csv is not None and db is None:
        return agreement_stats(read_csv(csv))
    raise UserError("give exactly one of --db or --from")


def agreement_stats(rows: list[LabelRow]) -> AgreementStats:
    annotators = sorted({r.annotator for r in rows})
    votes: dict[tuple[str, str], dict[str, int]] = {}
    llm: dict[tuple[str, str], int] = {}
    for r in rows:
        votes.setdefault((r.scenario_id, r.attribute), {})[r.annotator] = r.label
        llm[(r.scenario_id, r.attribute)] = r.llm_relevant
    complete = sorted(item for item, by in votes.items() if len(by) == len(annotators))
    labels = np.array([[votes[i][a] for a in annotators] for i in complete], dtype=int).reshape(
        len(complete), len(annotators)
    )
    kappa, note = _fleiss(labels)
    loo = _leave_one_out_accuracy(labels, annotators)
    everyone = majority(labels) if labels.size else np.zeros(0, dtype=int)
    defined = [v for v in loo.values() if v is not None]
    return AgreementStats(
        fleiss_kappa=kappa,
        fleiss_kappa_note=note,
        annotator_accuracy_vs_majority=loo,
        annotator_accuracy_vs_majority_all={
            a: float(np.mean(labels[:, j] == everyone)) if labels.size else None for j, a in enumerate(annotators)
        },
        mean_accuracy_vs_majority=float(np.mean(defined)) if defined else None,
        llm_vs_majority=_llm_agreement(everyone, np.array([llm[i] for i in complete], dtype=int)),
        n_items=len(complete),
        n_annotators=len(annotators),
        n_items_partial=len(votes) - len(complete),
    )


def _fleiss(labels: np.ndarray) -> tuple[float | None, str | None]:
    n_items, n_annotators = labels.shape
    if n_annotators < 2:
        return None, f"Fleiss' kappa needs at least 2 annotators; found {n_annotators}"
    if n_items == 0:
        return None, "no item was labelled by every annotator"
    if np.all(labels == labels.flat[0]):
        return None, "undefined: every rating carries the same label (chance agreement is 1)"
    table, _ = aggregate_raters(labels, n_cat=2)
    return float(fleiss_kappa(table, method="fleiss")), None


def _leave_one_out_accuracy(labels: np.ndarray, annotators: list[str]) -> dict[str, float | None]:
    n_items, n_annotators = labels.shape
    if n_annotators < 2 or n_items == 0:
        return dict.fromkeys(annotators)
    return {a: float(np.mean(labels[:, j] == majority(np.delete(labels, j, axis=1)))) for j, a in enumerate(annotators)}


def _llm_agreement(human: np.ndarray, llm: np.ndarray) -> dict[str, float | None]:
    keys = ("accuracy", "precision", "recall", "cohen_kappa")
    if human.size == 0:
        return dict.fromkeys(keys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = (
            accuracy_score(human, llm),
            precision_score(human, llm, labels=[0, 1], zero_division=np.nan),
            recall_score(human, llm, labels=[0, 1], zero_division=np.nan),
            cohen_kappa_score(human, llm, labels=[0, 1]),
        )
    return {k: (None if v is None or math.isnan(float(v)) else float(v)) for k, v in zip(keys, values, strict=True)}
