"""The leaderboard's folder: its HTML page (``templates/leaderboard.html``, jinja2, autoescaped; self-contained, no
external asset, each ranking's NormAlign and interval drawn as an inline SVG: no script, no font, no image file),
``leaderboard.csv`` and ``pairwise.csv``, and ``make_leaderboard``, which loads the runs and writes them.

Everything is computed and rendered in memory first; the three files are then each written atomically. An ``--out``
holding files of these names (or a benchmark) is refused before any work without ``--overwrite`` (``overwrite.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefdisco.analysis.harms.measures import MEASURES
from prefdisco.analysis.leaderboard.board import OVERALL, USD_PER_SCENARIO, Leaderboard, build_leaderboard
from prefdisco.analysis.leaderboard.submission_board import board_of_submissions
from prefdisco.analysis.section.shown import interval, num, records
from prefdisco.analysis.stats.bootstrap import check_resamples
from prefdisco.analysis.stats.pairwise import ALPHA
from prefdisco.analysis.validity.reference import load_reference_table, simulator_fidelity
from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.overwrite import refuse_overwrite
from prefdisco.results.merge import load_runs
from prefdisco.schema import CONDITIONS

FILES = ("leaderboard.html", "leaderboard.csv", "pairwise.csv")

_HARM_PREFIX = "harm:"
_TRANSFER_PREFIX = "transfer_"


def _value(r: dict[str, Any], key: str, digits: int) -> str:
    text = num(r.get(key), digits)
    if r.get(key) is not None and r.get(f"{key}_low") is not None:
        text += f" {interval(r[f'{key}_low'], r[f'{key}_high'], digits)}"
    return text


def _svg(rows: list[dict[str, Any]]) -> str:
    """NormAlign and its interval per ranked model, one line each (the best on top), as inline SVG."""
    ranked = [r for r in rows if r["rank"] is not None]
    if not ranked:
        return ""
    values = [v for r in ranked for v in (r["normalign"], r["normalign_low"], r["normalign_high"]) if v is not None]
    lo, hi = min([*values, 0.0]), max([*values, 100.0])
    labels = [
        f"{r['rank']}. {r['model']} ({'untested' if r['group'] is None else 'group ' + str(r['group'])})"
        for r in ranked
    ]
    left = int(min(420, 16 + 6.5 * max(len(t) for t in labels)))  # room for the longest label at 11px
    width, right, line = left + 480, TICK_ROOM, 22
    height = line * len(ranked) + 30

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo or 1.0) * (width - left - right)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="NormAlign with 95% intervals">',
        f'<line x1="{x(0):.1f}" y1="4" x2="{x(0):.1f}" y2="{height - 24}" stroke="#999" stroke-dasharray="3,3"/>',
        f'<line x1="{x(100):.1f}" y1="4" x2="{x(100):.1f}" y2="{height - 24}" stroke="#ccc" stroke-dasharray="3,3"/>',
        *_ticks(x(0), x(100), height - 8),
    ]
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    from html import escape

    for i, (r, text) in enumerate(zip(ranked, labels, strict=True)):
        y = 14 + i * line
        colour = "#999999" if r["group"] is None else palette[(int(r["group"]) - 1) % len(palette)]
        label = escape(text)
        parts.append(f'<text x="{left - 8}" y="{y + 4}" font-size="11" text-anchor="end">{label}</text>')
        if r["normalign_low"] is not None:
            a, b = x(r["normalign_low"]), x(r["normalign_high"])
            parts.append(f'<line x1="{a:.1f}" y1="{y}" x2="{b:.1f}" y2="{y}" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(r["normalign"]):.1f}" cy="{y}" r="4" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


TICK_ROOM = 30
"""Room right of the axis, for the "100" written to the right of its line."""
CHAR_WIDTH = 7.5
"""An upper bound of a digit's width at 11px in a sans-serif font (7.0 px in DejaVu Sans, 6.1 in Arial)."""


def _ticks(zero: float, hundred: float, y: float) -> list[str]:
    """The axis labels "0" and "100" under their lines: centred where there is room for both, else "0" to the left
    of its line and "100" to the right of its own (a NormAlign far below 0 puts the two lines a few pixels apart,
    where centred labels overlap)."""
    room = hundred - zero >= (1 + 3) * CHAR_WIDTH / 2 + 4  # half of each label, and a gap
    anchors = (("middle", zero), ("middle", hundred)) if room else (("end", zero - 3), ("start", hundred + 3))
    return [
        f'<text x="{at:.1f}" y="{y}" font-size="11" text-anchor="{anchor}">{text}</text>'
        for (anchor, at), text in zip(anchors, ("0", "100"), strict=True)
    ]


def _header(column: str) -> str:
    """``harm:breakage[discovery]`` → the report's words for the measure, then the condition."""
    if column == USD_PER_SCENARIO:
        return "USD per scenario (all conditions)"
    stem, _, rest = column.partition("[")
    condition = rest.removesuffix("]")
    if stem.startswith(_HARM_PREFIX):
        return f"{MEASURES.get(stem.removeprefix(_HARM_PREFIX), stem)} · {condition}"
    words = {"transfer_gain": "mean transfer gain", "transfer_gain_slope": "transfer gain slope"}
    return f"{words.get(stem, stem)} · {condition}"


def _ranking(board: Leaderboard, name: str) -> dict[str, Any]:
    rows = records(board.table.loc[board.table["task"] == name])
    extra = [c for c in board.table.columns if c.startswith((_HARM_PREFIX, _TRANSFER_PREFIX, USD_PER_SCENARIO))]
    extra_keys = [c for c in extra if not c.endswith(("_low", "_high"))]
    shown_extra = [c for c in extra_keys if any(r.get(c) is not None for r in rows)]
    out_rows = []
    for r in rows:
        out_rows.append(
            {
                "rank": r["rank"],
                "group": r["group"],
                "group_reason": r.get("group_reason") or "",
                "model": r["model"],
                "normalign": _value(r, "normalign", 1),
                "reason": r["normalign_reason"] or "",
                "oracle": _value(r, "oracle_pref_align", 2),
                "accuracy": [_value(r, f"accuracy_{m}", 2) for m in CONDITIONS],
                "questions": num(r["mean_questions"], 2),
                "n": r["n_scenarios"],
                "extra": [_value(r, c, 3) for c in shown_extra],
            }
        )
    pairs = []
    for p in records(board.pairwise.loc[board.pairwise["task"] == name]):
        diff = "—" if p["difference"] is None else f"{p['difference']:+.1f}"
        if p["low"] is not None:
            diff += f" {interval(p['low'], p['high'])}"
        pairs.append(
            {
                "a": p["model_a"],
                "b": p["model_b"],
                "n": p["n_shared"],
                "difference": diff,
                "p": num(p["p"], 4),
                "p_holm": num(p["p_holm"], 4),
                "distinguishable": bool(p["distinguishable"]),
                "reason": p["reason"] or "",
            }
        )
    groups: dict[int, list[str]] = {}
    for r in rows:
        if r["group"] is not None:
            groups.setdefault(int(r["group"]), []).append(r["model"])
    return {
        "headers": [_header(c) for c in shown_extra],
        "has_transfer": any(c.startswith(_TRANSFER_PREFIX) for c in shown_extra),
        "name": name,
        "title": "Overall (every task)" if name == OVERALL else f"Task {name}",
        "rows": out_rows,
        "extra": shown_extra,
        "pairs": pairs,
        "groups": sorted(groups.items()),
        "svg": _svg(rows),  # the template marks it safe: built from escaped labels and numbers only
    }


def _protocols(board: Leaderboard) -> list[dict[str, Any]]:
    """Each distinct protocol of the runs: its id, simulator and judges, and the runs made under it."""
    seen: dict[str, dict[str, Any]] = {}
    for p in board.protocols:
        r = p.record
        key = r.model_dump_json() if r is not None else f"id:{p.id}"
        entry = seen.setdefault(
            key,
            {
                "id": (r.id if r is not None else p.id) or "unknown (a run made before protocols were recorded)",
                "simulator": r.user_model if r is not None else None,
                "judges": ", ".join(r.judges) if r is not None else None,
                "reference_fidelity": (
                    simulator_fidelity(board.reference, p) if board.reference is not None else board.fidelity.get(p.run)
                ),
                "runs": [],
            },
        )
        entry["runs"].append(p.run)
    return list(seen.values())


def render_page(board: Leaderboard) -> str:
    from prefdisco.analysis.section.shown import template_env

    rankings = [_ranking(board, name) for name in board.rankings()]
    return (
        template_env(True)
        .get_template("leaderboard.html")
        .render(
            rankings=rankings,
            protocols=_protocols(board),
            notes=board.notes,
            caveats=board.caveats,
            mixed=board.mixed(),
            source=board.source,
            seed=board.seed,
            n_boot=board.n_boot,
            alpha=ALPHA,
            modes=CONDITIONS,
        )
    )


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse an ``--out`` that is a file, or holds a benchmark or a leaderboard's files, without ``--overwrite``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    refuse_overwrite(out, overwrite)
    for name in FILES:
        refuse_overwrite(out / name, overwrite)


def make_leaderboard(
    runs: Sequence[Path],
    out: Path,
    *,
    seed: int | None = None,
    n_boot: int | None = None,
    allow_mixed: bool = False,
    overwrite: bool = False,
    reference_table: Path | None = None,
    submissions: Path | None = None,
) -> tuple[Leaderboard, list[Path]]:
    """Load the runs (one table when their protocols agree, or with ``allow_mixed``), or the folder of
    ``submissions`` (``submission_board.py``: their seed and resamples, which ``seed`` and ``n_boot`` may only
    repeat), compute the leaderboard and write its three files to ``out``; nothing is written when any step fails
    before the writes. ``seed`` and ``n_boot`` of runs: 0 and 1000 unless given."""
    paths = [Path(p) for p in runs]
    if submissions is not None and paths:
        raise UserError("RUN: give run folders or --submissions DIR, not both (submit the runs first)")
    if submissions is None and not paths:
        raise UserError("RUN: give at least one eval run folder or results table (or --submissions DIR)")
    if n_boot is not None:
        check_resamples(n_boot)  # before any file is read
    out = Path(out)
    check_out(out, overwrite)
    reference = load_reference_table(reference_table) if reference_table is not None else None
    if submissions is not None:
        board = board_of_submissions(submissions, allow_mixed=allow_mixed)
        for flag, given, theirs in (("--seed", seed, board.seed), ("--bootstrap", n_boot, board.n_boot)):
            if given is not None and given != theirs:
                raise UserError(
                    f"{flag} {given}: the submissions in {submissions} were made with {flag} {theirs}, which their "
                    f"intervals and the board's paired tests use; drop {flag}"
                )
    else:
        merged = load_runs(paths, allow_mixed=allow_mixed)
        seed, n_boot = 0 if seed is None else seed, 1000 if n_boot is None else n_boot
        board = build_leaderboard(merged.data, seed=seed, n_boot=n_boot, protocols=merged.protocols, notes=merged.notes)
    board.reference = reference
    files = {
        "leaderboard.html": render_page(board).encode("utf-8"),
        "leaderboard.csv": board.table.to_csv(index=False).encode("utf-8"),
        "pairwise.csv": board.pairwise.to_csv(index=False).encode("utf-8"),
    }
    written = []
    for name, payload in files.items():
        atomic_write(out / name, payload)
        written.append(out / name)
    return board, written
