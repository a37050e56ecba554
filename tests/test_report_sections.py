"""A report section registered from outside the package (issue 46): a toy instrument registered here, in the test,
shows its summary keys, its table, its Validity reading, its caveat and its own fragment in ``prefdisco report``'s
summary.json, report.html and report.md, with no edit to the report's code or templates; unregistered, none of it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from test_report_unchanged import hand_run

READING = "toy reading: every scenario counted"
CAVEAT = "toy caveat: read this before any toy number"


@pytest.fixture
def toy(tmp_path: Path):
    """A toy instrument: one summary key, one table, one Validity line, one caveat, an h2 section of its own."""
    from prefdisco.analysis.section.registry import REGISTRY, Part, Reading, section

    folder = tmp_path / "toy_templates"
    folder.mkdir()
    (folder / "toy.html").write_text('<h2 id="toy">Toy</h2>\n<p id="toy-count">{{ toy.n }} scenarios</p>\n')
    (folder / "toy.md").write_text("## Toy\n\n{{ toy.n }} scenarios\n\n")

    @section("toy", order=50, place="section", title="Toy", templates=folder)
    def toy_section(ctx):
        n = int(ctx.results["scenario_id"].nunique())
        table = pd.DataFrame({"model": sorted(ctx.results["model"].unique()), "toy": n})
        return Part(
            summary={"toy_scenarios": n},
            tables={"table_toy.csv": table},
            readings=[Reading("Toy instrument", f"{n} scenarios", READING)],
            caveats=[CAVEAT],
            view={"n": n},
        )

    yield
    REGISTRY.pop("toy", None)


def _report(run: Path, out: Path) -> tuple[dict, str, str]:
    import prefdisco.cli as cli

    cli._register()
    args = ["report", str(run), "--out", str(out), "--bootstrap", "200", "--no-figures"]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    return (
        json.loads((out / "summary.json").read_text()),
        (out / "report.html").read_text(),
        (out / "report.md").read_text(),
    )


def test_a_section_registered_in_a_test_is_in_every_file_of_the_report_and_gone_when_unregistered(tmp_path, toy):
    run = hand_run(tmp_path / "run")
    rows = pd.read_csv(run / "results.csv")
    n, models = rows["scenario_id"].nunique(), rows["model"].nunique()
    summary, html, md = _report(run, tmp_path / "report")
    assert summary["toy_scenarios"] == n
    assert pd.read_csv(tmp_path / "report" / "table_toy.csv")["toy"].tolist() == [n] * models
    toy_line = {"instrument": "Toy instrument", "finding": f"{n} scenarios", "reading": READING}
    assert toy_line in summary["validity"]
    assert summary["caveats"][-1] == CAVEAT
    # the Validity table's row, the caveat at the top (before section 1), the fragment after Validity, linked
    row = f'<tr><td class="l">Toy instrument</td><td class="l">{n} scenarios</td>'
    assert html.index(CAVEAT) < html.index('<h2 id="normalign">') < html.index(row) < html.index('<h2 id="toy">')
    assert html.index('<h2 id="validity">') < html.index(row) < html.index('<h2 id="harms">')
    assert '<a href="#toy">Toy</a>' in html and f'<p id="toy-count">{n} scenarios</p>' in html
    assert html.index('<h2 id="toy">') < html.index('<h2 id="quality">') and "table_toy.csv" in html
    assert f"> - {CAVEAT}" in md and f"| Toy instrument | {n} scenarios | {READING} |" in md
    assert md.index("## Validity") < md.index(f"## Toy\n\n{n} scenarios") < md.index("## Data")

    from prefdisco.analysis.section.registry import REGISTRY

    REGISTRY.pop("toy")  # unregistered: the same run's report has none of it
    summary, html, md = _report(run, tmp_path / "again")
    assert "toy_scenarios" not in summary and not (tmp_path / "again" / "table_toy.csv").exists()
    assert all(line["instrument"] != "Toy instrument" for line in summary["validity"])
    assert CAVEAT not in summary["caveats"]
    for text in (html, md):
        assert "Toy" not in text and CAVEAT not in text and "table_toy" not in text
