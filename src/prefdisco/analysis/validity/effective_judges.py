"""How many independent votes a judge panel is worth: the effective number of judges, and one family's panel.

Judges that err together add less than a vote each. For a panel of n judges whose scores have mean pairwise
correlation ρ̄, the effective number of judges is ``n / (1 + (n − 1)·ρ̄)``: n when they are uncorrelated, 1 when
they agree perfectly (the field finds same-family panels worth about two votes).

**What is correlated.** The panel is the judges PrefAlign is made of (attribute rows with ``in_pref_align``; a judge
added afterwards is not part of it), over the rows a judge actually judged (``panel.judged_rows``: not of a failed
results row, nor a refused or empty response's scores by rule, on which every judge "agrees"). An *item* is one
criterion of one trial: (model, task, scenario_id, mode, fixed_k, epoch, attribute); a judge's score of an item is its
mean over its valid repeats (``panel.judge_means``). For each pair of judges, r is Pearson's correlation of their scores
over the items both scored validly. A pair with fewer than ``MIN_ITEMS`` (3) such items, or whose scores are constant
for either judge (r is 0/0), has no r, with the reason. ρ̄ is the mean of the pairs' r, defined only when every pair has
one (else None, with the first pair's reason: a mean over some pairs would be a different panel). A negative ρ̄ counts
as 0 in n_eff (judges that disagree systematically are not worth more than independent ones), so n_eff is at most n. One
judge: no n_eff (a panel needs two), with the reason.

**One family.** A judge's *family* (``judge_family``) is its provider — the vendor of a routed name
(``results.sample_rows.model_family``: ``openrouter/anthropic/claude-…`` is ``anthropic``) — and the leading
letters of the model's own name (the part after the last ``/``), lowercased: ``openai/gpt-4.1`` and
``openai/gpt-4.1-mini`` are both ``openai/gpt``, ``anthropic/claude-sonnet-4`` is ``anthropic/claude``,
``google/gemini-2.5-pro`` is ``google/gemini``, ``openai/o3`` is ``openai/o``. A panel of two or more judges all of
one family is warned about (``family_warning``: a Validity reading and a caveat at the report's top).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.stats.panel import judge_means, pref_align_judgements
from prefdisco.results.contract import CRITERION_KEY, JUDGE
from prefdisco.results.sample_rows import model_family

MIN_ITEMS = 3
"""A pair of judges needs at least this many items both scored to have a correlation."""
ONE_JUDGE = "a single judge: the effective number of judges needs a panel (--judge-model given at least twice)"
PAIR_COLUMNS = ["judge_a", "judge_b", "n_items", "r", "reason"]


def judge_family(model: str) -> str:
    """A judge's model family: its provider (a routed name's vendor) and the leading letters of its own name."""
    own = str(model).rsplit("/", 1)[-1].lower()
    prefix = re.match(r"[a-z]+", own)
    return f"{model_family(str(model))}/{prefix.group(0) if prefix else own}"


def family_warning(judges: Sequence[str]) -> str | None:
    """The warning for a panel of two or more judges all of one family; None otherwise."""
    names = sorted({str(j) for j in judges})
    families = {judge_family(j) for j in names}
    if len(names) < 2 or len(families) != 1:
        return None
    return (
        f"Every judge of the panel ({', '.join(names)}) is of one model family ({families.pop()}): same-family "
        "judges share their biases, so the panel is worth fewer independent votes than it has judges; add a judge "
        "of another family."
    )


@dataclass(frozen=True)
class EffectiveJudges:
    """The panel's judges, their families, the pairwise correlations, ρ̄ and n_eff (see the module docstring)."""

    judges: list[str]
    families: dict[str, str]
    pairs: pd.DataFrame
    rho_bar: float | None
    n_eff: float | None
    reason: str | None
    warning: str | None = None

    def summary(self) -> dict[str, Any]:
        """``summary.json``'s ``effective_judges``."""
        return {
            "judges": self.judges,
            "families": self.families,
            "n_judges": len(self.judges),
            "rho_bar": self.rho_bar,
            "n_eff": self.n_eff,
            "reason": self.reason,
            "pairs": [
                {
                    "judges": [r["judge_a"], r["judge_b"]],
                    "n_items": int(r["n_items"]),
                    "r": r["r"],
                    "reason": r["reason"],
                }
                for r in self.pairs.to_dict("records")
            ],
            "same_family": self.warning is not None,
            "warning": self.warning,
        }


def pair_correlation(a: np.ndarray, b: np.ndarray) -> tuple[float | None, str | None]:
    """Pearson's r of two judges' scores over the items both scored (NaN: not scored), or None with the reason."""
    both = ~np.isnan(a) & ~np.isnan(b)
    n = int(both.sum())
    if n < MIN_ITEMS:
        return None, f"{n} item(s) scored by both judges; need at least {MIN_ITEMS}"
    x, y = a[both], b[both]
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, "constant scores: a judge gave every shared item the same score, so r is undefined"
    return float(np.corrcoef(x, y)[0, 1]), None


def effective_judges(att: pd.DataFrame) -> EffectiveJudges | None:
    """The effective number of judges of the panel in ``att`` (``panel.judged_rows``); None without rows."""
    panel = pref_align_judgements(att)
    if panel.empty:
        return None
    judges = sorted(panel[JUDGE].astype(str).unique())
    families = {j: judge_family(j) for j in judges}
    warning = family_warning(judges)
    if len(judges) < 2:
        empty = pd.DataFrame([], columns=PAIR_COLUMNS)
        return EffectiveJudges(judges, families, empty, None, None, ONE_JUDGE, warning)
    means = judge_means(panel.assign(**{JUDGE: panel[JUDGE].astype(str)}))
    wide = means.set_index([*CRITERION_KEY, JUDGE])["score"].unstack(JUDGE).reindex(columns=judges)
    rows = []
    for a, b in itertools.combinations(judges, 2):
        x, y = wide[a].to_numpy(dtype=np.float64), wide[b].to_numpy(dtype=np.float64)
        r, why = pair_correlation(x, y)
        rows.append([a, b, int((~np.isnan(x) & ~np.isnan(y)).sum()), r, why])
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    undefined = [r for r in rows if r[3] is None]
    if undefined:
        a, b, _, _, why = undefined[0]
        return EffectiveJudges(judges, families, pairs, None, None, f"no correlation for {a} and {b}: {why}", warning)
    rho_bar = math.fsum(r[3] for r in rows) / len(rows)
    n = len(judges)
    n_eff = n / (1 + (n - 1) * max(rho_bar, 0.0))
    return EffectiveJudges(judges, families, pairs, rho_bar, n_eff, None, warning)
