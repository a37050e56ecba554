"""The files of a published folder, and how a folder is known to be one.

``DIR/``

* ``README.md`` — the dataset card: its YAML header (licenses, configs and their ``data_files``) and a body written
  from the manifest (:mod:`prefdisco.publish.card`);
* ``croissant.json`` — Croissant 1.1 metadata with its responsible-AI fields (:mod:`prefdisco.publish.croissant`);
* ``CITATION.cff`` — the benchmark as a dataset, citing the paper (:mod:`prefdisco.publish.citation`);
* ``eval.yaml`` — the task, its version, the task file pinned and every asset pinned by sha256
  (:mod:`prefdisco.publish.evalyaml`);
* ``data/<config>/<split>-00000-of-00001.parquet`` — the scenarios, a config per source benchmark and ``all``
  (:mod:`prefdisco.publish.tables`);
* ``prefdisco/`` — the benchmark folder's ``manifest.json``, ``personas.jsonl`` and ``attributes.json`` as the build
  wrote them: with the ``all`` config's rows (which give back ``scenarios.jsonl`` byte for byte) they are what the
  content hash is taken over, so a reader checks the hash from the published folder alone.
"""

from __future__ import annotations

from pathlib import Path

from prefdisco.benchio import ATTRIBUTES_FILE, MANIFEST_FILE, PERSONAS_FILE, PUBLISHED_BENCH

README = "README.md"
CROISSANT = "croissant.json"
CITATION = "CITATION.cff"
EVAL_YAML = "eval.yaml"
DATA = "data"
BENCH = PUBLISHED_BENCH
"""The folder of the benchmark folder's own files (all but its scenarios, which are the Parquet data)."""
BENCH_FILES = (MANIFEST_FILE, PERSONAS_FILE, ATTRIBUTES_FILE)


def bench_file(name: str) -> str:
    """A benchmark folder's file as a path inside the published folder (``prefdisco/manifest.json``)."""
    return f"{BENCH}/{name}"


def is_published(path: Path | str) -> bool:
    """Whether ``path`` is a published folder (its Croissant file, its ``prefdisco/manifest.json`` and ``data/``)."""
    path = Path(path)
    return (
        path.is_dir()
        and (path / CROISSANT).is_file()
        and (path / BENCH / MANIFEST_FILE).is_file()
        and (path / DATA).is_dir()
    )
