"""The page of a ``prefdisco simfidelity --reference`` run (``reference.html``): one self-contained HTML page with
the people's statistics beside each simulator's (the table of ``reference.csv``, its empty replies counted), each
statistic's distance from the people with its interval beside the reference fidelity, which of each pair of
simulators is closer to the people per statistic (``reference_pairs.csv``), a figure of each statistic (people and
simulators side by side), and ten reference rows side by side (the need, the question, the person's answer and each
simulator's). What a reader must know first (the embedded model's note) stands at its top."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from prefdisco.analysis.report.caveats import plumbing_note
from prefdisco.analysis.section.figures import label, new_figure, png
from prefdisco.analysis.validity.reference import CLOSENESS, LABELS

FIGURE_STATISTICS = (
    ("mean_words", "words per answer (mean)"),
    ("starts_no", "starts with a no-word"),
    ("starts_yes", "starts with a yes-word"),
    ("bare_yes_no", "a bare yes or no"),
    ("dont_know", "says they don't know"),
    ("disclosure", "disclosure of the need"),
    ("discloses_any", "discloses any of the need"),
    ("polarity_agreement", "same yes/no as the person"),
)
EXAMPLES = 10


def statistics_figure(table: pd.DataFrame) -> bytes:
    """One panel per statistic: a bar for the people and one per simulator (none where it is undefined)."""
    parties = table["simulator"].astype(str).tolist()
    fig, axes = new_figure(12.0, 5.6, ncols=4, nrows=2)
    colours = ["#444444", *(f"C{i}" for i in range(len(parties) - 1))]
    for ax, (column, title) in zip(np.ravel(axes), FIGURE_STATISTICS, strict=True):
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
        shown = np.where(np.isfinite(values), values, 0.0)
        ax.bar(range(len(parties)), shown, color=colours)
        for i, v in enumerate(values):
            ax.text(i, shown[i], "—" if not np.isfinite(v) else f"{v:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_title(label(title, 28), fontsize=9)
        ax.set_xticks(range(len(parties)), [label(p, 14) for p in parties], rotation=30, ha="right", fontsize=7)
        if column != "mean_words":
            ax.set_ylim(0, 1.1)
    return png(fig)


def examples(answers: pd.DataFrame, labels: Sequence[str], n: int = EXAMPLES) -> list[dict[str, Any]]:
    """The first ``n`` reference rows (in file order): the need, the question, the person's answer and each
    simulator's."""
    rows: list[dict[str, Any]] = []
    for row_id, group in answers.groupby("reference_row", sort=False):
        said = dict(zip(group["simulator"].astype(str), group["simulated_answer"].astype(str), strict=True))
        first = group.iloc[0]
        rows.append(
            {
                "row": row_id,
                "need": first["need"],
                "question": first["question"],
                "person": first["human_answer"],
                "simulators": [(name, said.get(name, "")) for name in labels],
            }
        )
        if len(rows) == n:
            break
    return rows


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
        for r in frame.to_dict("records")
    ]


def render_reference_page(
    table: pd.DataFrame,
    pairs: pd.DataFrame,
    answers: pd.DataFrame,
    simulators: Sequence[Any],
    summary: dict[str, Any],
) -> str:
    from prefdisco.analysis.section.shown import template_env

    labels = [s.label for s in simulators]
    note = plumbing_note(s.user_model for s in simulators)
    records = _records(table)
    figure = "data:image/png;base64," + base64.b64encode(statistics_figure(table)).decode("ascii")
    return (
        template_env(True)
        .get_template("reference.html")
        .render(
            caveats=[note] if note else [],
            table=records,
            pairs=_records(pairs),
            statistics=[(name, LABELS[name]) for name in CLOSENESS],
            labels_of=LABELS,
            figure=figure,
            examples=examples(answers, labels),
            labels=labels,
            summary=summary,
        )
    )
