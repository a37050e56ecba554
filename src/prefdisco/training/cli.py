"""``prefdisco export-training``: parse, export (``training/export.py``), print what was written and kept."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SUFFIXES = {"sft": ".jsonl", "dpo": ".jsonl", "verl": ".parquet"}
"""The file each format writes: JSON lines, or Parquet."""


def check_out(run_dir: Path, out: Path, format_: str, overwrite: bool) -> None:
    """Refuse, before reading the run, an ``--out`` named for another kind of file (Parquet under a ``.jsonl``
    name), or one that holds something other than this run's own earlier export of this format (a persona
    library, another run's export) unless ``--overwrite``."""
    import json

    from prefdisco.errors import UserError
    from prefdisco.overwrite import refuse_overwrite
    from prefdisco.training.export import meta_path

    wanted = SUFFIXES.get(format_)
    if wanted is not None and out.suffix.lower() != wanted:
        kind = "JSON lines" if wanted == ".jsonl" else "Parquet"
        raise UserError(f"--out {out}: --format {format_} writes {kind}; name the file {out.with_suffix(wanted).name}")
    if overwrite or not out.exists():
        return
    try:
        earlier = json.loads(meta_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    own = (
        isinstance(earlier, dict)
        and earlier.get("export") == format_
        and Path(str(earlier.get("run"))).absolute() == Path(run_dir).absolute()
    )
    if not own:
        refuse_overwrite(out, overwrite, note=" (it is not this run's earlier export)")


def export_training_command(
    run_dir: Annotated[Path, typer.Argument(help="An eval run folder (results table and transcripts.jsonl).")],
    format_: Annotated[str, typer.Option("--format", help="sft (JSONL chats), dpo (JSONL pairs) or verl (Parquet).")],
    out: Annotated[Path, typer.Option("--out", help="The file to write; FILE.meta.json records options and counts.")],
    min_pref_align: Annotated[
        float | None,
        typer.Option(help="sft: least PrefAlign of a kept dialogue (default 4.0); dpo: least PrefAlign of chosen."),
    ] = None,
    margin: Annotated[float, typer.Option(help="dpo: least PrefAlign gap between chosen and rejected.")] = 1.0,
    modes: Annotated[
        str,
        typer.Option(
            help="sft/dpo: comma-separated modes to read (default sft: all but wrong_persona; "
            "dpo: discovery, oracle, fixed_k)."
        ),
    ] = "",
    bench: Annotated[
        Path | None, typer.Option(help="verl: the benchmark the run evaluated (gold answers, domains).")
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(help="verl: a policy.json; split by its train fraction and seed (instead of --train-fraction)."),
    ] = None,
    prompt_mode: Annotated[str, typer.Option(help="verl: the mode whose opening messages are the prompt.")] = (
        "discovery"
    ),
    train_fraction: Annotated[
        float | None,
        typer.Option(help="verl: split by problem as the interaction's train_fraction; eval rows to --eval-out."),
    ] = None,
    split_seed: Annotated[
        int | None, typer.Option(help="verl: the split's seed, as the interaction's split_seed (default 0).")
    ] = None,
    eval_out: Annotated[
        Path | None, typer.Option(help="verl with a split: the evaluation rows' file (default OUT_STEM.eval.parquet).")
    ] = None,
    pushback_pairs: Annotated[
        bool,
        typer.Option(
            "--pushback-pairs",
            help="dpo, a run with --pushback: also pair a reply that held a correct answer over one that gave in "
            "(same context: the dialogue up to the challenge).",
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option(help="Replace what --out holds (a file that is not this run's own earlier export).")
    ] = False,
) -> None:
    """Export a run's dialogues and scores as training data (SFT, DPO pairs, or a verl RL dataset)."""
    from prefdisco.training.export import ExportOptions, export_training, meta_path

    chosen = tuple(m.strip() for m in modes.split(",") if m.strip()) if modes.strip() else None
    options = ExportOptions(
        format=format_,
        min_pref_align=min_pref_align,
        margin=margin,
        modes=chosen,
        bench=bench,
        policy=policy,
        prompt_mode=prompt_mode,
        train_fraction=train_fraction,
        split_seed=split_seed,
        eval_out=eval_out,
        pushback_pairs=pushback_pairs,
    )
    options.check()  # the options' own errors first, then what --out holds
    check_out(run_dir, out, format_, overwrite)
    meta = export_training(run_dir, out, options)
    counts = ", ".join(f"{k} {v}" for k, v in meta["counts"].items())
    also = ""
    if "eval" in meta.get("files", {}):
        also = f" and {meta['counts'].get('split_eval', 0)} evaluation rows to {meta['files']['eval']}"
    typer.echo(f"Wrote {meta['rows']} {format_} rows to {out}{also} ({counts}); options and counts in {meta_path(out)}")


def register(app: typer.Typer) -> None:
    app.command("export-training")(export_training_command)
