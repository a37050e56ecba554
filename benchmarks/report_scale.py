"""Time and memory of `prefdisco report` on a large synthetic results table (not a test).

Default: 10 models × 10 tasks × 1,000 scenarios × 3 modes = 300,000 result rows, a per-attribute table with
4 attributes per row (1.2 M rows) and a transcripts.jsonl line per row. The tables are generated in this
process; the report runs in a child process, whose wall time and peak RSS (resource.getrusage(RUSAGE_CHILDREN))
are printed as ``report_seconds: X`` and ``report_peak_rss_mb: Y``.

    .venv/bin/python benchmarks/report_scale.py [--models 10 --tasks 10 --scenarios 1000 --format csv]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("openai", "anthropic", "google", "local")
MODES = ("baseline", "discovery", "oracle")
ATTRIBUTES = [f"attribute_{i:02d}" for i in range(60)]


def synthetic(model: int, tasks: int, scenarios: int, n_attr: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One model's rows: tasks × scenarios × 3 modes, and n_attr attribute rows per result row."""
    rng = np.random.default_rng([seed, model])
    t, s, k = np.meshgrid(np.arange(tasks), np.arange(scenarios), np.arange(3), indexing="ij")
    t, s, k = t.ravel(), s.ravel(), k.ravel()
    n = len(t)
    skill = rng.normal(0, 0.3)
    level = np.array([2.6, 2.7, 3.6])[k] + skill + rng.normal(0, 0.6, n)
    questions = np.where(k == 1, rng.integers(0, 6, n), 0)
    level = level + np.where(k == 1, 0.12 * questions, 0.0)
    pref = np.clip(level, 1, 5).round(4)
    unscored = rng.random(n) < 0.01
    failed = rng.random(n) < 0.005
    results = pd.DataFrame(
        {
            "model": f"model-{model}",
            "family": FAMILIES[model % len(FAMILIES)],
            "task": np.char.add("task-", t.astype(str)),
            "scenario_id": np.char.add("s", s.astype(str)),
            "mode": np.array(MODES)[k],
            "fixed_k": np.nan,
            "pref_align": np.where(unscored | failed, np.nan, pref),
            "correct": (rng.random(n) < np.array([0.7, 0.66, 0.71])[k]).astype(int),
            "n_questions": questions,
            "judge_invalid": unscored.astype(int),
            "input_tokens": rng.integers(200, 4000, n),
            "output_tokens": rng.integers(100, 1500, n),
            "failed": failed.astype(int),
            "error": np.where(failed, "timeout", ""),
        }
    )
    rows = np.repeat(np.arange(n), n_attr)
    attr_idx = (s[rows] * 7 + np.tile(np.arange(n_attr), n) * 13) % len(ATTRIBUTES)
    score = np.clip(np.round(pref[rows] + rng.normal(0, 0.8, len(rows))), 1, 5)
    attributes = pd.DataFrame(
        {
            "model": f"model-{model}",
            "task": results["task"].to_numpy()[rows],
            "scenario_id": results["scenario_id"].to_numpy()[rows],
            "mode": results["mode"].to_numpy()[rows],
            "fixed_k": np.nan,
            "attribute": np.array(ATTRIBUTES)[attr_idx],
            "weight": 1.0 / n_attr,
            "score": np.where(rng.random(len(rows)) < 0.01, np.nan, score),
        }
    )
    return results, attributes


class _Appender:
    """Append frames to one CSV or Parquet file, one model at a time (keeps this process small)."""

    def __init__(self, path: Path) -> None:
        self.path, self.writer, self.first = path, None, True

    def add(self, frame: pd.DataFrame) -> None:
        if self.path.suffix == ".csv":
            frame.to_csv(self.path, mode="w" if self.first else "a", header=self.first, index=False)
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(frame, preserve_index=False)
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.path, table.schema)
            self.writer.write_table(table)
        self.first = False

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def write_transcripts(results: pd.DataFrame, path: Path) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for model, task, sid, mode in zip(
            results["model"], results["task"], results["scenario_id"], results["mode"], strict=True
        ):
            messages = [
                {"role": "user", "content": f"Problem {sid} of {task}."},
                {"role": "assistant", "content": "Here is my answer, explained step by step."},
            ]
            obj = {"model": model, "task": task, "scenario_id": sid, "mode": mode, "fixed_k": None}
            obj |= {"messages": messages, "final_response": "The answer is 42."}
            fh.write(json.dumps(obj) + "\n")


CHILD = """
import sys
from pathlib import Path
from prefdisco.analysis.report.build import make_report
report, written = make_report(Path(sys.argv[1]), Path(sys.argv[2]), seed=0, n_boot=int(sys.argv[3]), n_examples=2)
print(f"cells={len(report.cells)} files={len(written)} pct_negative={report.summary['pct_negative']}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--attributes", type=int, default=4, help="attributes per result row (0: no table)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--format", choices=("csv", "parquet"), default="csv")
    parser.add_argument("--no-transcripts", action="store_true")
    parser.add_argument("--keep", type=Path, help="write the tables and the report here instead of a temp dir")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="prefdisco-report-scale-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        results_path = folder / f"results.{args.format}"
        out_results = _Appender(results_path)
        out_attrs = _Appender(folder / f"attributes.{args.format}") if args.attributes else None
        n_rows = n_attr = 0
        if not args.no_transcripts:
            (folder / "transcripts.jsonl").unlink(missing_ok=True)
        for model in range(args.models):
            results, attributes = synthetic(model, args.tasks, args.scenarios, max(args.attributes, 1), 0)
            out_results.add(results)
            n_rows += len(results)
            if out_attrs is not None:
                out_attrs.add(attributes)
                n_attr += len(attributes)
            if not args.no_transcripts:
                write_transcripts(results, folder / "transcripts.jsonl")
            del results, attributes
        out_results.close()
        if out_attrs is not None:
            out_attrs.close()
        generator_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"rows: {n_rows}  attribute_rows: {n_attr}  generated in {time.perf_counter() - t0:.1f} s")
        print(f"generator_peak_rss_mb: {generator_mb:.0f} (a child started from this process inherits it as a floor)")

        env = dict(os.environ, MPLBACKEND="Agg")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-c", CHILD, str(results_path), str(folder / "report"), str(args.bootstrap)]
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)  # the only child
        seconds = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
        if done.returncode != 0:
            sys.exit(f"report failed ({done.returncode}):\n{done.stderr}")
        print(done.stdout.strip())
        print(f"report_seconds: {seconds:.2f}")
        print(f"report_peak_rss_mb: {peak_mb:.0f}")


if __name__ == "__main__":
    main()
