"""``prefdisco report``: compute every number, draw every figure, then write the report folder.

Everything is computed in memory first, so a bad input leaves no file behind; each output is then written to a
temporary file in the report folder and moved into place with ``os.replace``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from prefdisco.analysis.cost import measures as _cost  # noqa: F401  (imported: registers its section)
from prefdisco.analysis.harms import section as _harms  # noqa: F401  (the same)
from prefdisco.analysis.paper.accuracy import accuracy_table
from prefdisco.analysis.paper.attributes import attribute_table, heatmap_mode, worst_attributes
from prefdisco.analysis.paper.examples import build_examples, lead_dialogue
from prefdisco.analysis.paper.fixed_k import fixed_k_table
from prefdisco.analysis.paper.questions import question_stats
from prefdisco.analysis.report.caveats import caveats, embedded_build, not_sent
from prefdisco.analysis.report.charts import charts, left_out
from prefdisco.analysis.report.contents import Report
from prefdisco.analysis.report.folder import check_apart, check_report_out, write_report
from prefdisco.analysis.report.run_record import header_line, judge_settings
from prefdisco.analysis.report.summary import build_summary
from prefdisco.analysis.section.registry import Context, sections
from prefdisco.analysis.section.shown import plain
from prefdisco.analysis.stats.bootstrap import check_resamples
from prefdisco.analysis.stats.normalign import normalign_cells, scenario_table
from prefdisco.analysis.stats.trials import average_attribute_trials, average_trials
from prefdisco.analysis.transfer import section as _transfer  # noqa: F401  (the same)
from prefdisco.analysis.validity import section as _validity  # noqa: F401  (the same)
from prefdisco.analysis.validity.calibrate import Calibration, calibrate
from prefdisco.analysis.validity.reference import ReferenceTable, load_reference_table
from prefdisco.errors import UserError
from prefdisco.results.contract import TRIAL_GROUP
from prefdisco.results.merge import RunProtocol, load_runs
from prefdisco.results.run_time import run_time
from prefdisco.results.table import ResultsData


def _quality(results: pd.DataFrame) -> pd.DataFrame:
    """Per model, over the trial rows as run (not averaged): rows, failed, unscored, invalid judgements, tokens."""
    r = results.assign(model=results["model"].astype(str), unscored=~results["scored"] & ~results["failed"])
    trials = r.groupby(["model", *TRIAL_GROUP[1:]], observed=True, dropna=False).size().groupby("model").max()
    return (
        r.groupby("model")
        .agg(
            rows=("row", "size"),
            failed=("failed", "sum"),
            unscored=("unscored", "sum"),
            judge_invalid=("judge_invalid", "sum"),
            mean_input_tokens=("input_tokens", "mean"),
            mean_output_tokens=("output_tokens", "mean"),
        )
        .join(trials.rename("trials_per_result"))
        .reset_index()
        .astype({"failed": int, "unscored": int, "trials_per_result": int})
    )


def build_report(
    data: ResultsData,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    n_examples: int = 2,
    chosen: list[str] | None = None,
    calibration: Calibration | None = None,
    run_dir: Path | Sequence[Path] | None = None,
    protocols: list[RunProtocol] | None = None,
    notes: list[str] | None = None,
    figures: bool = True,
    reference: ReferenceTable | None = None,
) -> Report:
    """Every number of the report of ``data``; ``calibration``: the run's human calibration (``--human``);
    ``run_dir``: RESULTS as given, whose ``run.json`` files give the header's judge settings (``run_record.py``);
    ``protocols``: what each run's numbers were made under, ``notes``: what merging the runs needs said
    (``results/merge.py``); ``figures``: False leaves the figures out (every number and table is the same)."""
    check_resamples(n_boot)
    results = average_trials(data.results)  # every number below is over trials averaged per scenario and condition
    attributes = None if data.attributes is None else average_attribute_trials(data.attributes, data.results)
    scenarios = scenario_table(results)
    cells = normalign_cells(results, scenarios, seed=seed, n_boot=n_boot)
    accuracy = accuracy_table(results)
    questions = question_stats(results, cells)
    fixed_k = fixed_k_table(results)
    ctx = Context(data, results, attributes, cells, seed, n_boot, run_dir, protocols or [], calibration, reference)
    parts = [(entry, part) for entry in sections() if (part := entry.build(ctx)) is not None]
    attribute_scores = worst = mode = None
    if attributes is not None:
        attribute_scores = attribute_table(attributes, results)
        mode = heatmap_mode(attribute_scores)
        if mode is not None:
            worst = worst_attributes(attribute_scores, mode)
    examples = build_examples(
        results,
        attributes,
        data.transcripts,
        n=n_examples,
        chosen=chosen or [],
        transcript_rows=data.transcript_rows,
    )
    readings = [reading for _, part in parts for reading in part.readings]
    summary = build_summary(ctx, accuracy, questions, fixed_k)
    summary["validity"] = [r.__dict__ for r in readings]
    run_judge = judge_settings(run_dir)
    summary["judge_settings"] = plain(run_judge)
    summary["run_time"] = plain(run_time(run_dir))
    for _, part in parts:
        summary |= plain(part.summary)
    extra = [
        embedded_build(protocols or []),
        *(line for _, part in parts for line in part.caveats),
        not_sent(protocols or []),
    ]
    warnings = [*(notes or []), *caveats(results, cells, data.attributes), *(w for w in extra if w)]
    summary["caveats"] = warnings
    ids = sorted({p.id or "unknown" for p in protocols or []})
    summary["protocol_id"] = (ids[0] if len(ids) == 1 else "mixed") if ids else None
    summary["protocols"] = [p.summary() for p in protocols or []]
    settings = {
        "source": data.source,
        "attributes": data.attributes_source,
        "transcripts": str(data.transcripts)
        if data.transcripts
        else ("from logs" if data.transcript_rows is not None else None),
        "seed": seed,
        "bootstrap": n_boot,
        "examples": n_examples,
        "judge_settings": header_line(run_judge),
        "protocol": _protocol_line(protocols or []),
    }
    report = Report(
        summary=summary,
        settings=settings,
        cells=cells,
        scenarios=scenarios,
        accuracy=accuracy,
        questions=questions,
        fixed_k=fixed_k,
        attribute_scores=attribute_scores,
        worst_attributes=worst,
        heatmap_mode=mode,
        examples=examples,
        quality=_quality(data.results),
        readings=readings,
        caveats=warnings,
        parts=parts,
    )
    report.lead = lead_dialogue(examples, len(results[["task", "scenario_id"]].drop_duplicates()))
    report.figures_omitted = left_out(report)  # figures that cannot show anything here, and why
    report.figures = [chart.file() for chart in charts(report, seed)] if figures else []
    report.figures_left_out = not figures
    report.tables = {
        "table1_normalign.csv": cells,
        "table_normalign_per_scenario.csv": scenarios,
        "table_accuracy.csv": accuracy,
        "table_family_slopes.csv": questions.slopes,
        "table_questions_per_cell.csv": questions.per_cell,
        "table_data_quality.csv": report.quality,
    }
    optional = {
        "table_fixed_k.csv": None if fixed_k.empty else fixed_k,
        "table_attribute_scores.csv": attribute_scores,
        "table_worst_attributes.csv": worst,
    }
    for name, table in [*optional.items(), *(t for _, part in parts for t in part.tables.items())]:
        if table is not None:
            report.tables[name] = table
    return report


def _protocol_line(protocols: list[RunProtocol]) -> str | None:
    """The report header's protocol: the id with its simulator and judges, or each run's when they differ."""
    said = list(dict.fromkeys(p.record.described() if p.record else (p.id or "unknown") for p in protocols))
    return "; ".join(said) if said and said != ["unknown"] else None


def make_report(
    results: Path | Sequence[Path],
    out: Path,
    *,
    seed: int = 0,
    n_boot: int = 1000,
    n_examples: int = 2,
    chosen: list[str] | None = None,
    human: Path | None = None,
    allow_mixed: bool = False,
    figures: bool = True,
    overwrite: bool = False,
    reference_table: Path | None = None,
) -> tuple[Report, list[Path]]:
    """Load RESULTS (a file or an eval run folder, or several: one table when their protocols agree, or with
    ``allow_mixed``), compute the report and write it to ``out``; ``human``: a ratings CSV (``prefdisco annotate
    export-ratings``) to calibrate the judge with (RESULTS must then be one run folder)."""
    check_resamples(n_boot)  # before any file is read
    paths = [Path(results)] if isinstance(results, (str, Path)) else [Path(p) for p in results]
    if not paths:
        raise UserError("RESULTS: give a results table or a run folder")
    check_apart(Path(out), paths)
    merged = load_runs(paths, allow_mixed=allow_mixed)
    check_report_out(Path(out), merged.data.source, overwrite)
    reference = load_reference_table(reference_table) if reference_table is not None else None
    calibration = None
    if human is not None:
        if len(paths) != 1 or not paths[0].is_dir():
            raise UserError(f"--human: needs one eval run folder as RESULTS, got {', '.join(map(str, paths))}")
        calibration = calibrate(Path(human), paths[0], seed=seed, n_boot=n_boot)
    report = build_report(
        merged.data,
        seed=seed,
        n_boot=n_boot,
        n_examples=n_examples,
        chosen=chosen,
        calibration=calibration,
        protocols=merged.protocols,
        notes=merged.notes,
        run_dir=paths,
        figures=figures,
        reference=reference,
    )
    return report, write_report(report, out)
