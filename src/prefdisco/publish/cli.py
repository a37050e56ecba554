"""``prefdisco publish BENCH --out DIR``: the command; the work is :mod:`prefdisco.publish.writer`'s."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from prefdisco.wording import counted


def register(app: typer.Typer) -> None:
    """Add ``publish`` to ``app``."""

    @app.command("publish")
    def publish_cmd(
        bench: Path = typer.Argument(..., help="A built benchmark folder (manifest.json, scenarios.jsonl, ...)."),
        out: Path = typer.Option(..., "--out", help="The folder to write: a dataset repository ready to upload."),
        overwrite: bool = typer.Option(False, "--overwrite", help="Replace what --out holds."),
        license: str = typer.Option(
            "cc-by-4.0",
            "--license",
            help="The licence id the build's own content (personas, profiles, rubrics) is published under; each "
            "problem keeps its source benchmark's.",
        ),
        author: list[str] = typer.Option(
            [], "--author", help="An author of the benchmark for CITATION.cff (repeat for several)."
        ),
    ) -> None:
        """Write a benchmark as a dataset repository: Parquet per config, dataset card, Croissant, CITATION.cff and
        eval.yaml (docs/publish.md). Load it with datasets.load_dataset, evaluate it with prefdisco eval DIR."""
        from prefdisco.publish.writer import publish

        done = publish(bench, out, overwrite=overwrite, license=license, authors=author)
        pub = done.publication
        configs = ", ".join(t.config.name for t in pub.tables)
        Console(highlight=False, soft_wrap=True).print(
            f"wrote {out}: {counted(pub.scenarios, 'scenario')} in {counted(len(pub.tables), 'config')} ({configs}), "
            f"{counted(len(done.files), 'file')}; content hash {pub.info.content_hash}",
            markup=False,
        )
