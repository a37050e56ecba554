"""CLI commands of the generation pipeline: ``prefdisco build`` and ``prefdisco personas``.

Parsing and printing only; the work is in :mod:`prefdisco.builder.pipeline` (build),
:mod:`prefdisco.builder.library` (personas) and :mod:`prefdisco.builder.estimate` (``--dry-run``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from prefdisco.wording import counted

if TYPE_CHECKING:
    from prefdisco.builder.config import BuildConfig


class _RichProgress:
    """Adapts a ``rich.progress.Progress`` to the pipeline's progress protocol (one bar per step)."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}

    def start(self, step: str, total: int) -> None:
        if total > 0:
            self.tasks[step] = self.progress.add_task(step, total=total)

    def advance(self, step: str, n: int = 1, failed: int = 0) -> None:
        if step in self.tasks:
            self.progress.advance(self.tasks[step], n)


class _PlainProgress:
    """The pipeline's progress protocol as one plain line every few seconds (``prefdisco.progress.Ticker``), for
    output that is not a terminal: the step running, its items done of all, and how many of them failed (that
    step's own failures: an earlier step's are not carried into the next one's line)."""

    def __init__(self) -> None:
        from prefdisco.progress import Tally

        self.tally = Tally()

    def start(self, step: str, total: int) -> None:
        if total > 0:
            self.tally.what, self.tally.total, self.tally.done, self.tally.failed = step, total, 0, 0

    def advance(self, step: str, n: int = 1, failed: int = 0) -> None:
        if step == self.tally.what:
            self.tally.done += n
            self.tally.failed += failed

    def text(self) -> str:
        return self.tally.text() if self.tally.what else "starting"


@contextlib.contextmanager
def _progress(console: Console, label: str) -> Iterator[Any]:
    """Rich's bars on a terminal; elsewhere (a file, ``tee``, CI) a plain line every few seconds."""
    if console.is_terminal:
        from rich.progress import Progress

        with Progress(console=console, transient=False) as bar:
            yield _RichProgress(bar)
        return
    from prefdisco.progress import Ticker

    plain = _PlainProgress()
    with Ticker(label, plain.text):
        yield plain


def _model_args(pairs: list[str]) -> dict[str, Any]:
    from prefdisco.models.args import parse_model_args

    return parse_model_args(pairs)


def _config(**values: Any) -> BuildConfig:
    from pydantic import ValidationError

    from prefdisco.builder.config import BuildConfig
    from prefdisco.errors import UserError, describe_validation_error

    try:
        return BuildConfig.model_validate(values)
    except ValidationError as err:
        raise UserError(describe_validation_error(err, "options")) from None


def _print_failures(console: Console, failures: list[dict[str, Any]]) -> None:
    if not failures:
        return
    console.print(f"[yellow]{len(failures)} item(s) skipped after invalid replies:[/]")
    for f in failures[:20]:
        console.print(
            f"  {f['step']} {f['item']} ({f['model']}, {f['attempts']} attempt(s)): {f['reason']}", markup=False
        )
    if len(failures) > 20:
        console.print(f"  ... and {len(failures) - 20} more (see manifest.json)")


def _usage_line(total: dict[str, Any]) -> str:
    return (
        f"{total['calls_run']} model call(s) this run ({total['calls']} incl. checkpoint), "
        f"{total['input_tokens_run']} input / {total['output_tokens_run']} output tokens this run"
    )


def _sessions_line(section: dict[str, Any]) -> str:
    """The console's line about a ``--session-length`` build (the manifest's ``sessions``)."""
    per = section["problems_per_persona"]
    share = section["recurring_share"]
    stable = section["stable_share"]
    spread = f"{per['min']}" if per["min"] == per["max"] else f"{per['min']}-{per['max']} (mean {per['mean']})"
    line = (
        f"sessions: {counted(section['personas'], 'persona')} with {spread} problems each, recurring attributes "
        f"{'-' if share is None else f'{share:.0%}'} of profile items, "
        f"{'-' if stable is None else f'{stable:.0%}'} of them with their earlier value"
    )
    if section["personas_below_length"]:
        line += f"; {counted(section['personas_below_length'], 'persona')} below --session-length {section['length']}"
        line += " after skipped scenarios"
    return line


def register(app: typer.Typer) -> None:
    """Add ``build`` and ``personas`` to ``app``."""

    @app.command("build")
    def build(
        benchmark: str = typer.Option(..., "--benchmark", help="math500, aime, ..., or generic (with --map)."),
        out: Path = typer.Option(..., "--out", help="Benchmark folder to write (its .checkpoint/ resumes)."),
        model: list[str] = typer.Option([], "--model", help="Builder model; repeat for a pool (random per call)."),
        model_arg: list[str] = typer.Option([], "-M", help="Model arg key=value for the builder models."),
        problems: int = typer.Option(100, "--problems", min=1, help="Problems to sample (seeded)."),
        personas_per_problem: int = typer.Option(10, "--personas-per-problem", min=1),
        session_length: int | None = typer.Option(
            None,
            "--session-length",
            min=1,
            help="Build for sessions: every chosen persona gets at least K problems, and a persona's profiles keep "
            "their earlier values unless the problem changes them (docs/building.md).",
        ),
        persona_library: Path | None = typer.Option(None, "--persona-library", help="personas.jsonl to reuse."),
        library_size: int | None = typer.Option(
            None,
            "--library-size",
            min=1,
            help="Personas to generate if no library (default: problems x personas per problem, at most 100).",
        ),
        source: str | None = typer.Option(None, "--source", help="Local data file/folder instead of the Hub."),
        split: str | None = typer.Option(None, "--split"),
        mapping: str | None = typer.Option(None, "--map", help="generic: question=...,answer=...,answer_type=..."),
        seed: int = typer.Option(0, "--seed"),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print calls and token estimates; call nothing."),
        max_connections: int = typer.Option(8, "--max-connections", min=1),
        retries: int = typer.Option(2, "--retries", min=0, help="Re-asks after an invalid structured reply."),
        max_retries: int | None = typer.Option(None, "--max-retries", min=0, help="inspect's retries of a request."),
        timeout: int | None = typer.Option(None, "--timeout", min=1, help="Seconds per request, retries included."),
        attempt_timeout: int | None = typer.Option(None, "--attempt-timeout", min=1, help="Seconds per attempt."),
        temperature: float = typer.Option(0.7, "--temperature", min=0.0),
        min_attributes: int = typer.Option(3, "--min-attributes", min=1, help="Smallest sparse profile."),
        max_attributes: int = typer.Option(7, "--max-attributes", min=1, help="Largest sparse profile."),
        min_relevant: int = typer.Option(8, "--min-relevant", min=1, help="Smallest F(i)."),
        max_relevant: int = typer.Option(15, "--max-relevant", min=1, help="Largest F(i)."),
        max_new_attributes: int = typer.Option(3, "--max-new-attributes", min=0),
        catalogue: Path | None = typer.Option(None, "--catalogue", help="Attribute catalogue JSON (default: Θ)."),
        ipip: Path | None = typer.Option(None, "--ipip", help="IPIP-NEO items JSON to ground personas."),
        facets: bool = typer.Option(False, "--facets", help="Give generated personas facet scores."),
        max_share: float = typer.Option(0.05, "--max-share", help="Largest share of one persona bucket."),
        max_marginal_share: float = typer.Option(
            2.0,
            "--max-marginal-share",
            min=0.01,
            help="Cap of one occupation group or age band (x its expected share).",
        ),
        max_problem_chars: int = typer.Option(2000, "--max-problem-chars", min=100),
        semantic_dedup: bool = typer.Option(
            True,
            "--semantic-dedup/--no-semantic-dedup",
            help="Ask the model (temperature 0) whether each new attribute duplicates an existing one.",
        ),
        overwrite: bool = typer.Option(
            False,
            "--overwrite",
            help="Replace a benchmark --out holds that was built with other settings (the same settings resume).",
        ),
        min_yield: float = typer.Option(
            0.5,
            "--min-yield",
            min=0.0,
            max=1.0,
            help="Exit 1 when the build keeps less than this share of its planned scenarios (the kept ones are "
            "written, and the same command resumes).",
        ),
    ) -> None:
        """Build a personalization benchmark folder from a static benchmark."""
        config = _config(
            benchmark=benchmark,
            source=source,
            split=split,
            mapping=mapping,
            problems=problems,
            personas_per_problem=personas_per_problem,
            session_length=session_length,
            persona_library=persona_library,
            library_size=library_size,
            models=model,
            model_args=_model_args(model_arg),
            seed=seed,
            temperature=temperature,
            retries=retries,
            max_connections=max_connections,
            max_retries=max_retries,
            timeout=timeout,
            attempt_timeout=attempt_timeout,
            catalogue=catalogue,
            ipip=ipip,
            facets=facets,
            max_share=max_share,
            max_marginal_share=max_marginal_share,
            relevance={
                "min_relevant": min_relevant,
                "max_relevant": max_relevant,
                "max_new": max_new_attributes,
                "max_problem_chars": max_problem_chars,
            },
            profile={
                "min_attributes": min_attributes,
                "max_attributes": max_attributes,
                "max_problem_chars": max_problem_chars,
            },
            semantic_dedup={"enabled": semantic_dedup},
            min_yield=min_yield,
            out=out,
        )
        console = Console(highlight=False, soft_wrap=True)
        if dry_run:
            from prefdisco.builder.setup import check_build

            check_build(config, overwrite)  # what the build checks before its first call, the dry run checks too
            _print_estimate(console, config)
            return
        from prefdisco.builder.outcome import Yield, skip_lines
        from prefdisco.builder.pipeline import run_build

        with _progress(console, "build") as progress:
            report = run_build(config, progress=progress, overwrite=overwrite)
        _print_failures(console, report.failures)
        div = report.personas.get("diversity", {})
        if div.get("n"):
            console.print(
                f"persona library ({report.personas['source']}): {counted(div['n'], 'persona')}, "
                f"{counted(div['distinct_buckets'], 'bucket')}, largest share {div['max_bucket_share']:.2f}, "
                f"{counted(div['distinct_occupations'], 'occupation')}, "
                f"trait-pattern entropy {div['trait_pattern_entropy_bits']:.2f} bits"
            )
        if report.duplicates.get("identical_found"):
            console.print(
                f"identical profiles: {report.duplicates['identical_found']} regenerated, "
                f"{report.duplicates['still_identical']} still identical (skipped)"
            )
        semantic = report.dedup.get("semantic", {}).get("counts")
        if semantic and sum(semantic.values()):
            console.print(
                f"semantic dedup: {sum(semantic.values())} new attribute(s) checked, {semantic['catalogue']} merged "
                f"into the catalogue, {semantic['build']} into another new one, {semantic['new']} kept, "
                f"{semantic['failed']} failed (kept)"
            )
        if report.sessions is not None:
            console.print(_sessions_line(report.sessions), markup=False, soft_wrap=True)
        if report.skipped:
            console.print("skipped scenarios: " + ", ".join(f"{k} {v}" for k, v in report.skipped.items()))
            for line in skip_lines(report.skipped, report.failures):
                console.print(line, markup=False, soft_wrap=True)
        rejected = report.dedup.get("not_words") or []
        if rejected:
            names = ", ".join(f"{r['proposed']!r} ({r['reason']})" for r in rejected[:5])
            more = f" and {len(rejected) - 5} more (manifest.json)" if len(rejected) > 5 else ""
            console.print(f"new attribute names rejected, not words: {names}{more}", markup=False, soft_wrap=True)
        mean = report.usage["per_scenario_mean"]
        console.print(_usage_line(report.usage["total"]))
        if mean["calls"] is not None:
            console.print(
                f"per scenario: {mean['calls']:.2f} calls, {mean['input_tokens']:.0f} input / "
                f"{mean['output_tokens']:.0f} output tokens"
            )
        outcome = Yield(report.scenarios, report.counts["planned_scenarios"], config.min_yield)
        line = outcome.last_line(report.out, report.seconds)
        style = "green" if outcome.kept >= outcome.planned else "yellow"
        console.print(line, style=style, markup=False, soft_wrap=True)
        if not outcome.enough:
            raise typer.Exit(1)

    @app.command("personas")
    def personas(
        out: Path = typer.Option(..., "--out", help="personas.jsonl to write."),
        model: list[str] = typer.Option([], "--model", help="Builder model; repeat for a pool."),
        model_arg: list[str] = typer.Option([], "-M", help="Model arg key=value for the builder models."),
        n: int = typer.Option(100, "--n", min=1, help="Personas in the library."),
        seed: int = typer.Option(0, "--seed"),
        max_share: float = typer.Option(0.05, "--max-share", help="Largest share of one persona bucket."),
        max_marginal_share: float = typer.Option(
            2.0,
            "--max-marginal-share",
            min=0.01,
            help="Cap of one occupation group or age band (x its expected share).",
        ),
        ipip: Path | None = typer.Option(None, "--ipip", help="IPIP-NEO items JSON to ground the traits."),
        facets: bool = typer.Option(False, "--facets", help="Give personas facet scores."),
        max_connections: int = typer.Option(8, "--max-connections", min=1),
        retries: int = typer.Option(2, "--retries", min=0),
        max_retries: int | None = typer.Option(None, "--max-retries", min=0, help="inspect's retries of a request."),
        timeout: int | None = typer.Option(None, "--timeout", min=1, help="Seconds per request, retries included."),
        attempt_timeout: int | None = typer.Option(None, "--attempt-timeout", min=1, help="Seconds per attempt."),
        temperature: float = typer.Option(0.7, "--temperature", min=0.0),
        batch: int = typer.Option(8, "--batch", min=1, help="Candidates generated per rejection round."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace the file --out holds."),
    ) -> None:
        """Generate a persona library (Big Five blueprints, rejection sampling) into a personas.jsonl file."""
        from rich.table import Table

        from prefdisco.builder.library import run_personas

        config = _config(
            benchmark="personas",
            models=model,
            model_args=_model_args(model_arg),
            library_size=n,
            seed=seed,
            max_share=max_share,
            max_marginal_share=max_marginal_share,
            ipip=ipip,
            facets=facets,
            max_connections=max_connections,
            retries=retries,
            max_retries=max_retries,
            timeout=timeout,
            attempt_timeout=attempt_timeout,
            temperature=temperature,
            persona_batch=batch,
            out=out.parent,
        )
        console = Console(highlight=False, soft_wrap=True)
        with _progress(console, "personas") as progress:
            report = run_personas(out, config, progress=progress, overwrite=overwrite)
        _print_failures(console, report.failures)
        result = report.result
        table = Table("diversity", "value")
        for key, value in result.diversity.items():
            table.add_row(key, str(value))
        console.print(table)
        rejected = ", ".join(f"{k} {v}" for k, v in result.rejections.items()) or "none"
        console.print(f"candidates {result.candidates}, rejections: {rejected}")
        if len(result.personas) < n:
            console.print(f"[yellow]only {len(result.personas)} of {n} personas were accepted[/]")
        calls = sum(u["calls_run"] for u in report.usage.values())
        console.print(f"[green]wrote {len(result.personas)} persona(s)[/] to {out} ({calls} model call(s) this run)")


def _print_estimate(console: Console, config: BuildConfig) -> None:
    from rich.table import Table

    from prefdisco.builder import semantic_dedup
    from prefdisco.builder.catalogue import load_catalogue
    from prefdisco.builder.estimate import StepEstimate, estimate_build

    estimate = estimate_build(config)
    n_problems = estimate.steps["relevance"].calls  # one relevance call per problem
    row = semantic_dedup.estimate(
        load_catalogue(config.catalogue), n_problems, config.relevance.max_new, config.semantic_dedup
    )
    estimate.steps[semantic_dedup.STEP] = StepEstimate(**row)
    table = Table("step", "model calls", "input tokens", "output tokens", "note", title="dry run: nothing called")
    for step, s in estimate.steps.items():
        table.add_row(step, str(s.calls), f"{s.input_tokens:,}", f"{s.output_tokens:,}", s.note)
    total = estimate.total
    table.add_row("total", str(total.calls), f"{total.input_tokens:,}", f"{total.output_tokens:,}", "")
    console.print(table)
    if estimate.session_personas is not None:
        console.print(
            f"sessions: {counted(estimate.session_personas, 'persona')}, each on at least {config.session_length} "
            "problems; every profile but a persona's first shows its earlier values",
            markup=False,
        )
    console.print(f"token estimate: {estimate.method}; retries not included", markup=False)
