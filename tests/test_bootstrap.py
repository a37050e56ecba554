"""The one bootstrap kernel (``analysis/stats/bootstrap.py``, issue 31, defect 5): every instrument's intervals are
drawn
there, the same way, and the block size that bounds memory never changes a number."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from prefdisco.analysis.stats import bootstrap
from prefdisco.analysis.stats.bootstrap import per_resample, percentile_interval, ratio_of_means, resampled, stratified

SRC = Path(__file__).resolve().parents[1] / "src" / "prefdisco"


def by_hand(values: np.ndarray, seed: int, n_boot: int, statistic) -> np.ndarray:
    """One resample at a time: ``integers(0, n, size=n)`` from the stream, the statistic of those rows."""
    rng = np.random.default_rng(seed)
    return np.array([statistic(values[rng.integers(0, len(values), size=len(values))]) for _ in range(n_boot)])


@pytest.mark.parametrize("block", [7, 50, bootstrap.BLOCK])
def test_resamples_are_the_streams_rows_whatever_the_block(monkeypatch, block):
    values = np.array([1.0, 4.0, 2.0, 8.0, 5.0])
    monkeypatch.setattr(bootstrap, "BLOCK", block)  # 7: one resample a block; 50: ten
    got = resampled([values], np.random.default_rng(3), 101, lambda v: v.mean(axis=1))
    np.testing.assert_array_equal(got, by_hand(values, 3, 101, np.mean))


def test_a_ratio_drops_the_resamples_whose_denominator_is_zero():
    num, den = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 0.0, 0.0, 2.0])
    draws = resampled([num, den], np.random.default_rng(1), 400, lambda a, b: ratio_of_means(a, b, 1e-12))
    rng = np.random.default_rng(1)
    expected = []
    for _ in range(400):
        idx = rng.integers(0, 4, size=4)
        expected.append(100 * num[idx].mean() / den[idx].mean() if den[idx].mean() else np.nan)
    np.testing.assert_allclose(draws, expected, equal_nan=True)
    lo, hi, kept = percentile_interval(draws)
    finite = np.array([e for e in expected if np.isfinite(e)])
    assert kept == len(finite) < 400  # (0.0 0.0 0.0 0.0) resamples dropped, never a number
    assert (lo, hi) == pytest.approx(tuple(np.percentile(finite, [2.5, 97.5])))


def test_a_per_resample_statistic_may_be_undefined_and_a_stratum_stays_within_itself():
    x = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    draws = resampled([x], np.random.default_rng(0), 500, per_resample(lambda v: None if v.max() < 10 else v.sum()))
    assert np.isnan(draws).any() and percentile_interval(draws)[2] == int(np.isfinite(draws).sum())
    sizes = [3, 2]  # rows 0-2 and 3-4
    seen: list[np.ndarray] = []
    stratified(sizes, np.random.default_rng(0), 20, lambda idx: seen.extend(idx) or np.zeros(len(idx[0])))
    assert [b.shape for b in seen] == [(20, 3), (20, 2)] and seen[0].max() == 2 and seen[1].max() == 1
    assert percentile_interval(np.array([np.nan, np.inf])) == (None, None, 0)


DRAWS = frozenset({"choice", "choices", "integers", "randint", "random_integers", "permutation", "permuted",
                   "shuffle", "sample", "bootstrap"})  # fmt: skip
"""Calls that resample: numpy generators' and ``random``'s draws, pandas' ``sample``, ``scipy.stats.bootstrap``."""
PERCENTILES = frozenset({"percentile", "nanpercentile", "quantile", "nanquantile", "quantiles", "mquantiles",
                         "scoreatpercentile"})  # fmt: skip
"""Calls that take a percentile: numpy's, pandas', ``statistics.quantiles``, scipy's."""
LIBRARIES = frozenset({"numpy", "scipy", "random", "pandas", "statistics", "sklearn"})
KERNEL = "analysis/stats/bootstrap.py"

ALLOWED: dict[tuple[str, str, str], str] = {
    ("simfidelity/answer_behaviour.py", "fit_behaviour", "quantile"): "the people's word counts at 5 %, 10 %, …: the "
    "humanlike user's cap distribution, no interval",
    (
        "analysis/section/figures.py",
        "questions_figure",
        "sample",
    ): "at most MAX_SCATTER points drawn for a scatter plot",
    (
        "analysis/validity/simulator.py",
        "elicitation_figure",
        "sample",
    ): "at most MAX_SCATTER points drawn for a scatter plot",
    ("annotate/rating_items.py", "sample_ratings", "shuffle"): "the seeded draw of the items people rate",
    ("annotate/sampling.py", "sample_scenarios", "sample"): "the seeded draw of the scenarios people annotate",
    ("annotate/sampling.py", "sample_scenarios", "choice"): "the seeded draw of the scenarios people annotate",
    ("annotate/sampling.py", "_item", "sample"): "the candidate attributes shown to an annotator",
    ("annotate/sampling.py", "annotator_order", "shuffle"): "the order an annotator sees the candidates in",
    ("benchmarks/loader.py", "sample_indices", "sample"): "the seeded sample of a benchmark's problems",
    ("builder/blueprints.py", "sample_blueprint", "choices"): "a persona blueprint's trait levels",
    ("builder/blueprints.py", "sample_blueprint", "choice"): "a persona blueprint's age, group and education",
    ("builder/blueprints.py", "trait_lines", "sample"): "a persona's IPIP items",
    ("builder/personas.py", "name_initials", "choice"): "a persona's initials",
    ("builder/pipeline.py", "choose_personas", "sample"): "the personas of a problem",
    ("builder/sessions.py", "assign_personas", "sample"): "the personas of a session build",
    ("dialogue/humanlike.py", "manner", "choice"): "the humanlike user's don't-know reply, drawn with its manner",
    ("env/gym.py", "UnitEnv._choose", "integers"): "the scenario an RL episode plays",
    ("env/openenv.py", "PrefDiscoOpenEnv._choose", "integers"): "the scenario an RL episode plays",
    ("simfidelity/reference_replay.py", "draw_rows", "permutation"): "the order reference rows are replayed in",
    ("results/table.py", "_mode_and_k", "choice"): "Columns.choice: a cell checked against its allowed values",
    ("results/table.py", "validate_attributes", "choice"): "Columns.choice: a cell checked against its allowed values",
    ("scoring/criterion_order.py", "criterion_calls", "shuffle"): "the structured judge's shuffled criterion order",
}
"""Every resampling or percentile call outside the kernel, by (file, function, name), with why it draws no interval."""


def resampling_calls(root: Path) -> list[tuple[str, str, str, int]]:
    """Every call that resamples or takes a percentile (``DRAWS``, ``PERCENTILES``) in the Python files under
    ``root`` but the kernel: (file, enclosing function, name, line). A call is any ``x.NAME(...)``; a reference not
    called counts when it goes through a library module (``np.quantile`` handed to ``agg``); a name imported from a
    library (``from scipy.stats import bootstrap``) counts at its import."""
    found: list[tuple[str, str, str, int]] = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where != KERNEL:
            found += _Scan(where, ast.parse(path.read_text(encoding="utf-8"))).found
    return found


def _library(module: str | None) -> bool:
    return (module or "").split(".")[0] in LIBRARIES


class _Scan(ast.NodeVisitor):
    """One module's resampling and percentile calls (``resampling_calls``)."""

    def __init__(self, where: str, tree: ast.Module) -> None:
        self.where, self.scope = where, []
        self.found: list[tuple[str, str, str, int]] = []
        self.modules = {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                        for a in n.names if _library(a.name)}  # fmt: skip
        self.modules |= {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                         and _library(n.module) for a in n.names}  # fmt: skip
        self.visit(tree)

    def add(self, name: str, node: ast.AST) -> None:
        self.found.append((self.where, ".".join(self.scope) or "<module>", name, node.lineno))

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute) and node.func.attr in DRAWS | PERCENTILES:
            self.add(node.func.attr, node)
            for part in (node.func.value, *node.args, *node.keywords):  # its parts, the call not counted again
                self.visit(part)
            return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if node.attr in DRAWS | PERCENTILES and isinstance(base, ast.Name) and base.id in self.modules:
            self.add(node.attr, node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if _library(node.module):
            for alias in node.names:
                if alias.name in DRAWS | PERCENTILES:
                    self.add(alias.name, node)


def test_every_interval_is_drawn_by_the_one_kernel():
    """No module of ``src/`` resamples or takes a percentile outside ``analysis/stats/bootstrap.py`` but the uses listed
    in ``ALLOWED``, each with why it is no interval; and no entry there is stale."""
    found = resampling_calls(SRC)
    outside = [f"{w}:{line} {name} in {scope}" for w, scope, name, line in found if (w, scope, name) not in ALLOWED]
    assert outside == [], "draw intervals with analysis/stats/bootstrap.py (or list a non-interval use in ALLOWED)"
    assert set(ALLOWED) == {(w, scope, name) for w, scope, name, _ in found}


def test_the_scan_finds_a_draw_or_percentile_anywhere_outside_the_kernel(tmp_path):
    """A planted source tree: a bootstrap by hand in ``evaluation/`` (``rng.choice`` and ``np.quantile``, which the
    old scan of ``analysis/`` for ``.integers(`` and ``np.percentile(`` let through), scipy's bootstrap imported by
    name, ``np.nanpercentile`` handed to pandas, ``random.choices``, an allowed function's name in another file, and
    the kernel itself; only the kernel and the allowed use pass."""
    (tmp_path / "evaluation").mkdir()
    (tmp_path / "analysis").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "evaluation" / "interval.py").write_text(
        "import numpy as np\n\n\ndef ci(x, rng):\n"
        "    means = [rng.choice(x, size=len(x)).mean() for _ in range(1000)]\n"
        "    return np.quantile(means, [0.025, 0.975])\n"
    )
    (tmp_path / "analysis" / "other.py").write_text(
        "import random\n\nimport numpy as np\nfrom scipy.stats import bootstrap\n\n\n"
        "class Table:\n    def spread(self, frame):\n        return frame.groupby('k')['v'].agg(np.nanpercentile)\n\n\n"
        "def fit_behaviour(xs):\n    return random.choices(xs, k=len(xs))\n"
    )
    (tmp_path / "results" / "table.py").write_text("def _mode_and_k(cols):\n    return cols.choice('mode', ())\n")
    (tmp_path / KERNEL).parent.mkdir()
    (tmp_path / KERNEL).write_text((SRC / KERNEL).read_text())
    found = {(w, scope, name) for w, scope, name, _ in resampling_calls(tmp_path)}
    assert found == {
        ("evaluation/interval.py", "ci", "choice"),
        ("evaluation/interval.py", "ci", "quantile"),
        ("analysis/other.py", "<module>", "bootstrap"),
        ("analysis/other.py", "Table.spread", "nanpercentile"),
        ("analysis/other.py", "fit_behaviour", "choices"),  # allowed in answer_behaviour.py only, not here
        ("results/table.py", "_mode_and_k", "choice"),
    }
    assert {f for f in found if f not in ALLOWED} == found - {("results/table.py", "_mode_and_k", "choice")}


def test_normalign_is_one_formula_and_a_resamples_ratio_of_means_is_it():
    """``normalign.norm_align_of`` is NormAlign everywhere: the scalar of three means, a scenario's, and each
    bootstrap resample's ``ratio_of_means`` of (arm − baseline, oracle − baseline), which equals it of the resample's
    three means (a denominator of 0 undefined in both)."""
    from prefdisco.analysis.stats.normalign import norm_align, norm_align_of

    assert norm_align(2.5, 2.875, 3.75) == (pytest.approx(30.0), "")  # 100 · 0.375 / 1.25
    assert norm_align(3.0, 4.0, 3.0)[0] is None and np.isnan(norm_align_of(3.0, 4.0, 3.0))
    assert np.isnan(norm_align_of(np.nan, 4.0, 5.0)) and norm_align_of([1.0, 2.0], [2.0, 2.0], [3.0, 4.0]).tolist() == [
        50.0,
        0.0,
    ]
    rng = np.random.default_rng(3)
    base, arm, oracle = (rng.uniform(1, 5, size=(200, 6)) for _ in range(3))
    oracle[7] = base[7]  # one resample whose every oracle − baseline is 0
    ratio = ratio_of_means(arm - base, oracle - base, 1e-12)
    direct = norm_align_of(base.mean(axis=1), arm.mean(axis=1), oracle.mean(axis=1))
    assert np.isnan(ratio[7]) and np.isnan(direct[7])
    np.testing.assert_allclose(ratio, direct, rtol=1e-12, equal_nan=True)
