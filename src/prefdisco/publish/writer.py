"""``prefdisco publish BENCH --out DIR``: a built benchmark folder as a dataset repository (:mod:`.layout`).

Everything is made in memory first and checked (the benchmark's content hash, every row read back as its line of
``scenarios.jsonl``), then written into a new folder beside ``--out`` and moved into place in one rename, so a
failure leaves ``--out`` as it was. An ``--out`` that holds anything is refused without ``--overwrite``; with it,
the old folder is replaced whole. Nothing written depends on the time or the machine: the same build gives the
same bytes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from prefdisco.atomic import current_umask
from prefdisco.benchio import MANIFEST_FILE, SCENARIOS_FILE, Bench, jsonl_bytes, read_bench
from prefdisco.errors import UserError
from prefdisco.overwrite import holds
from prefdisco.publish.build import build_info
from prefdisco.publish.card import card_text
from prefdisco.publish.citation import citation_text
from prefdisco.publish.croissant import croissant_text
from prefdisco.publish.evalyaml import eval_text
from prefdisco.publish.layout import BENCH_FILES, CITATION, CROISSANT, EVAL_YAML, README, bench_file, is_published
from prefdisco.publish.pin import task_pin
from prefdisco.publish.publication import DEFAULT_LICENSE, Publication
from prefdisco.publish.sources import configs, sources
from prefdisco.publish.tables import build_tables
from prefdisco.wording import counted


@dataclass
class Published:
    out: Path
    publication: Publication
    files: dict[str, bytes]


def read_source(bench: Path) -> Bench:
    """The benchmark folder to publish: a built one whose hash matches its files, else one line saying why."""
    if is_published(bench):
        raise UserError(f"{bench}: already a published folder; publish the benchmark folder it was made from")
    if not bench.is_dir():
        raise UserError(f"{bench}: not a folder (expected a built benchmark folder with {MANIFEST_FILE})")
    if not (bench / MANIFEST_FILE).is_file():
        raise UserError(
            f"{bench}: not a built benchmark (no {MANIFEST_FILE}); build one with prefdisco build, or import a "
            "release with prefdisco import-release"
        )
    return read_bench(bench)  # the content hash checked, every line read


def _check_canonical(folder: Path, bench: Bench) -> None:
    """The data must give back ``scenarios.jsonl`` byte for byte, or the published hash could not be checked."""
    written = (folder / SCENARIOS_FILE).read_bytes()
    if jsonl_bytes(bench.scenarios) == written:
        return
    lines = written.decode("utf-8").splitlines()
    ours = [s.model_dump_json() for s in bench.scenarios]
    at = next((i for i, (a, b) in enumerate(zip(lines, ours, strict=False), 1) if a != b), min(len(lines), len(ours)))
    raise UserError(
        f"{folder / SCENARIOS_FILE}:{at}: not written as PrefDisco writes a scenario (one compact JSON object a line, "
        "no blank lines), so the published data could not give back the content hash; nothing written"
    )


def refuse_out(out: Path, bench: Path, overwrite: bool) -> None:
    """``--out`` must be a new or empty folder (or any folder with ``--overwrite``), and not the benchmark's."""
    out_r, bench_r = out.resolve(), bench.resolve()
    if out_r == bench_r or bench_r in out_r.parents or out_r in bench_r.parents:
        raise UserError(f"--out {out}: the benchmark folder {bench} or a folder around or inside it; give another")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: a file; publish writes a folder, give another --out")
    if overwrite or not out.is_dir():
        return
    entries = sorted(p.name for p in out.iterdir())
    if entries:
        held = holds(out) or counted(len(entries), "entry")
        raise UserError(f"--out {out}: holds {held}; give --overwrite to replace it, or another --out")


def publication(bench_dir: Path, license: str = DEFAULT_LICENSE, authors: list[str] | None = None) -> Publication:
    bench = read_source(bench_dir)
    _check_canonical(bench_dir, bench)
    found = sources(bench.scenarios)
    tables, data = build_tables(bench.scenarios, configs(bench.scenarios, found), str(bench_dir))
    bench_files = {bench_file(name): (bench_dir / name).read_bytes() for name in BENCH_FILES}
    return Publication(
        info=build_info(bench.manifest),
        sources=found,
        tables=tables,
        data=data,
        bench_files=bench_files,
        pin=task_pin(),
        license=license,
        authors=list(authors or []),
    )


def folder_files(pub: Publication) -> dict[str, bytes]:
    """Every file of the published folder, path → bytes."""
    files = dict(pub.data) | dict(pub.bench_files)
    files[README] = card_text(pub).encode("utf-8")
    files[CROISSANT] = croissant_text(pub).encode("utf-8")
    files[CITATION] = citation_text(pub).encode("utf-8")
    files[EVAL_YAML] = eval_text(pub).encode("utf-8")
    return dict(sorted(files.items()))


def write_folder(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` as the folder ``out`` in one rename (an old ``out`` is replaced whole)."""
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as e:
        raise UserError(f"{parent}: cannot write there ({e.strerror or e})") from e
    old: Path | None = None
    try:
        os.chmod(tmp, 0o777 & ~current_umask())
        for rel, data in files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=parent))
            os.replace(out, old / "replaced")
        os.replace(tmp, out)
    except OSError as e:
        if old is not None and not out.exists():
            os.replace(old / "replaced", out)
        raise UserError(f"{out}: cannot write ({e.strerror or e}); nothing written") from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def publish(
    bench_dir: Path,
    out: Path,
    overwrite: bool = False,
    license: str = DEFAULT_LICENSE,
    authors: list[str] | None = None,
) -> Published:
    """Publish the benchmark folder ``bench_dir`` as the folder ``out`` (see the module docstring)."""
    bench_dir, out = Path(bench_dir), Path(out)
    refuse_out(out, bench_dir, overwrite)
    pub = publication(bench_dir, license, authors)
    files = folder_files(pub)
    write_folder(out, files)
    return Published(out, pub, files)
