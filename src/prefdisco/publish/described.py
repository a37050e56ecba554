"""The checks of the files that describe a published folder's data: the card, the Croissant file, ``eval.yaml``
and ``CITATION.cff``; and :func:`check_published`, every check of a published folder (``prefdisco validate DIR``;
:mod:`prefdisco.publish.checks` checks the data first)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from prefdisco.publish.card import read_header
from prefdisco.publish.checks import Findings, check_data
from prefdisco.publish.croissant import CONFORMS_TO
from prefdisco.publish.layout import CITATION, CROISSANT, DATA, EVAL_YAML, README
from prefdisco.publish.pin import sha256

RAI_FIELDS = (
    "rai:dataCollection",
    "rai:dataUseCases",
    "rai:dataLimitations",
    "rai:dataBiases",
    "rai:personalSensitiveInformation",
)
"""The responsible-AI fields a dataset track asks for; each must be there and not empty."""


def _read(found: Findings, rel: str) -> str | None:
    path = found.folder / rel
    if not path.is_file():
        found.error(rel, "missing")
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        found.error(rel, f"cannot read ({e})")
        return None


def _file_hash(found: Findings, rel: str) -> str | None:
    path = found.folder / rel
    return sha256(path.read_bytes()) if path.is_file() else None


def check_card(found: Findings) -> None:
    text = _read(found, README)
    if text is None:
        return
    try:
        head = read_header(text)
    except (ValueError, yaml.YAMLError) as e:
        found.error(README, f"YAML header: {str(e).splitlines()[0]}")
        return
    expected = found.expected_files()
    named: dict[str, dict[str, list[str]]] = {}
    for entry in head.get("configs") or []:
        if isinstance(entry, dict):
            files = entry.get("data_files") or []
            named[str(entry.get("config_name"))] = {
                str(f.get("split")): list(f.get("path") or []) for f in files if isinstance(f, dict)
            }
    for name in expected:
        if name not in named:
            found.error(README, f"configs: no config {name!r} (the data has it)")
        elif named[name] != expected[name]:
            found.error(README, f"configs: {name}: data_files {named[name]} are not the data's {expected[name]}")
    for name in named:
        if name not in expected:
            found.error(README, f"configs: {name!r} is no config of the data")
    held = (head.get("prefdisco") or {}).get("content_hash") if isinstance(head.get("prefdisco"), dict) else None
    if found.content_hash and (held != found.content_hash or found.content_hash not in text.split("---\n", 2)[-1]):
        found.error(README, f"does not name the build's content hash {found.content_hash} (header and body)")
    if not head.get("license"):
        found.error(README, "YAML header: no license")


def _mlcroissant(found: Findings) -> None:
    """``mlcroissant``'s own validation of the metadata (its errors, one line each), where it is installed."""
    try:
        import mlcroissant
    except ImportError:
        found.warning(CROISSANT, "mlcroissant not installed (the publish extra): checked by PrefDisco's rules only")
        return
    try:
        mlcroissant.Dataset(jsonld=str(found.folder / CROISSANT))
    except mlcroissant.ValidationError as e:
        for line in str(e).splitlines():
            if line.strip().startswith("-"):
                found.error(CROISSANT, f"mlcroissant: {line.strip().lstrip('- ')}")


def check_croissant(found: Findings) -> None:
    text = _read(found, CROISSANT)
    if text is None:
        return
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as e:
        found.error(CROISSANT, f"invalid JSON: {e.msg} at line {e.lineno}")
        return
    if not isinstance(data, dict):
        found.error(CROISSANT, "not a JSON object")
        return
    if data.get("conformsTo") != CONFORMS_TO:
        found.error(CROISSANT, f"conformsTo is {data.get('conformsTo')!r}, expected {CONFORMS_TO!r}")
    for key in RAI_FIELDS:
        if not data.get(key):
            found.error(CROISSANT, f"{key}: missing or empty")
    if found.content_hash and data.get("identifier") != found.content_hash:
        found.error(CROISSANT, f"identifier is {data.get('identifier')!r}, not the content hash {found.content_hash}")
    objects = {d.get("contentUrl"): d for d in data.get("distribution") or [] if d.get("@type") == "cr:FileObject"}
    for rel in sorted(str(p.relative_to(found.folder)) for p in (found.folder / DATA).rglob("*.parquet")):
        if rel not in objects:
            found.error(CROISSANT, f"distribution: no FileObject for {rel}")
        elif "sha256:" + str(objects[rel].get("sha256")) != _file_hash(found, rel):
            found.error(CROISSANT, f"distribution: {rel}: sha256 does not match the file")
    sets = {r.get("@id") for r in data.get("recordSet") or []}
    wanted = {f"{c}/{s}" for c, splits in found.expected_files().items() for s in splits}
    for missing in sorted(wanted - sets):
        found.error(CROISSANT, f"recordSet: no record set {missing!r}")
    _mlcroissant(found)


def _yaml_file(found: Findings, rel: str) -> dict[str, Any] | None:
    text = _read(found, rel)
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        found.error(rel, f"invalid YAML: {str(e).splitlines()[0]}")
        return None
    if not isinstance(data, dict):
        found.error(rel, "not a YAML mapping")
        return None
    return data


def check_eval_yaml(found: Findings) -> None:
    data = _yaml_file(found, EVAL_YAML)
    if data is None:
        return
    if found.content_hash and data.get("content_hash") != found.content_hash:
        found.error(EVAL_YAML, f"content_hash is {data.get('content_hash')!r}, not {found.content_hash}")
    raw = data.get("task_file")
    task_file: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if not (task_file.get("commit") or task_file.get("version")) or not task_file.get("sha256"):
        found.error(EVAL_YAML, "task_file: needs a commit (or version) and a sha256")
    pinned = {str(a.get("path")): a.get("sha256") for a in data.get("assets") or [] if isinstance(a, dict)}
    on_disk = sorted(str(p.relative_to(found.folder)) for p in (found.folder / DATA).rglob("*.parquet"))
    for name in on_disk:
        if name not in pinned:
            found.error(EVAL_YAML, f"assets: {name} is not pinned")
    for name, digest in pinned.items():
        if _file_hash(found, name) != digest:
            found.error(EVAL_YAML, f"assets: {name}: sha256 does not match the file (or it is missing)")
    ids = {t.get("id") for t in data.get("tasks") or [] if isinstance(t, dict)}
    if not ids:
        found.error(EVAL_YAML, "tasks: none")


def check_citation(found: Findings) -> None:
    data = _yaml_file(found, CITATION)
    if data is None:
        return
    if data.get("cff-version") != "1.2.0" or not data.get("authors") or not data.get("title"):
        found.error(CITATION, "not a CFF 1.2.0 citation (cff-version, title and authors)")
    if found.content_hash and found.content_hash != data.get("version"):
        found.error(CITATION, f"version is {data.get('version')!r}, not the content hash {found.content_hash}")


def check_published(folder: Path) -> Findings:
    """Every problem of a published folder: the data's (:func:`check_data`), then, when its scenarios could be
    read, each describing file's in the order a reader meets them."""
    found = check_data(Path(folder))
    if found.scenarios:
        for check in (check_card, check_croissant, check_eval_yaml, check_citation):
            check(found)
    return found
