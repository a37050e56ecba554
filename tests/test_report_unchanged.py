"""The report of three planted runs, key by key and figure by figure, against a golden snapshot (issue 46's guard:
moving ``analysis/`` and ``evaluation/`` into sub-packages must leave every ``summary.json`` key, table, figure,
file name and heading of a report as it was).

The runs, each made into a report through the CLI (``prefdisco report RUN --out DIR --bootstrap 200``, in process),
so the test imports nothing of ``analysis/`` and survives its files moving:

* ``hand``: ``tests/test_report.py``'s hand-made table (Table 1 cells, accuracy, questions, fixed-K, attributes and
  the heatmap, examples from its transcripts) with ``wrong_persona`` rows (the control gap) and cost columns (Cost);
* ``harms``: the harms world's ``HARMFUL`` run (``tests/harms_world.py``: Harms, quality, the Validity readings of a
  real run's logs: judges, variance, simulator, non-answers);
* ``transfer``: the sessions world's ``SMART`` run (``tests/transfer_world.py``: Transfer).

Compared with ``tests/data/report_golden/<run>.json``: every ``summary.json`` key path and value (floats to rel
1e-9), the names of the files the report folder holds, every CSV table as a parsed frame (columns, dtypes, cells),
every figure's pixel size and the sha256 of its decoded pixels (RGBA; the same in two runs here and on both
workers), the HTML report's sequence of h1–h4 headings, of table captions and ids and of every element's id, the
Markdown report's ``#`` lines. A failure names the run, the file and the key that differ.

**Normalised or dropped** (they depend on the machine, not the report): the planted run's folder and the report's
folder, wherever they appear in a value, become ``<RUN>`` and ``<OUT>`` (the worlds live in a temporary folder of
the test session); the values of ``summary.json``'s keys named in ``DROPPED`` are not compared (the key is): the
timings of ``run_time`` (wall, busy, critical path and longest sample seconds, their shares, calls and samples in
flight), measured while the world's run ran. The report writes no date, version or path of its own besides; a key
that starts to hold one belongs in ``DROPPED``, with its reason.

**A deliberate change** to a report's contents: regenerate with ``PREFDISCO_REGOLDEN=1 .venv/bin/python -m pytest
tests/test_report_unchanged.py -n 0`` and say in the commit what changed. Without the variable the test never
writes.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

from test_report import ATTR_HEADER, ATTR_ROWS, HEADER, ROWS, write_csv, write_transcripts

GOLDEN = Path(__file__).parent / "data" / "report_golden"
REGOLDEN = os.environ.get("PREFDISCO_REGOLDEN") == "1"
REL = 1e-9
_WALL = "seconds measured while the planted run ran (call_time.json, the samples' times): the machine's"
DROPPED: dict[str, str] = {
    f"run_time.{k}": _WALL
    for k in (
        "busy_s",
        "call_s",
        "calls_in_flight",
        "connection_share",
        "critical_path_s",
        "critical_share",
        "longest_sample_s",
        "samples_in_flight",
        "wall_s",
    )
}
"""summary.json key paths (dotted) whose value is not compared → why. The key itself still is (its name, its
place): its value becomes ``<dropped>``."""

# the hand-made run: the control arm for m-a/t1 (PrefAlign below oracle) and a bill per row
WRONG = {"s1": 2.5, "s2": 3.0, "s3": 2.0, "s4": 3.0}
COST = ["cost_usd", "user_cost_usd", "grader_cost_usd"]


def hand_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    rows = [*ROWS]
    for sid, pref in WRONG.items():
        row = dict(zip(HEADER, ROWS[0], strict=True)) | {"scenario_id": sid, "mode": "wrong_persona"}
        rows.append([row[c] if c != "pref_align" else pref for c in HEADER])
    priced = [[*r, 0.001 * (r[8] + 1), 0.0004 * r[8], 0.0003] for r in rows]  # n_questions is column 8
    write_csv(folder / "results.csv", [*HEADER, *COST], priced)
    write_csv(folder / "attributes.csv", ATTR_HEADER, ATTR_ROWS)
    write_transcripts(folder / "transcripts.jsonl")
    return folder


# ------------------------------------------------------------------------------------------------------------
# What a report folder is, as plain JSON
# ------------------------------------------------------------------------------------------------------------


class _Outline(HTMLParser):
    """h1–h4 headings (their text), tables (caption and id) and every element's id, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.tables: list[str] = []
        self.ids: list[str] = []
        self._open: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h1", "h2", "h3", "h4", "caption"):
            self._open, self._text = tag, []
        if tag == "table":
            self.tables.append(f"table#{dict(attrs).get('id') or ''}")
        if dict(attrs).get("id"):
            self.ids.append(f"{tag}#{dict(attrs)['id']}")

    def handle_data(self, data: str) -> None:
        if self._open:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            text = " ".join("".join(self._text).split())
            (self.tables if tag == "caption" else self.headings).append(f"{tag}: {text}")
            self._open = None


def _figure(path: Path) -> dict[str, Any]:
    from PIL import Image

    with Image.open(path) as image:
        pixels = image.convert("RGBA")
        return {"size": list(pixels.size), "pixels_sha256": hashlib.sha256(pixels.tobytes()).hexdigest()}


def _table(text: str) -> dict[str, Any]:
    frame = pd.read_csv(io.StringIO(text))
    data = [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in frame.values.tolist()]
    return {"columns": list(frame.columns), "dtypes": [str(t) for t in frame.dtypes], "data": data}


def _drop(summary: Any, path: str = "") -> Any:
    if path in DROPPED:
        return "<dropped>"
    if isinstance(summary, dict):
        return {k: _drop(v, f"{path}.{k}" if path else k) for k, v in summary.items()}
    return summary


def snapshot(run: Path, out: Path) -> dict[str, Any]:
    """The report folder ``out`` of ``run`` as JSON, its folders' paths replaced by ``<RUN>`` and ``<OUT>``."""

    def norm(text: str) -> str:
        for path, name in ((out, "<OUT>"), (run, "<RUN>")):
            text = text.replace(str(path.resolve()), name).replace(str(path), name)
        return text

    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    outline = _Outline()
    outline.feed((out / "report.html").read_text())
    md = (out / "report.md").read_text().splitlines()
    return {
        "files": files,
        "summary": _drop(json.loads(norm((out / "summary.json").read_text()))),
        "tables": {f: _table(norm((out / f).read_text())) for f in files if f.endswith(".csv")},
        "figures": {f: _figure(out / f) for f in files if f.endswith(".png")},
        "html_headings": outline.headings,
        "html_tables": outline.tables,
        "html_ids": outline.ids,
        "md_headings": [line for line in md if line.startswith("#")],
    }


def report_of(run: Path, out: Path) -> dict[str, Any]:
    import prefdisco.cli as cli

    cli._register()
    if out.exists():
        shutil.rmtree(out)
    result = CliRunner().invoke(cli.app, ["report", str(run), "--out", str(out), "--seed", "0", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    return snapshot(run, out)


# ------------------------------------------------------------------------------------------------------------
# The comparison: every difference, each named by its file and key
# ------------------------------------------------------------------------------------------------------------


def _values(path: str, old: Any, new: Any) -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) - set(new)):
            yield f"{path}.{k}: key gone (was {json.dumps(old[k])[:80]})"
        for k in sorted(set(new) - set(old)):
            yield f"{path}.{k}: new key ({json.dumps(new[k])[:80]})"
        for k in sorted(set(old) & set(new), key=str):
            yield from _values(f"{path}.{k}", old[k], new[k])
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{path}: {len(old)} items before, {len(new)} now: {json.dumps(old)[:120]} -> {json.dumps(new)[:120]}"
        else:
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                yield from _values(f"{path}[{i}]", a, b)
    elif isinstance(old, float) and isinstance(new, (int, float)) and not isinstance(new, bool):
        if not math.isclose(old, new, rel_tol=REL, abs_tol=1e-12):
            yield f"{path}: {old!r} before, {new!r} now"
    elif old != new or (type(old) is not type(new) and not (isinstance(old, int) and isinstance(new, float))):
        yield f"{path}: {old!r} before, {new!r} now"


def differences(golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    out = (
        [
            f"files: gone {sorted(set(golden['files']) - set(now['files']))}, new "
            f"{sorted(set(now['files']) - set(golden['files']))}"
        ]
        if golden["files"] != now["files"]
        else []
    )
    out += _values("summary.json", golden["summary"], now["summary"])
    for part in ("tables", "figures"):
        for name in sorted(set(golden[part]) & set(now[part])):
            out += _values(name, golden[part][name], now[part][name])
    for part, label in (
        ("html_headings", "report.html headings"),
        ("html_tables", "report.html tables"),
        ("html_ids", "report.html ids"),
        ("md_headings", "report.md headings"),
    ):
        out += _values(label, golden[part], now[part])
    return out


def check(name: str, now: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    if REGOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        return
    assert path.is_file(), f"no golden {path}: make it with PREFDISCO_REGOLDEN=1 (module docstring)"
    found = differences(json.loads(path.read_text()), json.loads(json.dumps(now)))
    shown = "\n  ".join(found[:40]) + (f"\n  ... and {len(found) - 40} more" if len(found) > 40 else "")
    assert not found, f"the {name} run's report differs from {path.name} in {len(found)} place(s):\n  {shown}"


# ------------------------------------------------------------------------------------------------------------
# The three runs
# ------------------------------------------------------------------------------------------------------------


def test_the_hand_made_runs_report_is_unchanged(tmp_path):
    run = hand_run(tmp_path / "run")
    check("hand", report_of(run, tmp_path / "report"))


def test_the_harms_worlds_report_is_unchanged(harms_runs, tmp_path):
    from harms_world import HARMFUL

    run = harms_runs(HARMFUL)
    check("harms", report_of(run, tmp_path / "report"))


def test_the_transfer_worlds_report_is_unchanged(transfer_runs, tmp_path):
    from transfer_world import SMART

    run = transfer_runs(SMART)
    check("transfer", report_of(run, tmp_path / "report"))
