"""``prefdisco policy fit``: parse, fit (``policies/fit.py``), write ``policy.json`` atomically, print a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from prefdisco.cli_paths import CheckedGroup


def fit_command(
    bench: Annotated[Path, typer.Argument(help="Benchmark folder, scenarios.jsonl, or a prefq-bench JSONL file.")],
    out: Annotated[Path, typer.Option("--out", help="The policy file to write (JSON).")],
    train_split: Annotated[
        float, typer.Option(help="Fraction of each family's problems to fit on (1.0: all of them).")
    ] = 0.9,
    seed: Annotated[int, typer.Option(help="Seed of the split by problem (sha256-based, deterministic).")] = 0,
) -> None:
    """Fit attribute priors per task family on the training problems of BENCH (split by problem)."""
    from prefdisco.policies.fit import fit_source
    from prefdisco.policies.model import write_policy
    from prefdisco.policies.split import check_fraction

    check_fraction(train_split)
    policy = fit_source(bench, fraction=train_split, seed=seed)
    write_policy(policy, out)
    split = policy.split
    typer.echo(
        f"Fitted {len(policy.families)} famil{'y' if len(policy.families) == 1 else 'ies'} on "
        f"{len(split.train_problems)}/{split.n_problems} problems ({split.n_train_scenarios}/{split.n_scenarios} "
        f"scenarios); wrote {out}"
    )
    for name, prior in policy.families.items():
        typer.echo(f"  {name}: {prior.n_scenarios} scenarios, {len(prior.attributes)} attributes")


def register(app: typer.Typer) -> None:
    """Add the ``policy`` group (``policy fit``) to ``app``."""
    policy = typer.Typer(
        cls=CheckedGroup,
        name="policy",
        help="Elicitation policies fitted on a benchmark's profiles.",
        no_args_is_help=True,
    )
    policy.command("fit")(fit_command)
    app.add_typer(policy, name="policy")
