"""The caveats a reader must see before any number: one rule each, in one place.

The report puts them at its top (``report.html``, ``report.md``, ``summary.json`` key ``caveats``) and
``prefdisco report`` prints them; ``prefdisco demo`` prints the caveats of the report it made, so the console and
the report say the same lines.

* **The embedded model** (``plumbing_note``): a run one of whose models is an embedded ``prefdisco/...`` model
  (the assistant, simulated user or grader of the results table, a judge of the attribute table) proves the
  plumbing, not quality.
* **A benchmark built by the embedded model** (``embedded_build``): a run whose protocol record names an embedded
  model among its benchmark's builders (``protocol.json``'s ``builders``): its personas, profiles and rubrics are a
  small model's, whatever models the run itself used.
* **Discovery asked no question**: a (model, task) cell whose discovery rows that did not fail asked 0 questions
  on average; its discovery rows are baseline answers under another prompt.
* **NormAlign over a tiny gap**: a cell with a defined NormAlign whose denominator, the oracle − baseline mean
  PrefAlign over the cell's scenarios (``normalign.py``), is smaller than ``TINY_GAP`` in size.
* **A panel of one family** (``panel_family``): every judge PrefAlign is made of (two or more) is of one model
  family (``effective_judges.judge_family``); such judges share their biases.

A caveat that holds in every cell it can apply to (or in a run of one cell) is one line without cell names;
otherwise the line names the cells (``model/task``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from prefdisco.analysis.stats.panel import pref_align_judgements
from prefdisco.analysis.validity.effective_judges import family_warning
from prefdisco.results.contract import JUDGE
from prefdisco.schema import Mode

EMBEDDED_PREFIX = "prefdisco/"
"""The provider prefix of the embedded llama.cpp models (``models/llama_cpp.py``)."""
TINY_GAP = 0.25
"""An oracle − baseline PrefAlign gap (on the 1-5 scale) below this makes NormAlign meaningless."""
REAL_MODEL_HINT = "The same demo on a real model (every role): prefdisco demo --model openai/gpt-4.1"
SILENT_DISCOVERY = (
    "Discovery asked no question{where}: the model answered at once (the protocol lets it), "
    "so its discovery rows are baseline answers under another prompt."
)
TINY_NORMALIGN = (
    "NormAlign divides by oracle - baseline PrefAlign, here {gaps}: "
    "over so small a gap it swings by hundreds of points and means nothing."
)


def embedded_models(models: Iterable[str]) -> list[str]:
    """The embedded models among ``models``, sorted, each once."""
    return sorted({str(m) for m in models if str(m).startswith(EMBEDDED_PREFIX)})


def plumbing_note(models: Iterable[str]) -> str | None:
    """The embedded-model note when one of ``models`` is an embedded model, else None."""
    embedded = embedded_models(models)
    if not embedded:
        return None
    return (
        f"The embedded model {', '.join(embedded)} proves the plumbing, not quality: its numbers say nothing "
        f"about personalization. {REAL_MODEL_HINT}"
    )


PLUMBING_NOTE = plumbing_note(["prefdisco/smollm2"])
"""The note of the demo's own embedded model."""


def embedded_build(protocols: Sequence[Any]) -> str | None:
    """The caveat of runs on a benchmark built by an embedded model (a ``RunProtocol``'s record's ``builders``),
    naming the runs when not every run is one; None when none is."""
    built = {p.run: embedded_models(p.record.builders) for p in protocols if p.record is not None}
    on_embedded = {run: models for run, models in built.items() if models}
    if not on_embedded:
        return None
    models = sorted({m for found in on_embedded.values() for m in found})
    where = "" if len(on_embedded) == len(protocols) else f" ({', '.join(sorted(on_embedded))})"
    return (
        f"The benchmark was built by the embedded model {', '.join(models)}{where}: its personas, profiles and "
        "rubrics prove the build's plumbing, not a benchmark, so no number here measures personalization; build "
        "one with a real model (prefdisco build --model ...)."
    )


def silent_discovery(results: pd.DataFrame) -> str | None:
    """The discovery caveat of a results frame (trials averaged), or None."""
    rows = results.loc[
        (results["mode"].astype(str) == Mode.DISCOVERY.value).to_numpy()
        & ~results["failed"].to_numpy()
        & results["n_questions"].notna().to_numpy()
    ]
    if rows.empty:
        return None
    means = rows.astype({"model": str, "task": str}).groupby(["model", "task"], sort=True)["n_questions"].mean()
    silent = [key for key, value in means.items() if value == 0]
    if not silent:
        return None
    where = "" if len(silent) == len(means) else " in " + ", ".join("/".join(key) for key in silent)
    return SILENT_DISCOVERY.format(where=where)


def tiny_normalign(cells: pd.DataFrame) -> str | None:
    """The tiny-gap caveat of the NormAlign cells (``normalign.normalign_cells``), or None."""
    defined = cells.loc[pd.to_numeric(cells["normalign"], errors="coerce").notna()]
    gaps = []
    for row in defined.itertuples(index=False):
        gap = float(row.mean_oracle) - float(row.mean_baseline)
        if abs(gap) < TINY_GAP:
            gaps.append((f"{gap:+.2f}", f"{row.model}/{row.task}"))
    if not gaps:
        return None
    if len(defined) == 1:
        return TINY_NORMALIGN.format(gaps=gaps[0][0])
    return TINY_NORMALIGN.format(gaps=", ".join(f"{gap} ({cell})" for gap, cell in gaps))


ROLE_COLUMNS = ("model", "user_model", "grader_model")
"""The results columns that name a run's models (the last two written by ``prefdisco eval``, optional on input)."""


def run_models(results: pd.DataFrame, attributes: pd.DataFrame | None) -> list[str]:
    """The models a run's tables name: assistant, simulated user and grader (results) and the judges (attributes)."""
    models: set[str] = set()
    for column in ROLE_COLUMNS:
        if column in results.columns:
            models |= set(results[column].dropna().astype(str))
    if attributes is not None and JUDGE in attributes.columns:
        models |= set(attributes[JUDGE].dropna().astype(str))
    return sorted(models)


def panel_family(attributes: pd.DataFrame | None) -> str | None:
    """The warning for a judge panel (PrefAlign's judges, two or more) all of one model family; None otherwise."""
    if attributes is None or JUDGE not in attributes.columns:
        return None
    return family_warning(pref_align_judgements(attributes)[JUDGE].dropna().astype(str).unique().tolist())


def caveats(results: pd.DataFrame, cells: pd.DataFrame, attributes: pd.DataFrame | None) -> list[str]:
    """Every caveat that applies to a run, in the order the report shows them: the embedded model, a discovery
    that asked nothing, NormAlign over a tiny gap, a judge panel of one family."""
    lines = [
        plumbing_note(run_models(results, attributes)),
        silent_discovery(results),
        tiny_normalign(cells),
        panel_family(attributes),
    ]
    return [line for line in lines if line]


def not_sent(records: Sequence[Any]) -> str | None:
    """The caveat of runs whose providers were not sent a setting the flags asked for (``protocol.json``'s
    ``not_sent``, ``evaluation/protocol/effective.py``), or None."""
    lines = [f"{r.run}: {'; '.join(r.record.not_sent)}" for r in records if r.record is not None and r.record.not_sent]
    if not lines:
        return None
    return (
        "a provider was not sent (or was sent changed) a setting the flags asked for, so the protocol is the one "
        "really sent, not the flags': " + " | ".join(lines)
    )
