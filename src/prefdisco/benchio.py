"""The benchmark folder: the on-disk format every stage reads and writes.

``BENCH_DIR/``

* ``scenarios.jsonl`` — one :class:`Scenario` per line (``model_dump_json``);
* ``personas.jsonl`` — one :class:`Persona` per line (the persona library);
* ``attributes.json`` — the attribute universe Θ used, a JSON list of :class:`Attribute`;
* ``manifest.json`` — ``format`` ("prefdisco-bench/1"), ``package_version``, ``created_at``, ``config``,
  ``seeds``, ``models`` (builder model ids), anything else the writer passes, ``counts`` and
  ``content_hash``.

``content_hash`` is ``"sha256:<hex>"`` over the three data files in the order above; for each file the hash
takes its name, a NUL byte, its byte length in decimal, a NUL byte, then its bytes. Each file is written
atomically (temp file + ``os.replace``) and the manifest last, so a folder whose write was interrupted fails
the hash check instead of being read half-written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prefdisco.atomic import atomic_write
from prefdisco.errors import UserError, describe_validation_error
from prefdisco.schema import Attribute, Persona, Scenario
from prefdisco.version import __version__

FORMAT_VERSION = "prefdisco-bench/1"
SCENARIOS_FILE = "scenarios.jsonl"
PERSONAS_FILE = "personas.jsonl"
ATTRIBUTES_FILE = "attributes.json"
MANIFEST_FILE = "manifest.json"
PUBLISHED_BENCH = "prefdisco"
"""The folder of a published benchmark (``prefdisco publish``) that holds its benchmark folder's own files."""
HASHED_FILES = (SCENARIOS_FILE, PERSONAS_FILE, ATTRIBUTES_FILE)
RESERVED_MANIFEST_KEYS = ("format", "package_version", "counts", "content_hash")

M = TypeVar("M", bound=BaseModel)


class Bench(BaseModel):
    """A benchmark folder in memory."""

    scenarios: list[Scenario]
    personas: list[Persona]
    attributes: list[Attribute]
    manifest: dict[str, Any]


def content_hash(files: dict[str, bytes]) -> str:
    """The manifest's content hash over ``files`` (name → bytes), taken in :data:`HASHED_FILES` order."""
    h = hashlib.sha256()
    for name in HASHED_FILES:
        data = files[name]
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return "sha256:" + h.hexdigest()


def jsonl_bytes(models: list[Scenario] | list[Persona]) -> bytes:
    """``scenarios.jsonl`` / ``personas.jsonl`` as PrefDisco writes them: one compact JSON object a line."""
    return "".join(m.model_dump_json() + "\n" for m in models).encode("utf-8")


def scenarios_hash(scenarios: list[Scenario]) -> str:
    """The content hash of scenarios given without a file (the demo's): ``source_hash`` of the ``scenarios.jsonl``
    they would be written as, so a run of the same scenarios from that file names the same benchmark."""
    return "sha256:" + hashlib.sha256(jsonl_bytes(scenarios)).hexdigest()


def _attributes_bytes(attributes: list[Attribute]) -> bytes:
    data = [a.model_dump(mode="json") for a in attributes]
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _folder_bytes(directory: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for name in HASHED_FILES:
        path = directory / name
        if not path.is_file():
            raise UserError(f"{path}: missing (a benchmark folder needs {', '.join(HASHED_FILES)})")
        out[name] = path.read_bytes()
    return out


def write_bench(
    directory: Path | str,
    scenarios: list[Scenario],
    personas: list[Persona],
    attributes: list[Attribute],
    manifest_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write a benchmark folder (each file atomically, the manifest last). Returns the manifest.

    ``manifest_extra`` holds the writer's ``config``, ``seeds``, ``models`` and anything else worth recording;
    it may not set the reserved keys ``format``, ``package_version``, ``counts`` or ``content_hash``.
    """
    directory = Path(directory)
    extra = dict(manifest_extra or {})
    clash = [k for k in RESERVED_MANIFEST_KEYS if k in extra]
    if clash:
        raise ValueError(f"manifest_extra may not set reserved key(s) {clash}")
    ids = [s.id for s in scenarios]
    dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dupes:
        raise ValueError(f"duplicate scenario id(s): {dupes[:5]}")
    files = {
        SCENARIOS_FILE: jsonl_bytes(scenarios),
        PERSONAS_FILE: jsonl_bytes(personas),
        ATTRIBUTES_FILE: _attributes_bytes(attributes),
    }
    manifest: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "package_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config": {},
        "seeds": {},
        "models": {},
        **extra,
        "counts": {
            "scenarios": len(scenarios),
            "problems": len({(s.problem.benchmark, s.problem.id) for s in scenarios}),
            "personas": len(personas),
            "attributes": len(attributes),
        },
        "content_hash": content_hash(files),
    }
    for name in HASHED_FILES:
        atomic_write(directory / name, files[name])
    text = json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n"
    atomic_write(directory / MANIFEST_FILE, text.encode("utf-8"))
    return manifest


def text_lines(path: Path, errors: str = "strict") -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every non-blank line of a UTF-8 file. Lines are split on newlines only (as
    file iteration does), so a JSON string holding U+2028 or a form feed stays on its line. ``errors`` is the
    decoding's error handler; reading errors (OSError, UnicodeDecodeError) propagate."""
    with path.open(encoding="utf-8", errors=errors, newline="\n") as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                yield lineno, line


def packaged_demo_scenarios() -> list[Scenario]:
    """The demo scenarios packaged with PrefDisco (``prefdisco/data/demo_scenarios.jsonl``; ``prefdisco demo``'s)."""
    text = files("prefdisco").joinpath("data/demo_scenarios.jsonl").read_text(encoding="utf-8")
    return [Scenario.model_validate_json(line) for line in text.split("\n") if line.strip()]


def json_lines(path: Path, errors: str = "strict") -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of every non-blank line; a line that is not JSON gives its
    :class:`json.JSONDecodeError` as the value, so a caller may stop at it or report each."""
    for lineno, line in text_lines(path, errors):
        try:
            yield lineno, json.loads(line.rstrip("\r\n"))  # without its line end, an error's column is on its line
        except json.JSONDecodeError as e:
            yield lineno, e


def json_error(e: json.JSONDecodeError) -> str:
    """json's message and where, ``Expecting ',' delimiter at column 20`` (the line is the caller's to name); a
    message of json's own that ends in "at" (``Unterminated string starting at``) takes the column directly."""
    return f"{e.msg} column {e.colno}" if e.msg.endswith(" at") else f"{e.msg} at column {e.colno}"


def read_jsonl_models(path: Path, model: type[M]) -> list[M]:
    """Parse one model per non-blank line; UserError naming ``path:line`` on the first bad line."""
    out: list[M] = []
    try:
        for lineno, line in text_lines(path):
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as e:
                if any(err.get("type") == "json_invalid" for err in e.errors()):
                    raise UserError(f"{path}:{lineno}: invalid JSON{_where_invalid(line)}") from e
                raise UserError(describe_validation_error(e, f"{path}:{lineno}")) from e
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read ({e})") from e
    return out


def _where_invalid(line: str) -> str:
    """``: <json's message> at column N`` for a line pydantic found not to be JSON (nothing if json reads it)."""
    try:
        json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as e:
        return f": {json_error(e)}"
    return ""


def _check_unique(items: list[Scenario] | list[Persona], path: Path, what: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise UserError(f"{path}: duplicate {what} id {item.id!r}")
        seen.add(item.id)


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise UserError(f"{path}: missing (not a benchmark folder, or its write did not finish)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: invalid JSON: {json_error(e)}") from e
    if not isinstance(manifest, dict):
        raise UserError(f"{path}: expected a JSON object")
    if manifest.get("format") != FORMAT_VERSION:
        raise UserError(f"{path}: format is {manifest.get('format')!r}, expected {FORMAT_VERSION!r}")
    return manifest


def source_hash(path: Path | str) -> str:
    """The content hash of a benchmark as given (what a run's ``protocol.json`` records as ``benchmark``, what a
    policy records as its source's): a benchmark folder's manifest ``content_hash``; for a file (or a folder holding
    only scenarios.jsonl) ``sha256:`` over its bytes; a published folder's, its build's content hash (the same
    benchmark, so its runs compare with the benchmark folder's)."""
    path = Path(path)
    if path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            return str(read_manifest(path)["content_hash"])
        if (path / PUBLISHED_BENCH / MANIFEST_FILE).is_file():
            return str(read_manifest(path / PUBLISHED_BENCH)["content_hash"])
        path = path / SCENARIOS_FILE
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror or e})") from None


def read_bench(directory: Path | str, verify_hash: bool = True) -> Bench:
    """Read and check a benchmark folder (content hash, every line's schema, unique ids)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: not a folder (expected a benchmark folder with {MANIFEST_FILE})")
    manifest = read_manifest(directory)
    files = _folder_bytes(directory)
    if verify_hash:
        actual = content_hash(files)
        if manifest.get("content_hash") != actual:
            raise UserError(
                f"{directory / MANIFEST_FILE}: content_hash {manifest.get('content_hash')!r} does not match "
                f"the files ({actual}); a data file changed after the manifest was written (changed on purpose, "
                f"e.g. a rubric corrected by hand: prefdisco validate {directory} --reseal)"
            )
    scenarios = read_jsonl_models(directory / SCENARIOS_FILE, Scenario)
    personas = read_jsonl_models(directory / PERSONAS_FILE, Persona)
    _check_unique(scenarios, directory / SCENARIOS_FILE, "scenario")
    _check_unique(personas, directory / PERSONAS_FILE, "persona")
    attributes = parse_attributes(files[ATTRIBUTES_FILE].decode("utf-8"), str(directory / ATTRIBUTES_FILE))
    return Bench(scenarios=scenarios, personas=personas, attributes=attributes, manifest=manifest)


def first_json_line(path: Path) -> Any:
    """The parsed first non-blank line of a file (None for an empty file); UserError on bad JSON."""
    try:
        for lineno, value in json_lines(path):
            if isinstance(value, json.JSONDecodeError):
                raise UserError(f"{path}:{lineno}: invalid JSON: {json_error(value)}")
            return value
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte {e.start}); expected a JSONL file") from e
    return None


def check_not_bench_file(path: Path) -> None:
    """Refuse one of a benchmark folder's own files other than its scenarios (its ``manifest.json``, personas,
    attributes) given where scenarios are read, naming the folder to give instead."""
    path = Path(path)
    if path.is_file() and path.name != SCENARIOS_FILE and (path.parent / MANIFEST_FILE).is_file():
        raise UserError(f"{path}: a file of the benchmark folder {path.parent}, not scenarios; give the folder")


def is_release_file(path: Path) -> bool:
    """True when a JSONL file's first line is a prefq-bench line (``type`` metadata/personalized_problem)."""
    first = first_json_line(path)
    return isinstance(first, dict) and first.get("type") in ("metadata", "personalized_problem")


def parse_attributes(text: str, label: str) -> list[Attribute]:
    """A JSON list of :class:`Attribute` with unique names; ``label`` names the source in errors."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{label}:{e.lineno}: invalid JSON: {json_error(e)}") from e
    if not isinstance(data, list):
        raise UserError(f"{label}: expected a JSON list of attributes")
    attributes: list[Attribute] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(data):
        try:
            attribute = Attribute.model_validate(entry)
        except ValidationError as e:
            raise UserError(describe_validation_error(e, f"{label}: entry {index}")) from e
        folded = " ".join(attribute.name.split()).casefold()
        if folded in seen:
            raise UserError(f"{label}: entry {index}: field name: {attribute.name!r} duplicates entry {seen[folded]}")
        seen[folded] = index
        attributes.append(attribute)
    return attributes


def read_scenarios(path: Path | str) -> list[Scenario]:
    """Scenarios from a benchmark folder or a ``scenarios.jsonl`` file (a release file is the release stage's:
    ``prefdisco.release.convert.load_scenarios`` reads all three)."""
    path = Path(path)
    if path.is_dir():
        if (path / MANIFEST_FILE).is_file():
            return read_bench(path).scenarios
        if (path / SCENARIOS_FILE).is_file():
            path = path / SCENARIOS_FILE
        else:
            raise UserError(f"{path}: no {MANIFEST_FILE} or {SCENARIOS_FILE} in this folder")
    if not path.is_file():
        raise UserError(f"{path}: not found (expected a benchmark folder, scenarios.jsonl or a release JSONL)")
    if is_release_file(path):
        raise UserError(f"{path}: a prefq-bench release file; import it with prefdisco import-release first")
    check_not_bench_file(path)
    scenarios = read_jsonl_models(path, Scenario)
    if not scenarios:
        raise UserError(f"{path}: no scenarios")
    _check_unique(scenarios, path, "scenario")
    return scenarios
