"""What every file of a published folder is written from: the build's manifest read once, its source benchmarks,
the tables and their bytes, the licence the build is published under and the task's pin."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefdisco.publish.build import BuildInfo
from prefdisco.publish.pin import TaskPin
from prefdisco.publish.sources import Source
from prefdisco.publish.tables import Table

DEFAULT_LICENSE = "cc-by-4.0"
"""The licence of the build's own content (personas, profiles, rubrics) unless ``--license`` says another."""

SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


@dataclass
class Publication:
    info: BuildInfo
    sources: list[Source]
    tables: list[Table]
    data: dict[str, bytes]  # every Parquet file, path → bytes
    bench_files: dict[str, bytes]  # prefdisco/manifest.json, ... → bytes
    pin: TaskPin
    license: str = DEFAULT_LICENSE
    authors: list[str] = field(default_factory=list)

    @property
    def scenarios(self) -> int:
        return self.tables[0].config.size

    @property
    def title(self) -> str:
        names = ", ".join(s.benchmark for s in self.sources)
        return f"PrefDisco benchmark of {names} ({self.info.short_hash})"

    @property
    def size_category(self) -> str:
        return next((label for limit, label in SIZE_CATEGORIES if self.scenarios < limit), "n>1M")

    def licenses(self) -> list[str]:
        """The licence ids the card's header names: the build's, then each source's known one, once each."""
        ids = [self.license] + [s.license for s in self.sources if " " not in s.license]
        return list(dict.fromkeys(ids))
