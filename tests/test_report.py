"""`prefdisco report`: every number of summary.json against a hand computation, the files, the errors."""

from __future__ import annotations

import base64
import csv
import json
import math
import statistics
import zlib
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import typer
from scipy.stats import norm
from scipy.stats import t as student_t
from typer.testing import CliRunner

from prefdisco.analysis.report.build import make_report
from prefdisco.analysis.report.cli import register
from prefdisco.errors import UserError

# under xdist the module's tests stay on one worker, which builds its module fixture (the hand-made table's report) once
pytestmark = pytest.mark.xdist_group("test_report")

HEADER = [
    "model",
    "family",
    "task",
    "scenario_id",
    "mode",
    "fixed_k",
    "pref_align",
    "correct",
    "n_questions",
    "judge_invalid",
    "input_tokens",
    "output_tokens",
    "failed",
]


def r(model, task, sid, mode, pref, correct, nq=0, failed=0, k=""):
    family = {"m-a": "openai", "m-b": "anthropic", "m-c": "google"}[model]
    return [model, family, task, sid, mode, k, pref, correct, nq, 0, 100, 50, failed]


# Hand-made results. Per (model, task), "b/d/o" are the baseline/discovery/oracle PrefAligns.
ROWS = [
    # m-a/t1: s1..s4 scored in all three modes; s5 has no oracle score; s6's discovery failed.
    r("m-a", "t1", "s1", "baseline", 2, 1),
    r("m-a", "t1", "s1", "discovery", 3, 1, nq=2),
    r("m-a", "t1", "s1", "oracle", 4, 1),
    r("m-a", "t1", "s2", "baseline", 3, 1),
    r("m-a", "t1", "s2", "discovery", 2.5, 0, nq=1),
    r("m-a", "t1", "s2", "oracle", 5, 1),
    r("m-a", "t1", "s3", "baseline", 2, 0),
    r("m-a", "t1", "s3", "discovery", 4, 1, nq=4),
    r("m-a", "t1", "s3", "oracle", 3, 1),
    r("m-a", "t1", "s4", "baseline", 3, "true"),
    r("m-a", "t1", "s4", "discovery", 2, "false", nq=0),
    r("m-a", "t1", "s4", "oracle", 3, 1),
    r("m-a", "t1", "s5", "baseline", 2, ""),
    r("m-a", "t1", "s5", "discovery", 4, 1, nq=3),
    r("m-a", "t1", "s5", "oracle", "", ""),
    r("m-a", "t1", "s6", "baseline", 1, 0),
    r("m-a", "t1", "s6", "discovery", 5, 1, nq=5, failed=1),
    r("m-a", "t1", "s6", "oracle", 5, 0),
    # fixed-K rows for m-a/t1
    r("m-a", "t1", "s1", "fixed_k", 3.5, 1, nq=1, k=1),
    r("m-a", "t1", "s2", "fixed_k", 3, 0, nq=1, k=1),
    r("m-a", "t1", "s1", "fixed_k", 4, 1, nq=3, k=3),
    r("m-a", "t1", "s2", "fixed_k", "", "", nq=3, k=3),
    # m-a/t2: oracle mean == baseline mean -> null (denominator 0)
    r("m-a", "t2", "s1", "baseline", 3, 1),
    r("m-a", "t2", "s1", "discovery", 4, 1, nq=3),
    r("m-a", "t2", "s1", "oracle", 3, 0),
    r("m-a", "t2", "s2", "baseline", 2, 0),
    r("m-a", "t2", "s2", "discovery", 2, 1, nq=1),
    r("m-a", "t2", "s2", "oracle", 2, 0),
    # m-b/t1: two identical scenarios, negative NormAlign
    r("m-b", "t1", "s1", "baseline", 2, 1),
    r("m-b", "t1", "s1", "discovery", 1.5, 0, nq=0),
    r("m-b", "t1", "s1", "oracle", 3.5, 1),
    r("m-b", "t1", "s2", "baseline", 2, 1),
    r("m-b", "t1", "s2", "discovery", 1.5, 0, nq=2),
    r("m-b", "t1", "s2", "oracle", 3.5, 1),
    # m-b/t2: no oracle rows at all
    r("m-b", "t2", "s1", "baseline", 2, ""),
    r("m-b", "t2", "s1", "discovery", 3, 1, nq=3),
    # m-c/t1: one discovery point for family google, no oracle
    r("m-c", "t1", "s1", "baseline", 3, 0),
    r("m-c", "t1", "s1", "discovery", 3, 1, nq=2),
]

ATTR_HEADER = ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score"]
ATTR_ROWS = [
    ["m-a", "t1", "s1", "baseline", "", "clarity", 0.6, 2],
    ["m-a", "t1", "s1", "baseline", "", "depth", 0.4, 2],
    ["m-a", "t1", "s1", "discovery", "", "clarity", 0.6, 3],
    ["m-a", "t1", "s1", "discovery", "", "depth", 0.4, 3],
    ["m-a", "t1", "s1", "oracle", "", "clarity", 0.6, 4],
    ["m-a", "t1", "s1", "oracle", "", "depth", 0.4, ""],
    ["m-a", "t1", "s3", "discovery", "", "clarity", 0.5, 5],
    ["m-a", "t1", "s3", "discovery", "", "depth", 0.5, 1],
    ["m-b", "t1", "s1", "discovery", "", "clarity", 0.5, 2],
    ["m-b", "t1", "s1", "discovery", "", "humour", 0.5, 1],
    ["m-a", "t1", "s6", "discovery", "", "clarity", 1.0, 1],  # its results row failed: not counted
]


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def write_transcripts(path: Path) -> None:
    with path.open("w") as fh:
        for mode in ("baseline", "discovery", "oracle"):
            obj = {"model": "m-a", "task": "t1", "scenario_id": "s1", "mode": mode, "fixed_k": None}
            obj["messages"] = [{"role": "user", "content": f"<b>{mode} question & more</b>"}]
            obj["final_response"] = f"final answer in {mode}"
            fh.write(json.dumps(obj) + "\n")
        fixed = {"model": "m-a", "task": "t1", "scenario_id": "s1", "mode": "fixed_k", "fixed_k": 1}
        fixed["messages"] = [
            {"role": "assistant", "content": "QUESTION: forced question one?"},
            {"role": "user", "content": "reply of the simulated user"},
        ]
        fixed["final_response"] = "final answer after one forced question"
        fh.write(json.dumps(fixed) + "\n")
        fh.write(json.dumps({"model": "m-x", "scenario_id": "zzz", "messages": []}) + "\n")


def make_run_dir(folder: Path) -> Path:
    folder.mkdir()
    write_csv(folder / "results.csv", HEADER, ROWS)
    write_csv(folder / "attributes.csv", ATTR_HEADER, ATTR_ROWS)
    write_transcripts(folder / "transcripts.jsonl")
    return folder


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run_dir(tmp_path / "run")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    """The report of the hand-made table (seed 7, 500 resamples, 1 example per kind), built once."""
    base = tmp_path_factory.mktemp("built")
    run = make_run_dir(base / "run")
    out = base / "report"
    report, written = make_report(run / "results.csv", out, seed=7, n_boot=500, n_examples=1)
    summary = json.loads((out / "summary.json").read_text())
    return SimpleNamespace(report=report, written=written, out=out, summary=summary)


# ------------------------------------------------------------------------------------------------------------
# Hand computations
# ------------------------------------------------------------------------------------------------------------


def hand_bootstrap(num: list[float], den: list[float], seed: int, model: str, task: str, n_boot: int):
    """The documented resampling scheme, written as a plain loop over resamples."""
    rng = np.random.default_rng([seed, zlib.crc32(model.encode()), zlib.crc32(task.encode())])
    draws = rng.integers(0, len(num), size=(n_boot, len(num)))
    values = []
    for idx in draws:
        d = statistics.fmean(den[i] for i in idx)
        if abs(d) > 1e-12:
            values.append(100 * statistics.fmean(num[i] for i in idx) / d)
    return np.percentile(values, [2.5, 97.5]).tolist()


def wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def pearson(xs: list[float], ys: list[float]) -> tuple[float, float]:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    rho = sxy / math.sqrt(sxx * syy)
    t = rho * math.sqrt((n - 2) / (1 - rho * rho))
    return rho, 2 * student_t.sf(abs(t), n - 2)


def slope(points: list[tuple[float, float]]) -> float:
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


# ------------------------------------------------------------------------------------------------------------
# summary.json
# ------------------------------------------------------------------------------------------------------------


def test_normalign_cells_match_hand_computation(built):
    s = built.summary
    # m-a/t1 over s1..s4 (s5 lacks an oracle score, s6's discovery failed):
    # mean b = (2+3+2+3)/4 = 2.5, d = (3+2.5+4+2)/4 = 2.875, o = (4+5+3+3)/4 = 3.75 -> 100·0.375/1.25 = 30
    assert s["normalign"]["m-a"]["t1"] == pytest.approx(30.0)
    assert s["n_scenarios"]["m-a"]["t1"] == 4
    # per scenario: s1 100·1/2 = 50, s2 100·(-0.5)/2 = -25, s3 100·2/1 = 200, s4 excluded (o == b)
    assert s["normalign_scenarios"]["m-a"]["t1"] == {
        "median": pytest.approx(50.0),
        "share_negative": pytest.approx(1 / 3),
        "n_defined": 3,
        "n_excluded": 1,
    }
    # m-a/t2: mean b = mean o = 2.5 -> null
    assert s["normalign"]["m-a"]["t2"] is None
    assert "denominator 0" in s["normalign_reason"]["m-a"]["t2"]
    assert s["n_scenarios"]["m-a"]["t2"] == 2
    assert s["normalign_scenarios"]["m-a"]["t2"] == {
        "median": None,
        "share_negative": None,
        "n_defined": 0,
        "n_excluded": 2,
    }
    assert s["normalign_ci"]["m-a"]["t2"] == [None, None]
    # m-b/t1: b = 2, d = 1.5, o = 3.5 -> 100·(-0.5)/1.5
    assert s["normalign"]["m-b"]["t1"] == pytest.approx(-100 / 3)
    assert s["normalign_scenarios"]["m-b"]["t1"]["median"] == pytest.approx(-100 / 3)
    assert s["normalign_scenarios"]["m-b"]["t1"]["share_negative"] == 1.0
    # m-b/t2 and m-c/t1 have no oracle row
    assert s["normalign"]["m-b"]["t2"] is None
    assert s["normalign_reason"]["m-b"]["t2"] == "no scored oracle results"
    assert s["normalign_reason"]["m-c"]["t1"] == "no scored oracle results"
    assert s["n_scenarios"]["m-b"]["t2"] == 0
    assert set(s["normalign_reason"]) == {"m-a", "m-b", "m-c"}
    assert "t1" not in s["normalign_reason"]["m-a"]
    # 2 defined cells (30, -33.3), one negative
    assert s["pct_negative"] == pytest.approx(50.0)
    assert (s["n_cells_negative"], s["n_cells_defined"], s["n_cells"]) == (1, 2, 5)


def test_bootstrap_interval_matches_hand_resampling(built):
    s = built.summary
    # scenarios s1..s4 of m-a/t1 in id order: num = d - b, den = o - b
    expected = hand_bootstrap([1, -0.5, 2, -1], [2, 2, 1, 0], seed=7, model="m-a", task="t1", n_boot=500)
    assert s["normalign_ci"]["m-a"]["t1"] == pytest.approx(expected)
    # m-b/t1 has two scenarios: a resample of one of them repeated has probability 1/4, so the "interval" would be
    # the two scenarios' own values; there is none, and the report says why
    assert s["normalign_ci"]["m-b"]["t1"] == [None, None]
    assert s["normalign_ci_reason"] == {"m-b": {"t1": "too few scenarios (n = 2)"}}
    assert s["seed"] == 7 and s["bootstrap_resamples"] == 500


def test_accuracy_matches_hand_computation(built):
    s = built.summary
    # m-a/t1 baseline: s1 1, s2 1, s3 0, s4 true, s6 0 (s5 not judged) -> 3/5
    # discovery: s1 1, s2 0, s3 1, s4 false, s5 1 (s6 failed)    -> 3/5
    # oracle: s1..s4 all 1, s6 0 (s5 not judged)                -> 4/5
    assert s["accuracy"]["m-a"]["t1"] == pytest.approx({"baseline": 0.6, "discovery": 0.6, "oracle": 0.8})
    assert s["accuracy_ci"]["m-a"]["t1"]["oracle"] == pytest.approx(list(wilson(4, 5)))
    assert s["accuracy_ci"]["m-a"]["t1"]["baseline"] == pytest.approx(list(wilson(3, 5)))
    assert s["accuracy_n"]["m-a"]["t1"] == {"baseline": 5, "discovery": 5, "oracle": 5}
    assert s["accuracy"]["m-a"]["t2"] == pytest.approx({"baseline": 0.5, "discovery": 1.0, "oracle": 0.0})
    assert s["accuracy_ci"]["m-a"]["t2"]["oracle"] == pytest.approx(list(wilson(0, 2)))
    assert s["accuracy"]["m-b"]["t1"] == {"baseline": 1.0, "discovery": 0.0, "oracle": 1.0}
    assert s["accuracy"]["m-b"]["t2"] == {"discovery": 1.0}
    assert s["accuracy"]["m-c"]["t1"] == {"baseline": 0.0, "discovery": 1.0}
    # over tasks, m-a: baseline (3+1)/7, discovery (3+2)/7, oracle (4+0)/7
    assert s["accuracy_overall"]["m-a"] == pytest.approx({"baseline": 4 / 7, "discovery": 5 / 7, "oracle": 4 / 7})
    assert s["accuracy_overall_ci"]["m-a"]["discovery"] == pytest.approx(list(wilson(5, 7)))


def test_questions_pearson_slopes_and_means(built):
    s = built.summary
    openai = [(2, 3), (1, 2.5), (4, 4), (0, 2), (3, 4), (3, 4), (1, 2)]  # m-a discovery, s6 failed
    anthropic = [(0, 1.5), (2, 1.5), (3, 3)]
    google = [(2, 3)]
    xs, ys = zip(*(openai + anthropic + google), strict=True)
    rho, p = pearson(list(xs), list(ys))
    assert s["pearson_r"] == pytest.approx(rho)
    assert s["pearson_p"] == pytest.approx(p)
    assert s["pearson_n"] == 11 and s["pearson_reason"] is None
    assert s["family_slopes"]["openai"] == pytest.approx(slope(openai))
    assert s["family_slopes"]["anthropic"] == pytest.approx(slope(anthropic))  # 2.0 / (42/9)
    assert s["family_slopes"]["anthropic"] == pytest.approx(3 / 7)
    assert s["family_slopes"]["google"] is None
    assert "fewer than 3" in s["family_slopes_reason"]["google"]
    assert set(s["family_slopes_reason"]) == {"google"}
    # non-failed discovery rows: m-a 2,1,4,0,3,3,1 -> 14/7; m-b 0,2,3 -> 5/3; m-c 2
    assert s["mean_questions"] == pytest.approx({"m-a": 2.0, "m-b": 5 / 3, "m-c": 2.0})


def test_fixed_k_and_row_counts(built):
    s = built.summary
    # K=1: s1 3.5, s2 3 -> mean 3.25; over s1, s2: b mean 2.5, o mean 4.5 -> 100·0.75/2 = 37.5
    # K=3: s1 4 only -> b 2, o 4 -> 100·2/2 = 100
    assert s["fixed_k"] == {
        "m-a": {
            "t1": {
                "fixed_k=1": {"n": 2, "mean_pref_align": 3.25, "normalign": 37.5},
                "fixed_k=3": {"n": 1, "mean_pref_align": 4.0, "normalign": 100.0},
            }
        }
    }
    # one name per condition, so the sections of summary.json join: the variance parts of the same fixed-K cells
    assert {"fixed_k=1", "fixed_k=3", "baseline", "discovery", "oracle"} <= set(s["variance"]["m-a"]["t1"])
    assert list(built.report.fixed_k["fixed_k"]) == [1, 3]  # the table's K column is the results' fixed_k
    # not scored: the failed row, and two empty PrefAligns (m-a/t1/s5 oracle, K=3 s2)
    assert s["rows"] == {"total": len(ROWS), "failed": 1, "scored": len(ROWS) - 3}
    assert s["models"] == ["m-a", "m-b", "m-c"] and s["tasks"] == ["t1", "t2"]


def test_summary_is_strict_json_with_required_keys(built):
    text = (built.out / "summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    for key in (
        "normalign",
        "normalign_ci",
        "accuracy",
        "pct_negative",
        "pearson_r",
        "pearson_p",
        "family_slopes",
        "mean_questions",
        "normalign_reason",
        "n_scenarios",
    ):
        assert key in built.summary


def test_same_seed_same_numbers_other_seed_other_interval(run_dir, tmp_path, built):
    """The same seed gives the same numbers, without its figures too (``--no-figures``): every number, table and
    summary key of the built report, no PNG, and each figure's place says it was left out."""
    _, written = make_report(
        run_dir / "results.csv", tmp_path / "again", seed=7, n_boot=500, n_examples=1, figures=False
    )
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["normalign_ci"] == built.summary["normalign_ci"]
    where = ("source", "protocols")  # where the table came from
    assert {k: v for k, v in again.items() if k not in where} == {
        k: v for k, v in built.summary.items() if k not in where
    }
    tables = sorted(p.name for p in written if p.suffix == ".csv")
    assert tables == sorted(p.name for p in built.written if p.suffix == ".csv") and tables
    for name in tables:
        assert (tmp_path / "again" / name).read_bytes() == (built.out / name).read_bytes(), name
    assert not list((tmp_path / "again").glob("*.png")) and len(list(built.out.glob("*.png"))) >= 5
    html = (tmp_path / "again" / "report.html").read_text()
    assert "<img" not in html and html.count("Figure left out (<code>--no-figures</code>)") == 4
    assert html.count("No figure: a box of quartiles needs 5 scenarios") == 1  # it cannot show anything (issue 49)
    markdown = (tmp_path / "again" / "report.md").read_text()
    assert "](fig_" not in markdown and markdown.count("_Figure left out (`--no-figures`)._") == 4
    make_report(run_dir / "results.csv", tmp_path / "other", seed=8, n_boot=500, n_examples=0, figures=False)
    other = json.loads((tmp_path / "other" / "summary.json").read_text())
    assert other["normalign_ci"]["m-a"]["t1"] != built.summary["normalign_ci"]["m-a"]["t1"]
    assert other["normalign"] == built.summary["normalign"]


def test_parquet_input_gives_the_same_summary(run_dir, tmp_path, built):
    frame = pd.read_csv(run_dir / "results.csv", dtype=str, keep_default_na=False)
    for col in ("pref_align", "n_questions", "fixed_k"):
        frame[col] = pd.to_numeric(frame[col])
    frame["correct"] = frame["correct"].map({"1": True, "true": True, "0": False, "false": False, "": None})
    pq_dir = tmp_path / "pq"
    pq_dir.mkdir()
    frame.to_parquet(pq_dir / "results.parquet", index=False)
    pd.read_csv(run_dir / "attributes.csv").to_parquet(pq_dir / "attributes.parquet", index=False)
    (pq_dir / "transcripts.jsonl").write_bytes((run_dir / "transcripts.jsonl").read_bytes())  # the length probe's
    report, _ = make_report(pq_dir, tmp_path / "out-pq", seed=7, n_boot=500, n_examples=1, figures=False)
    where = ("source", "protocols")  # where the tables came from (the protocols' ids are compared below)
    same = {k: v for k, v in report.summary.items() if k not in where}
    assert same == {k: v for k, v in built.summary.items() if k not in where}
    assert [p["id"] for p in report.summary["protocols"]] == [p["id"] for p in built.summary["protocols"]]


def test_bootstrap_zero_gives_no_interval(run_dir, tmp_path):
    report, _ = make_report(run_dir / "results.csv", tmp_path / "o", n_boot=0, n_examples=0)
    assert report.summary["normalign_ci"]["m-a"]["t1"] == [None, None]
    assert report.summary["normalign"]["m-a"]["t1"] == pytest.approx(30.0)


# ------------------------------------------------------------------------------------------------------------
# files
# ------------------------------------------------------------------------------------------------------------


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name == "src" and tag == "img":
                self.srcs.append(value or "")
            if name in ("src", "href") and value and not value.startswith(("data:", "#")):
                self.external.append(value)


def test_html_is_self_contained_and_holds_every_figure(built):
    html = (built.out / "report.html").read_text()
    parser = _Images()
    parser.feed(html)
    pngs = sorted(built.out.glob("*.png"))
    assert {p.name for p in pngs} == {
        "fig_normalign.png",
        "fig_accuracy.png",
        "fig_questions.png",
        "fig_fixed_k.png",
        "fig_attributes.png",
        "fig_harms_breakage.png",  # every report's Harms section
    }
    # m-a has 3 per-scenario NormAligns, m-b 2: too few for boxes of quartiles, said in the figure's place (issue 49)
    box = "No figure: a box of quartiles needs 5 scenarios with a per-scenario NormAlign and no model has more than 3"
    assert box in html
    embedded = [base64.b64decode(src.removeprefix("data:image/png;base64,")) for src in parser.srcs]
    assert all(src.startswith("data:image/png;base64,") for src in parser.srcs)
    assert sorted(embedded) == sorted(p.read_bytes() for p in pngs)
    assert all(b.startswith(b"\x89PNG\r\n\x1a\n") for b in embedded)
    assert parser.external == []
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "http://" not in html and "https://" not in html
    for heading in ("Table 1", "Figure 4", "Figure 3", "Figure 5", "Per-attribute", "Appendix C", "Method"):
        assert heading in html
    assert "intersection of the scenario ids" in html  # the method notes
    assert "(baseline &lt; discovery &lt; oracle" in html
    assert "1 of 2 defined cells" in html


def test_examples_transcripts_and_attribute_scores(built):
    kinds = [(e.kind, e.model, e.task, e.scenario_id) for e in built.report.examples]
    # monotone: only m-a/t1/s1 (2 < 3 < 4); worse: largest drop m-a/t1/s4 (3 -> 2);
    # correct -> incorrect: m-b/t1/s2 asked the most questions (2)
    assert kinds == [
        ("monotone gain", "m-a", "t1", "s1"),
        ("discovery worse than baseline", "m-a", "t1", "s4"),
        ("correct baseline turned incorrect", "m-b", "t1", "s2"),
    ]
    first = built.report.examples[0]
    # beside the three conditions, s1's two fixed-K conditions (K = 1: 3.5, correct, 1 question; K = 3: 4, correct,
    # 3 questions), the K = 1 dialogue with its transcript (the demo's first report shows a dialogue this way)
    assert [v.mode for v in first.modes] == ["baseline", "discovery", "oracle", "fixed_k=1", "fixed_k=3"]
    assert [v.has_transcript for v in first.modes] == [True, True, True, True, False]
    assert [(v.pref_align, v.correct, v.n_questions) for v in first.modes[3:]] == [(3.5, True, 1), (4.0, True, 3)]
    assert first.modes[3].messages[0] == {"role": "assistant", "content": "QUESTION: forced question one?"}
    assert first.modes[1].messages == [{"role": "user", "content": "<b>discovery question & more</b>"}]
    assert first.attributes == [
        {"attribute": "clarity", "weight": 0.6, "baseline": 2.0, "discovery": 3.0, "oracle": 4.0}
        | {"fixed_k=1": None, "fixed_k=3": None},
        {"attribute": "depth", "weight": 0.4, "baseline": 2.0, "discovery": 3.0, "oracle": None}
        | {"fixed_k=1": None, "fixed_k=3": None},
    ]
    html = (built.out / "report.html").read_text()
    assert "&lt;b&gt;discovery question &amp; more&lt;/b&gt;" in html
    assert "final answer in oracle" in html and "final answer after one forced question" in html
    md = (built.out / "report.md").read_text()
    assert "final answer in baseline" in md


def test_per_attribute_table_and_worst(built):
    table = pd.read_csv(built.out / "table_attribute_scores.csv")
    row = table[(table["model"] == "m-a") & (table["mode"] == "discovery") & (table["attribute"] == "depth")]
    assert row[["n", "n_valid", "mean_score"]].to_numpy().tolist() == [[2, 2, 2.0]]  # (3 + 1) / 2
    clarity = table[(table["model"] == "m-a") & (table["mode"] == "discovery") & (table["attribute"] == "clarity")]
    assert clarity[["n", "mean_score"]].to_numpy().tolist() == [[2, 4.0]]  # s1 3, s3 5; failed s6 dropped
    oracle = table[(table["model"] == "m-a") & (table["mode"] == "oracle") & (table["attribute"] == "depth")]
    assert oracle[["n", "n_valid"]].to_numpy().tolist() == [[1, 0]]  # the invalid judgement is not a score
    worst = pd.read_csv(built.out / "table_worst_attributes.csv")
    assert worst[worst["model"] == "m-b"]["attribute"].tolist() == ["humour", "clarity"]


def test_markdown_and_csv_tables(built):
    md = (built.out / "report.md").read_text()
    for png in built.out.glob("*.png"):
        assert f"]({png.name})" in md
    assert "## Method" in md
    cells = pd.read_csv(built.out / "table1_normalign.csv")
    assert len(cells) == 5
    assert cells.set_index(["model", "task"]).loc[("m-a", "t1"), "normalign"] == pytest.approx(30.0)
    assert not list(built.out.glob(".*.tmp"))


def test_chosen_scenario_is_shown(run_dir, tmp_path):
    report, _ = make_report(run_dir / "results.csv", tmp_path / "o", n_examples=0, chosen=["s5"], figures=False)
    assert [(e.kind, e.model, e.task, e.scenario_id) for e in report.examples] == [("chosen", "m-a", "t1", "s5")]
    with pytest.raises(UserError, match="--scenario nope: no such scenario_id"):
        make_report(run_dir / "results.csv", tmp_path / "o2", n_examples=0, chosen=["nope"])


def test_single_model_task_few_scenarios(tmp_path):
    rows = [
        r("m-a", "t1", "s1", "baseline", 2, 1),
        r("m-a", "t1", "s1", "discovery", 3, 1, nq=1),
        r("m-a", "t1", "s1", "oracle", 4, 1),
        r("m-a", "t1", "s2", "baseline", 3, 0),
        r("m-a", "t1", "s2", "discovery", 3, 0, nq=1),
        r("m-a", "t1", "s2", "oracle", 4, 1),
    ]
    path = write_csv(tmp_path / "results.csv", HEADER, rows)
    report, _ = make_report(path, tmp_path / "out", n_examples=2)
    s = report.summary
    # b = 2.5, d = 3, o = 4 -> 100·0.5/1.5
    assert s["normalign"] == {"m-a": {"t1": pytest.approx(100 / 3)}}
    assert s["pearson_r"] is None and s["pearson_p"] is None
    assert "fewer than 3" in s["pearson_reason"]
    assert s["family_slopes"] == {"openai": None}
    assert (tmp_path / "out" / "report.html").is_file()
    assert "no per-attribute table" in (tmp_path / "out" / "report.html").read_text().lower()


def test_constant_questions_make_pearson_null(tmp_path):
    rows = [r("m-a", "t1", f"s{i}", "discovery", 1 + i, 1, nq=2) for i in range(4)]
    report, _ = make_report(write_csv(tmp_path / "results.csv", HEADER, rows), tmp_path / "o")
    assert report.summary["pearson_r"] is None
    assert "same number of questions" in report.summary["pearson_reason"]
    assert report.summary["normalign"]["m-a"]["t1"] is None
    assert report.summary["normalign_reason"]["m-a"]["t1"] == "no scored baseline/oracle results"
    assert report.summary["pct_negative"] is None


def test_error_column_marks_failure_without_failed_column(tmp_path):
    header = [*HEADER[:-1], "error"]
    rows = [[*x[:-1], ""] for x in ROWS[:12]]
    rows[4][-1] = "timeout"  # m-a/t1/s2 discovery
    report, _ = make_report(write_csv(tmp_path / "results.csv", header, rows), tmp_path / "o", n_examples=0)
    # over s1, s3, s4: b = 7/3, d = 9/3, o = 10/3 -> 100·(2/3)/1
    assert report.summary["normalign"]["m-a"]["t1"] == pytest.approx(200 / 3)
    assert report.summary["rows"]["failed"] == 1


# ------------------------------------------------------------------------------------------------------------
# folders, logs and errors
# ------------------------------------------------------------------------------------------------------------


def test_run_folder_without_table_or_logs(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match=r"no results table in .*empty; run `prefdisco eval` first"):
        make_report(empty, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_run_folder_with_logs_uses_results_from_logs(tmp_path, monkeypatch):
    import prefdisco.results.table as results_module

    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "2026-01-01T00-00-00_task.eval").write_bytes(b"not read: results_from_logs is replaced")
    frame = pd.DataFrame(ROWS, columns=HEADER).replace("", None)
    transcripts = pd.DataFrame(
        [
            {"model": "m-a", "task": "t1", "scenario_id": "s1", "mode": m, "fixed_k": None}
            | {"messages": [{"role": "assistant", "content": f"from logs {m}"}], "final_response": "x"}
            for m in ("baseline", "discovery", "oracle")
        ]
    )
    tables = SimpleNamespace(
        results=frame, attributes=pd.DataFrame(ATTR_ROWS, columns=ATTR_HEADER), transcripts=transcripts
    )
    monkeypatch.setattr(results_module, "results_from_logs", lambda f: tables)
    report, _ = make_report(folder, tmp_path / "out", seed=7, n_boot=500, n_examples=1, figures=False)
    assert report.summary["normalign"]["m-a"]["t1"] == pytest.approx(30.0)
    assert report.summary["pct_negative"] == pytest.approx(50.0)
    assert "from logs discovery" in (tmp_path / "out" / "report.html").read_text()
    assert report.attribute_scores is not None


def _malformed(tmp_path: Path, edit) -> Path:
    header, rows = list(HEADER), [list(x) for x in ROWS]
    edit(header, rows)
    return write_csv(tmp_path / "results.csv", header, rows)


def _drop_column(name):
    def edit(header, rows):
        i = header.index(name)
        header.pop(i)
        for row in rows:
            row.pop(i)

    return edit


def _set(row_index, column, value):
    def edit(header, rows):
        rows[row_index][header.index(column)] = value

    return edit


def _duplicate(header, rows):
    rows.insert(3, list(rows[1]))


@pytest.mark.parametrize(
    ("edit", "pattern"),
    [
        (_drop_column("pref_align"), r"results\.csv: missing required column pref_align"),
        (_set(2, "mode", "discover"), r"data row 3: column mode: unknown value 'discover'"),
        (_set(1, "pref_align", "abc"), r"data row 2: column pref_align: 'abc' is not a number"),
        (_set(4, "pref_align", "7"), r"data row 5: column pref_align: 7 is not a number in \[1, 5\]"),
        (_set(0, "correct", "yes"), r"data row 1: column correct: 'yes' is not a flag"),
        (_set(0, "fixed_k", "2"), r"data row 1: column fixed_k: is 2 but must be empty when mode is baseline"),
        (_set(18, "fixed_k", ""), r"data row 19: column fixed_k: is empty"),
        (_set(5, "model", ""), r"data row 6: column model: is empty"),
        (_set(3, "n_questions", "1.5"), r"data row 4: column n_questions: 1.5 is not an integer"),
        (_duplicate, r"data row 4: columns model/task/scenario_id/mode/fixed_k/epoch: duplicate key .* data row 2"),
    ],
)
def test_malformed_results_give_one_line_naming_column_and_row(tmp_path, edit, pattern):
    path = _malformed(tmp_path, edit)
    with pytest.raises(UserError, match=pattern) as info:
        make_report(path, tmp_path / "out")
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize(
    ("row", "column", "value", "pattern"),
    [
        (1, "score", "good", r"attributes\.csv: data row 2: column score: 'good' is not a number"),
        (0, "weight", "1.5", r"attributes\.csv: data row 1: column weight: 1.5 is not a number in \[0, 1\]"),
        (2, "mode", "x", r"attributes\.csv: data row 3: column mode: unknown value 'x'"),
    ],
)
def test_malformed_attribute_table(run_dir, tmp_path, row, column, value, pattern):
    rows = [list(x) for x in ATTR_ROWS]
    rows[row][ATTR_HEADER.index(column)] = value
    write_csv(run_dir / "attributes.csv", ATTR_HEADER, rows)
    with pytest.raises(UserError, match=pattern) as info:
        make_report(run_dir, tmp_path / "out")
    assert "\n" not in str(info.value)


def test_duplicate_attribute_rows_rejected(run_dir, tmp_path):
    write_csv(run_dir / "attributes.csv", ATTR_HEADER, [*ATTR_ROWS, ATTR_ROWS[0]])
    with pytest.raises(UserError, match=r"data row 12: columns .*attribute: duplicate key .* data row 1"):
        make_report(run_dir, tmp_path / "out")


# ------------------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------------------


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """Test app holding only the report command."""

    register(app)
    return app


def test_cli_report_writes_files_and_prints_table(run_dir, tmp_path):
    out = tmp_path / "cli-out"
    result = CliRunner().invoke(
        _app(), ["report", str(run_dir), "--out", str(out), "--seed", "7", "--bootstrap", "500", "--examples", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "NormAlign" in result.output and "m-a" in result.output
    assert "30.0" in result.output and "null" not in result.output
    assert "negative cells: 50.0 %" in result.output
    assert str(out) in result.output.replace("\n", "")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["normalign"]["m-a"]["t1"] == pytest.approx(30.0)
    assert {"report.html", "report.md", "summary.json", "table1_normalign.csv"} <= {p.name for p in out.iterdir()}


def test_cli_error_is_a_user_error(tmp_path):
    path = _malformed(tmp_path, _set(2, "mode", "discover"))
    result = CliRunner().invoke(_app(), ["report", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert isinstance(result.exception, UserError)
    assert "column mode" in str(result.exception)


def test_a_condition_correct_in_every_scenario_draws_its_accuracy_bar(tmp_path):
    """12 of 12 correct: statsmodels' Wilson upper bound is 1 − 1.1e-16, below the accuracy 1.0, and the bar's
    whisker (upper − accuracy) was a negative length that matplotlib refused, so the whole report failed."""
    from statsmodels.stats.proportion import proportion_confint

    assert proportion_confint(12, 12, method="wilson")[1] < 1.0  # the float the whisker used to go negative on
    rows = []
    for i in range(12):
        rows += [r("m-a", "t1", f"s{i}", "baseline", 2, 1), r("m-a", "t1", f"s{i}", "discovery", 3, 0, nq=1)]
        rows.append(r("m-a", "t1", f"s{i}", "oracle", 4, 0))
    results = write_csv(tmp_path / "results.csv", HEADER, rows)
    report, _ = make_report(results, tmp_path / "report", n_boot=0)
    baseline = report.accuracy.loc[(report.accuracy["model"] == "m-a") & (report.accuracy["task"] == "t1")]
    assert baseline.set_index("mode").at["baseline", "accuracy"] == 1.0
    assert (tmp_path / "report" / "fig_accuracy.png").stat().st_size > 0
