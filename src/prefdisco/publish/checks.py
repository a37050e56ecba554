"""``prefdisco validate DIR`` of a published folder: every problem, one line each, in the order a reader meets them.

The data first: ``prefdisco/manifest.json``, the ``all`` config's rows read back as scenarios and the content hash
over them and the files beside the manifest; then every config a build of these scenarios has (one per source
benchmark), each file where the card says and each row equal to its ``all`` row. Then the files that describe the
data (:mod:`prefdisco.publish.described`): the card's YAML header and configs, the Croissant file (its hashes, its
record sets and responsible-AI fields, and ``mlcroissant``'s own validation where the ``publish`` extra is
installed), ``eval.yaml``'s pins and ``CITATION.cff``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prefdisco.benchio import MANIFEST_FILE, read_manifest
from prefdisco.errors import UserError
from prefdisco.publish.columns import LINE, from_row
from prefdisco.publish.layout import BENCH, BENCH_FILES, DATA
from prefdisco.publish.reader import config_files, data_hash, read_rows, scenarios_of
from prefdisco.publish.sources import ALL, Config, configs, sources
from prefdisco.publish.tables import shard_paths
from prefdisco.schema import Scenario


@dataclass(frozen=True)
class Finding:
    path: Path
    message: str
    severity: str = "error"  # error | warning


@dataclass
class Findings:
    folder: Path
    items: list[Finding] = field(default_factory=list)
    scenarios: list[Scenario] = field(default_factory=list)
    content_hash: str = ""
    configs: list[Config] = field(default_factory=list)

    def error(self, rel: str, message: str) -> None:
        self.items.append(Finding(self.folder / rel, message))

    def warning(self, rel: str, message: str) -> None:
        self.items.append(Finding(self.folder / rel, message, "warning"))

    def expected_files(self) -> dict[str, dict[str, list[str]]]:
        """Config → split → the Parquet paths a publish of these scenarios writes."""
        return {c.name: {s: shard_paths(c.name, s, len(rows)) for s, rows in c.splits.items()} for c in self.configs}


def _check_config(found: Findings, config: Config) -> None:
    """One config's files and rows: where the card says, each row its ``all`` row."""
    expected = found.expected_files()[config.name]
    present = {str(p.relative_to(found.folder)) for p in config_files(found.folder, config.name)}
    wanted = {p for paths in expected.values() for p in paths}
    for missing in sorted(wanted - present):
        found.error(missing, f"missing (config {config.name} has {sum(map(len, config.splits.values()))} rows)")
    for extra in sorted(present - wanted):
        found.error(extra, f"not a file of config {config.name} (a publish of these scenarios has no such file)")
    for split, paths in expected.items():
        files = [found.folder / p for p in paths if p in present]
        if len(files) != len(paths):
            continue
        try:
            rows = read_rows(files)
        except UserError as e:
            found.error(paths[0], str(e))
            continue
        lines = [int(r[LINE]) for r in rows]  # type: ignore[call-overload]
        if lines != [i + 1 for i in config.splits[split]]:
            found.error(paths[0], f"its rows are not the {split} scenarios of {config.name} in build order")
            continue
        if config.name == ALL:  # its rows are the scenarios themselves
            continue
        for row, line in zip(rows, lines, strict=True):
            try:
                same = from_row(row) == found.scenarios[line - 1]
            except (ValueError, TypeError, KeyError) as e:
                found.error(paths[0], f"line {line}: not a scenario ({str(e).splitlines()[0]})")
                break
            if not same:
                found.error(paths[0], f"line {line}: differs from the {ALL} config's row of the same line")
                break


def check_data(folder: Path) -> Findings:
    """The data's problems (see the module docstring); the scenarios and configs it read, for the later checks."""
    found = Findings(folder)
    try:
        manifest = read_manifest(folder / BENCH)
    except UserError as e:
        found.error(f"{BENCH}/{MANIFEST_FILE}", str(e).split(": ", 1)[-1])
        return found
    found.content_hash = str(manifest.get("content_hash") or "")
    for name in BENCH_FILES:
        if not (folder / BENCH / name).is_file():
            found.error(f"{BENCH}/{name}", "missing (the content hash is taken over it)")
    try:
        found.scenarios = scenarios_of(read_rows(config_files(folder, ALL)), folder / DATA / ALL)
    except UserError as e:
        found.error(f"{DATA}/{ALL}", str(e))
        return found
    if not found.scenarios:
        found.error(f"{DATA}/{ALL}", f"no rows (the {ALL} config holds every scenario)")
        return found
    if not found.items:
        actual = data_hash(folder, found.scenarios)
        if actual != found.content_hash:
            found.error(
                f"{BENCH}/{MANIFEST_FILE}",
                f"content_hash {found.content_hash!r} does not match the published data ({actual}); a file changed "
                "after it was published",
            )
    found.configs = configs(found.scenarios, sources(found.scenarios))
    names = {c.name for c in found.configs}
    for folder_name in sorted(p.name for p in (folder / DATA).iterdir() if p.is_dir() and p.name not in names):
        found.error(f"{DATA}/{folder_name}", "a config folder no source benchmark of the scenarios has")
    for config in found.configs:
        _check_config(found, config)
    return found
