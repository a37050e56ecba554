"""``prefdisco demo`` and ``prefdisco eval``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from prefdisco.errors import UserError

console = Console()


def _check_models(names: list[str]) -> None:
    """Resolve every model once, so a typo or a missing API key fails before anything runs."""
    from inspect_ai.model import get_model

    for name in names:
        try:
            get_model(name)
        except UserError:
            raise
        except Exception as e:  # inspect raises several types here; all mean "this model cannot be used"
            raise UserError(f"model {name!r} cannot be used: {one_line(str(e)) or type(e).__name__}") from e


def one_line(message: str) -> str:
    """inspect's error text without rich markup, "ERROR:" prefixes or line breaks."""
    text = re.sub(r"\[/?[a-z ]+\]", "", message)
    parts = [p.strip().removeprefix("ERROR:").strip() for p in text.splitlines()]
    return " — ".join(p for p in parts if p)


def parse_model_args(pairs: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"-M {key or pair!r}: expected key=value")
        if "key" in key.lower() or "token" in key.lower() or "secret" in key.lower():
            raise UserError(
                f"-M {key}: pass credentials through the provider's environment variable, not -M "
                "(model args are written to the logs)"
            )
        args[key.strip()] = value.strip()
    return args


def demo(
    out: Annotated[Path, typer.Option(help="Output folder (logs, results tables, summary.json).")] = Path(
        "prefdisco-demo"
    ),
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N demo scenarios.")] = None,
    display: Annotated[str, typer.Option(help="inspect display: full, rich, plain, log, none.")] = "plain",
) -> None:
    """Run baseline, discovery and oracle on the packaged demo scenarios with the embedded model, offline."""
    from prefdisco.demo import format_number, run_demo

    summary = run_demo(out=out, limit=limit, display=display)
    table = Table(title=f"PrefDisco demo — {summary['n_scenarios']} scenarios, model {summary['models']['assistant']}")
    for column in ("mode", "PrefAlign (1-5)", "accuracy", "questions asked", "n", "judge invalid", "failed"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for mode, row in summary["modes"].items():
        table.add_row(
            mode,
            format_number(row["pref_align_mean"]),
            format_number(row["accuracy"]),
            format_number(row["mean_questions"], 1),
            str(row["n"]),
            str(row["judge_invalid"]),
            str(row["failed"]),
        )
    console.print(table)
    if summary["norm_align"] is None:
        console.print(f"NormAlign: undefined — {summary['norm_align_reason']}")
    else:
        console.print(f"NormAlign: {summary['norm_align']:.1f}")
    console.print(
        f"Wrote {out / 'summary.json'}; logs in {summary['log_dir']} (inspect view --log-dir {summary['log_dir']})"
    )


def eval_command(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder, scenarios.jsonl, or a prefq-bench JSONL file.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="Model(s) under test (inspect names).")],
    log_dir: Annotated[Path, typer.Option(help="Run folder: inspect logs and results tables.")],
    user_model: Annotated[str | None, typer.Option(help="Simulated-user model (default: first --model).")] = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge/grader model (default: first --model).")] = None,
    modes: Annotated[str, typer.Option(help="Comma-separated conditions.")] = "baseline,discovery,oracle",
    fixed_k: Annotated[str, typer.Option(help="Comma-separated K values for the fixed-K ablation.")] = "",
    user_type: Annotated[str, typer.Option(help="Simulated user: passive or cooperative.")] = "passive",
    judge: Annotated[str, typer.Option(help="per_criterion (paper) or structured (one call).")] = "per_criterion",
    logprobs: Annotated[bool, typer.Option(help="Probability-weighted judge scores where available.")] = False,
    audit: Annotated[bool, typer.Option(help="Audit the simulated user for unasked revelations.")] = True,
    cache: Annotated[bool, typer.Option(help="Cache calls per scenario/condition/role/run (free resume).")] = True,
    temperature: Annotated[float, typer.Option(help="Temperature of the model under test.")] = 0.7,
    max_tokens: Annotated[int | None, typer.Option(help="Max tokens per assistant turn.")] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the model under test.")] = None,
    user_temperature: Annotated[float, typer.Option(help="Temperature of the simulated user.")] = 0.7,
    user_max_tokens: Annotated[int | None, typer.Option(help="Max tokens per simulated-user reply.")] = None,
    user_reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the user.")] = None,
    judge_max_tokens: Annotated[int | None, typer.Option(help="Max tokens per judge reply.")] = None,
    judge_reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the judge.")] = None,
    prices: Annotated[
        Path | None, typer.Option(help='JSON {"provider/model": {"input": USD/1M, "output": USD/1M}}.')
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Evaluate only the first N scenarios.")] = None,
    max_connections: Annotated[int | None, typer.Option(min=1)] = None,
    max_samples: Annotated[int | None, typer.Option(min=1)] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Processes to split the scenarios over (own log folders, merged results).")
    ] = 1,
    max_tasks: Annotated[
        int | None, typer.Option(min=1, help="Condition x model tasks run at once (default: all).")
    ] = None,
    max_retries: Annotated[
        int | None, typer.Option(min=0, help="Retries per model call on transient errors (default: inspect's).")
    ] = None,
    timeout: Annotated[int | None, typer.Option(min=1, help="Seconds per model call, retries included.")] = None,
    attempt_timeout: Annotated[int | None, typer.Option(min=1, help="Seconds per model call attempt.")] = None,
    retry_attempts: Annotated[int, typer.Option(min=0, help="Eval-set retries of tasks with failed samples.")] = 1,
    constrain_protocol: Annotated[
        bool, typer.Option(help="Send the protocol grammar (llama.cpp-based models only).")
    ] = False,
    model_arg: Annotated[list[str], typer.Option("-M", help="Model arg key=value for the models under test.")] = [],  # noqa: B006
    display: Annotated[str, typer.Option(help="inspect display: full, rich, plain, log, none.")] = "plain",
) -> None:
    """Evaluate model(s) on a benchmark in baseline/discovery/oracle (and fixed-K) conditions, resumably.

    Rerunning the same command in the same --log-dir finishes what is missing and makes no model call for
    finished samples. Writes LOG_DIR/results.csv (+ .parquet), attributes.csv and transcripts.jsonl.
    """
    from prefdisco.analysis.results import load_prices
    from prefdisco.dialogue.run import RunConfig, run_conditions
    from prefdisco.dialogue.task import load_scenarios

    scenarios = load_scenarios(bench)
    config = RunConfig(
        models=model,
        user_model=user_model or model[0],
        grader_model=judge_model or model[0],
        log_dir=log_dir,
        modes=[m.strip() for m in modes.split(",") if m.strip()],
        fixed_k=_parse_ks(fixed_k),
        user_type=user_type,
        judge=judge,
        audit=audit,
        cache=cache,
        logprobs=logprobs,
        constrain_protocol=constrain_protocol,
        limit=limit,
        temperature=temperature,
        max_tokens=max_tokens,
        reasoning_effort=reasoning_effort,
        user_temperature=user_temperature,
        user_max_tokens=user_max_tokens,
        user_reasoning_effort=user_reasoning_effort,
        grader_max_tokens=judge_max_tokens,
        grader_reasoning_effort=judge_reasoning_effort,
        prices=load_prices(prices) if prices else {},
        max_connections=max_connections,
        max_samples=max_samples,
        max_tasks=max_tasks,
        workers=workers,
        max_retries=max_retries,
        timeout=timeout,
        attempt_timeout=attempt_timeout,
        retry_attempts=retry_attempts,
        display=display,
        model_args=parse_model_args(model_arg),
    )
    config.validate()
    _check_models(sorted({*config.models, config.user_model, config.grader_model}))
    tables = run_conditions(scenarios, config)
    failed = int(tables.results["failed"].sum()) if len(tables.results) else 0
    console.print(f"{len(tables.results)} result rows ({failed} failed) → {log_dir / 'results.csv'}")


def _parse_ks(text: str) -> list[int]:
    ks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit():
            raise UserError(f"--fixed-k: {part!r} is not a positive integer")
        ks.append(int(part))
    return ks


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("eval")(eval_command)
