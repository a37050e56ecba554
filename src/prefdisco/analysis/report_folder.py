"""A report's folder (``prefdisco report --out``): what may be written there, and the writing. The report of the same
results is replaced (a rerun), and what an earlier report there wrote that this one does not is removed, so no
figure or table of another report is read as this one's; the report of other results, or a benchmark, is refused
without ``--overwrite`` before the report is computed."""

from __future__ import annotations

from pathlib import Path

from prefdisco.analysis.contents import Report
from prefdisco.analysis.render import render_html, render_markdown
from prefdisco.analysis.summary import summary_json
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
