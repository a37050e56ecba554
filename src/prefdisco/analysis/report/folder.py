"""A report's folder (``prefdisco report --out``): what may be written there, and the writing. The report of the same
results is replaced (a rerun), and what an earlier report there wrote that this one does not is removed, so no
figure or table of another report is read as this one's; the report of other results, or a benchmark, is refused
without ``--overwrite`` before the report is computed. An ``--out`` that is a run folder given as RESULTS, or the
folder of a results file given, is refused before anything is read (``check_apart``): the report's files would lie
among the run's own. A folder inside the run (``RUN/report``, what ``eval``'s next line suggests) keeps them apart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefdisco.analysis.report.contents import Report
from prefdisco.analysis.report.render import render_html, render_markdown
from prefdisco.analysis.section.shown import summary_json
from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError
from prefdisco.overwrite import refuse_overwrite, report_of


def check_report_out(out: Path, source: str, overwrite: bool) -> None:
    """Refuse, before the report is computed, an ``--out`` that is a file, or holds a benchmark, or the report of
    other results, unless ``--overwrite``; the report of the same results is replaced (a rerun)."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    if report_of(out) == source:
        return
    refuse_overwrite(out, overwrite)


def check_apart(out: Path, inputs: Sequence[Path]) -> None:
    """Refuse, in one line, an ``--out`` that is a RESULTS folder, or the folder holding a RESULTS file: its report
    would mix some thirty files into the run's own (and no ``--overwrite`` could take them apart again)."""
    where = Path(out).resolve()
    for given in inputs:
        folder = Path(given).resolve()
        if folder.is_dir() and where == folder:
            raise UserError(
                f"--out {out}: is the run folder {given} given as RESULTS, and the report's files would lie among "
                f"the run's; give a folder of its own (e.g. --out {Path(given) / 'report'})"
            )
        if folder.is_file() and where == folder.parent:
            raise UserError(
                f"--out {out}: is the folder of {given}, given as RESULTS, and the report's files would lie among "
                f"its tables; give a folder of its own (e.g. --out {Path(given).parent / 'report'})"
            )


def write_report(report: Report, out: Path) -> list[Path]:
    """Render and write every file of the report folder, and remove what an earlier report there wrote that this
    one does not (a figure or table of its own, which would be read as this one's); returns the paths written."""

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    earlier = report_of(out) is not None
    files: dict[str, bytes] = {
        "report.html": render_html(report).encode("utf-8"),
        "report.md": render_markdown(report).encode("utf-8"),
        "summary.json": summary_json(report.summary),
    }
    files |= {f.name: f.png for f in report.figures}
    files |= {name: table.to_csv(index=False).encode("utf-8") for name, table in report.tables.items()}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files.items():
        atomic_write(out / name, data)
        written.append(out / name)
    if earlier:
        for stale in [*out.glob("fig_*.png"), *out.glob("table_*.csv")]:
            if stale.name not in files:
                stale.unlink()
    return written
