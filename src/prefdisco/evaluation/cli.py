"""``prefdisco eval``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from prefdisco.errors import UserError, print_error
from prefdisco.models.args import check_models, parse_model_args
from prefdisco.scoring.criterion_order import DEFAULT_MAX_CRITERIA

console = Console()


def _load_config(ctx: typer.Context, value: Path | None) -> Path | None:
    """``--config FILE``: its settings become the command's defaults (``evaluation/settings/config_file.py``)."""
    from prefdisco.evaluation.settings.config_file import load_into

    try:
        return load_into(ctx, value)
    except UserError as e:  # raised while click parses, outside the command body's error handling
        print_error(e)
        raise typer.Exit(e.exit_code) from None


def eval_command(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder, scenarios.jsonl, or a prefq-bench JSONL file.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="Model(s) under test (inspect names).")],
    log_dir: Annotated[Path, typer.Option(help="Run folder: inspect logs and results tables.")],
    user_model: Annotated[str | None, typer.Option(help="Simulated-user model (default: first --model).")] = None,
    judge_model: Annotated[
        list[str] | None,
        typer.Option(
            help="Judge/grader model (default: first --model). Repeat for a judge panel: every judge scores every "
            "criterion; the first also checks correctness and audits the user."
        ),
    ] = None,
    judge_repeats: Annotated[
        int, typer.Option(min=1, help="Times each judge scores each criterion (own seed and cache each).")
    ] = 1,
    judge_max_criteria: Annotated[
        int,
        typer.Option(
            help="--judge structured: criteria listed in one judge call at most (shuffled per call); a longer rubric "
            "is split over ceil(k/N) calls.",
        ),
    ] = DEFAULT_MAX_CRITERIA,
    modes: Annotated[
        str,
        typer.Option(
            help="Comma-separated conditions: baseline, discovery, oracle, wrong_persona (the negative control), "
            "oracle_distractor and stated_belief (harm probes); with --sessions also carry_transcript, carry_notes."
        ),
    ] = "baseline,discovery,oracle",
    fixed_k: Annotated[str, typer.Option(help="Comma-separated K values for the fixed-K ablation.")] = "",
    preset: Annotated[
        str, typer.Option(help="Evaluator preset: default, or paper (the paper's prompts; its settings are fixed).")
    ] = "default",
    user_type: Annotated[
        str | None,
        typer.Option(
            help="Simulated user: passive (default), cooperative, paper_passive, targeted (recommended) or trained "
            "(a trained user LM such as UserLM-8b)."
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            help="per_criterion (default; the paper's), structured (one call), or later (dialogues only, no judge "
            "call; prefdisco judge RUN_DIR judges them)."
        ),
    ] = None,
    logprobs: Annotated[
        bool | None, typer.Option(help="Probability-weighted judge scores where available (default off).")
    ] = None,
    audit: Annotated[bool, typer.Option(help="Audit the simulated user for unasked revelations.")] = True,
    quality: Annotated[
        bool,
        typer.Option(
            help="Judge every response's general quality (reasoning, completeness, no invented facts; one more "
            "judge call a response): the results' quality column."
        ),
    ] = True,
    refusals: Annotated[
        str,
        typer.Option(
            help="A refused or empty response is never judged: 'score' it by rule (PrefAlign 1, incorrect) or "
            "'exclude' it from PrefAlign and accuracy (counted in the report either way); part of the protocol.",
        ),
    ] = "score",
    cache: Annotated[bool, typer.Option(help="Cache calls per scenario/condition/role/run (free resume).")] = True,
    temperature: Annotated[float | None, typer.Option(help="Temperature of the model under test (0.7).")] = None,
    max_questions: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=5,  # dialogue.conditions.MAX_DISCOVERY_QUESTIONS (the command line loads no dialogue module)
            help="The question budget of discovery, stated_belief and the carry arms (0..5; default and paper: 5); "
            "part of the run's protocol.",
        ),
    ] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Max tokens per assistant turn.")] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the model under test.")] = None,
    user_temperature: Annotated[
        float | None, typer.Option(help="Temperature of the simulated user (0.7; paper: 0.4).")
    ] = None,
    judge_temperature: Annotated[
        float | None,
        typer.Option(help="Temperature of the judge(s), audit and grader (0; paper: 0.1; > 0 for --judge-repeats)."),
    ] = None,
    user_max_tokens: Annotated[int | None, typer.Option(help="Max tokens per simulated-user reply.")] = None,
    user_reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the user.")] = None,
    judge_max_tokens: Annotated[int | None, typer.Option(help="Max tokens per judge reply.")] = None,
    judge_reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the judge.")] = None,
    reasoning_tokens: Annotated[
        int | None,
        typer.Option(help="Reasoning-token budget of the model under test (Anthropic and Gemini take a budget)."),
    ] = None,
    user_reasoning_tokens: Annotated[int | None, typer.Option(help="Reasoning-token budget of the user.")] = None,
    judge_reasoning_tokens: Annotated[int | None, typer.Option(help="Reasoning-token budget of the judge.")] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            help='JSON {"provider/model": {"input": USD/1M, "output": USD/1M}}, over the packaged table of common '
            "models' prices."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Evaluate only the first N scenarios.")] = None,
    max_connections: Annotated[int | None, typer.Option(min=1)] = None,
    user_max_connections: Annotated[
        int | None,
        typer.Option(min=1, help="Simulated-user calls in flight at most, across the run (even on a shared endpoint)."),
    ] = None,
    judge_max_connections: Annotated[
        int | None,
        typer.Option(min=1, help="Judge/audit/grader/mapper calls in flight at most, across the run (all together)."),
    ] = None,
    max_samples: Annotated[int | None, typer.Option(min=1)] = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Processes to split the scenarios over (own log folders, merged results).")
    ] = 1,
    ray: Annotated[
        str | None,
        typer.Option(
            help="Run the run's shards on Ray: local (a Ray instance on 127.0.0.1), auto (the running cluster) or "
            "HOST:PORT; with --workers N, N shards at once (default: the cluster's CPUs). See docs/scale.md."
        ),
    ] = None,
    max_tasks: Annotated[
        int | None, typer.Option(min=1, help="Condition x model tasks run at once (default: all).")
    ] = None,
    batch: Annotated[
        str | None,
        typer.Option(
            help="Send every judge call and the single-turn conditions' answers through the provider's batch API "
            "(OpenAI, Anthropic, Google; half price, answers within hours; the dialogues stay real-time): on, a "
            "batch size, or a JSON file of inspect's batch settings. See docs/scale.md."
        ),
    ] = None,
    epochs: Annotated[
        int, typer.Option(min=1, help="Trials per scenario and condition, each with its own seeds (reports average).")
    ] = 1,
    seed: Annotated[int, typer.Option(help="The run part of every call seed (same seed, same seeds, any folder).")] = 0,
    max_retries: Annotated[
        int | None, typer.Option(min=0, help="Retries per model call on transient errors (default: inspect's).")
    ] = None,
    timeout: Annotated[int | None, typer.Option(min=1, help="Seconds per model call, retries included.")] = None,
    attempt_timeout: Annotated[int | None, typer.Option(min=1, help="Seconds per model call attempt.")] = None,
    retry_attempts: Annotated[int, typer.Option(min=0, help="Eval-set retries of tasks with failed samples.")] = 1,
    constrain_ask: Annotated[
        bool,
        typer.Option(
            "--constrain-ask/--no-constrain-ask",
            "--constrain-protocol/--no-constrain-protocol",
            help="Send the text ask channel's grammar (llama.cpp-based models only); --constrain-protocol is its "
            "older name.",
        ),
    ] = False,
    model_arg: Annotated[list[str], typer.Option("-M", help="Model arg key=value for the models under test.")] = [],  # noqa: B006
    ask: Annotated[
        str,
        typer.Option(
            "--ask",
            "--protocol",
            help="The ask channel: how discovery/fixed-K turns ask, text (QUESTION:/ANSWER: markers) or tools "
            "(ask_user); --protocol is its older name.",
        ),
    ] = "text",
    solver: Annotated[
        str | None,
        typer.Option(
            help="Your own assistant for discovery: a registered inspect solver or agent (e.g. prefdisco/checklist, "
            "react), module:function or path/to/file.py:function; it asks through the ask_user tool."
        ),
    ] = None,
    solver_arg: Annotated[list[str], typer.Option("-S", help="Solver arg key=value (JSON values, else strings).")] = [],  # noqa: B006
    pushback: Annotated[
        int,
        typer.Option(
            min=0,
            help="After each final answer the simulated person pushes back N turns, insisting on a wrong answer "
            "(correct stays the answer before; correct_after_pushback, flip_turn).",
        ),
    ] = 0,
    user_retry: Annotated[
        int,
        typer.Option(
            min=0,
            max=3,
            help="A simulated reply the hygiene checks flag (role inversion, restart, reasoning leak, empty or cut, "
            "profile echo) is drawn again up to N times with another seed; every flagged draw is kept.",
        ),
    ] = 0,
    distractors: Annotated[
        int, typer.Option(min=0, help="oracle_distractor: irrelevant preferences added to the oracle's profile.")
    ] = 3,
    sessions: Annotated[
        Path | None,
        typer.Option(
            help="A session set (prefdisco sessions): evaluate its scenarios, with session and position in every "
            "row; --modes may add carry_transcript and carry_notes, played position by position."
        ),
    ] = None,
    strict_policy: Annotated[
        bool,
        typer.Option(
            help="With a strategy --solver: refuse a task family its policy has no prior for (default: use the "
            "policy's prior pooled over all its families, and say so)."
        ),
    ] = False,
    display: Annotated[str, typer.Option(help="inspect display: full, rich, plain, log, none.")] = "plain",
    skip_invalid: Annotated[
        bool, typer.Option(help="A release file as BENCH: evaluate the rest when some lines nothing can score.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Print the planned model calls, tokens and USD per role, then stop: no model call, nothing written."
        ),
    ] = False,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            is_eager=True,
            callback=_load_config,
            help="A TOML file of settings (keys: the flags' names, e.g. user-model, judge-model; bench for BENCH); "
            "flags given override it. Every run writes its resolved settings to LOG_DIR/config.toml.",
        ),
    ] = None,
) -> None:
    """Evaluate model(s) on a benchmark in baseline/discovery/oracle (and fixed-K) conditions, resumably.

    Rerunning the same command in the same --log-dir finishes what is missing and makes no model call for
    finished samples. Writes LOG_DIR/results.csv (+ .parquet), attributes.csv and transcripts.jsonl.
    --dry-run prints the planned calls, tokens and USD per role instead, and writes nothing.
    --config FILE takes every setting from a TOML file (LOG_DIR/config.toml of a run reruns it).
    """
    settings = dict(locals())  # every setting as resolved: the file's, the flags', the defaults (config.toml)
    from prefdisco.benchio import source_hash
    from prefdisco.dialogue.byo import parse_solver_args
    from prefdisco.evaluation.run import RunConfig, run_conditions
    from prefdisco.evaluation.running.task import load_scenarios
    from prefdisco.evaluation.settings.config import limit_note, with_strict_policy
    from prefdisco.evaluation.settings.config_file import resolved
    from prefdisco.evaluation.settings.preset_rules import preset_settings
    from prefdisco.prices import missing_line, price_lines
    from prefdisco.prices import prices as price_book

    scenarios = load_scenarios(bench, skip_invalid=skip_invalid)
    book = price_book(prices)  # the packaged table, --prices over it
    config = RunConfig(
        models=model,
        user_model=user_model or model[0],
        grader_model=judge_model[0] if judge_model else model[0],
        judge_panel=list(judge_model[1:]) if judge_model else [],
        judge_repeats=judge_repeats,
        judge_max_criteria=judge_max_criteria,
        log_dir=log_dir,
        modes=[m.strip() for m in modes.split(",") if m.strip()],
        fixed_k=_parse_ks(fixed_k),
        **preset_settings(
            preset,
            {
                "user_type": user_type,
                "judge": judge,
                "logprobs": logprobs,
                "temperature": temperature,
                "user_temperature": user_temperature,
                "grader_temperature": judge_temperature,
                "max_questions": max_questions,
            },
        ),
        audit=audit,
        quality=quality,
        refusals=refusals,
        cache=cache,
        constrain_ask=constrain_ask,
        limit=limit,
        max_tokens=max_tokens,
        reasoning_effort=reasoning_effort,
        user_max_tokens=user_max_tokens,
        user_reasoning_effort=user_reasoning_effort,
        grader_max_tokens=judge_max_tokens,
        grader_reasoning_effort=judge_reasoning_effort,
        reasoning_tokens=reasoning_tokens,
        user_reasoning_tokens=user_reasoning_tokens,
        grader_reasoning_tokens=judge_reasoning_tokens,
        prices=book,
        max_connections=max_connections,
        user_max_connections=user_max_connections,
        judge_max_connections=judge_max_connections,
        max_samples=max_samples,
        max_tasks=max_tasks,
        batch=batch,
        workers=workers,
        ray=ray,
        epochs=epochs,
        seed=seed,
        max_retries=max_retries,
        timeout=timeout,
        attempt_timeout=attempt_timeout,
        retry_attempts=retry_attempts,
        display=display,
        model_args=parse_model_args(model_arg),
        ask=ask,
        solver=solver,
        solver_args=with_strict_policy(parse_solver_args(solver_arg), strict_policy),
        sessions=sessions,
        pushback=pushback,
        user_retry=user_retry,
        distractors=distractors,
        benchmark=source_hash(bench),  # what protocol.json names the benchmark by (a submission carries it)
        resolved=resolved(settings),
    )
    config.validate()
    said = limit_note(scenarios, config.limit)
    if said:
        Console(stderr=True).print(said, markup=False, highlight=False, soft_wrap=True)
    if config.judge_repeats > 1 and config.grader_temperature == 0:
        n = config.judge_repeats
        Console(stderr=True).print(
            f"warning: --judge-repeats {n} at judge temperature 0: the {n} judgings will be identical (and paid "
            f"{n} times); give --judge-temperature 0.7 (or more) to measure the judge's own variance",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    run_models = [*config.models, config.user_model, *config.judge_models()]
    if dry_run:  # before any model is resolved or any file written: needs no API key
        from prefdisco.evaluation.estimate.plan import estimate_run
        from prefdisco.evaluation.estimate.text import render_estimate
        from prefdisco.evaluation.preflight import preflight

        preflight(scenarios, config)  # every check the run makes before its first call, writing nothing

        console.print(render_estimate(estimate_run(scenarios, config)), markup=False, highlight=False, soft_wrap=True)
        for line in price_lines(book, run_models):  # (the estimate's notes name those without a price)
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    check_models(sorted({*config.models, config.user_model, *config.judge_models()}))
    tables = run_conditions(scenarios, config)
    failed = int(tables.results["failed"].sum()) if len(tables.results) else 0
    console.print(f"{len(tables.results)} result rows ({failed} failed) → {log_dir / 'results.csv'}")
    for said in [*price_lines(book, run_models), missing_line(book, run_models)]:
        if said:  # the prices of cost_usd
            console.print(said, markup=False, highlight=False, soft_wrap=True)
    report = f"prefdisco report {log_dir} --out {log_dir / 'report'}"
    judge_first = f"prefdisco judge {log_dir}, then " if config.judge == "later" else ""  # --judge later
    console.print(f"next: {judge_first}{report}", highlight=False, soft_wrap=True, markup=False)


def _parse_ks(text: str) -> list[int]:
    ks = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit():
            raise UserError(f"--fixed-k: {part!r} is not a positive integer")
        ks.append(int(part))
    return ks


def config_command(
    run: Annotated[Path, typer.Argument(help="A prefdisco eval run folder (or its config.toml).")],
) -> None:
    """Print the settings a run was made with (its config.toml): rerun it with prefdisco eval --config FILE."""
    from prefdisco.evaluation.settings.config_file import show_config

    print(show_config(run), end="")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("config")(config_command)
