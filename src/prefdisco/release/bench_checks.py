"""Validation of our own format: a benchmark folder or a bare ``scenarios.jsonl``, every problem with its line.

Every line is built into its model (:class:`Scenario`, :class:`Persona`, :class:`Attribute`) and pydantic's
own errors are reported (:func:`prefdisco.errors.validation_messages`): the invariants of
:mod:`prefdisco.schema` (weights summing to 1, five rubric levels, one criterion per profile attribute, ...)
are checked there and nowhere else. On top of that, what no single model can see: JSON syntax, duplicate ids,
a scenario persona absent from ``personas.jsonl``, the manifest's format and content hash, missing files; text
that is no text (a rubric level ``") }, {"``, two levels alike, a persona field of punctuation: an error,
``builder/degenerate.py``); and a warning for an attribute name that is not words (``Moloch 253.506``, from a
small model: ``catalogue.not_words``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from prefdisco.benchio import (
    ATTRIBUTES_FILE,
    FORMAT_VERSION,
    HASHED_FILES,
    MANIFEST_FILE,
    PERSONAS_FILE,
    SCENARIOS_FILE,
    content_hash,
    json_error,
)
from prefdisco.builder.catalogue import not_words
from prefdisco.builder.degenerate import level_problems, no_text, persona_problems
from prefdisco.errors import validation_messages
from prefdisco.release.report import Issue, ValidationReport, read_lines
from prefdisco.schema import Attribute, Persona, Scenario


def no_text_problems(record: Scenario | Persona) -> list[str]:
    """What of a valid scenario or persona is no text (``builder/degenerate.py``): rubric levels, criteria, persona
    fields; one line each."""
    persona = record.persona if isinstance(record, Scenario) else record
    out = [f"persona {m}" for m in persona_problems(persona.model_dump())]
    for c in record.rubric if isinstance(record, Scenario) else []:
        why = no_text(c.description)
        found = [f"description {c.description!r}: {why}"] if why else []
        out += [f"rubric criterion {c.attribute!r}: {m}" for m in [*found, *level_problems(c.levels)]]
    return out


def _model_lines(
    path: Path, issues: list[Issue], model: type[Scenario] | type[Persona]
) -> tuple[int, dict[str, int], list[tuple[int, Any]]]:
    """Validate a JSONL file of ``model`` (and that its text is text); returns (records, id → first line, parsed
    lines)."""
    lines = read_lines(path, issues)
    ids: dict[str, int] = {}
    for lineno, d in lines:
        if not isinstance(d, dict):
            issues.append(Issue(path, lineno, f"expected a JSON object, got {type(d).__name__}"))
        else:
            try:
                record = model.model_validate(d)
            except ValidationError as e:
                issues.extend(Issue(path, lineno, m) for m in validation_messages(e))
            else:
                issues.extend(Issue(path, lineno, m) for m in no_text_problems(record))
        rid = d.get("id") if isinstance(d, dict) else None
        if isinstance(rid, str):
            if rid in ids:
                issues.append(Issue(path, lineno, f"duplicate id {rid!r} (first on line {ids[rid]})"))
            else:
                ids[rid] = lineno
    return len(lines), ids, lines


def _array_entry_lines(text: str) -> list[int]:
    """Line number where each top-level entry of a (valid) JSON array starts."""
    dec = json.JSONDecoder()
    lines: list[int] = []
    i = 0

    def skip_ws(j: int) -> int:
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        return j

    i = skip_ws(i)
    if i >= len(text) or text[i] != "[":
        return lines
    i = skip_ws(i + 1)
    if i < len(text) and text[i] == "]":
        return lines
    while i < len(text):
        lines.append(text.count("\n", 0, i) + 1)
        _, end = dec.raw_decode(text, i)
        i = skip_ws(end)
        if i < len(text) and text[i] == ",":
            i = skip_ws(i + 1)
            continue
        break
    return lines


def _attribute_issues(path: Path, issues: list[Issue]) -> int:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except json.JSONDecodeError as e:
        issues.append(Issue(path, e.lineno, f"invalid JSON: {json_error(e)}"))
        return 0
    except (OSError, UnicodeDecodeError) as e:
        issues.append(Issue(path, 1, f"cannot read file ({e})"))
        return 0
    if not isinstance(data, list):
        issues.append(Issue(path, 1, "expected a JSON list of attributes"))
        return 0
    lines = _array_entry_lines(text)
    names: dict[str, int] = {}
    for index, entry in enumerate(data):
        lineno = lines[index] if index < len(lines) else 1
        try:
            attr = Attribute.model_validate(entry)
        except ValidationError as e:
            issues.extend(Issue(path, lineno, f"entry {index}: {m}") for m in validation_messages(e))
            continue
        if attr.name in names:
            issues.append(
                Issue(path, lineno, f"duplicate attribute name {attr.name!r} (first on line {names[attr.name]})")
            )
        else:
            names[attr.name] = lineno
        why = not_words(attr.name)
        if why:
            issues.append(Issue(path, lineno, f"entry {index}: {_not_words_text(attr.name, why)}", "warning"))
    return len(data)


def _not_words_text(name: str, why: str) -> str:
    return f"attribute name {name!r} is not words ({why}); rename it or drop the attribute"


def _profile_name_issues(path: Path, lines: list[tuple[int, Any]], issues: list[Issue]) -> None:
    """A warning on the first line naming each profile attribute that is not words (``catalogue.not_words``)."""
    seen: set[str] = set()
    for lineno, d in lines:
        profile = d.get("profile") if isinstance(d, dict) else None
        items = profile.get("items") if isinstance(profile, dict) else None
        for item in items if isinstance(items, list) else []:
            name = item.get("attribute") if isinstance(item, dict) else None
            if isinstance(name, str) and name not in seen:
                seen.add(name)
                why = not_words(name)
                if why:
                    issues.append(Issue(path, lineno, _not_words_text(name, why), "warning"))


def _line_of(text: str, needle: str) -> int:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return lineno
    return 1


def validate_bench(directory: Path) -> ValidationReport:
    """Every problem of a benchmark folder (manifest, scenarios, personas, attributes)."""
    report = ValidationReport(directory, "bench")
    issues = report.issues
    manifest_path = directory / MANIFEST_FILE
    manifest_text = manifest_path.read_text(encoding="utf-8")
    manifest: Any = None
    try:
        manifest = json.loads(manifest_text)
    except json.JSONDecodeError as e:
        issues.append(Issue(manifest_path, e.lineno, f"invalid JSON: {json_error(e)}"))
    if manifest is not None and not isinstance(manifest, dict):
        issues.append(Issue(manifest_path, 1, "expected a JSON object"))
        manifest = None
    present = [name for name in HASHED_FILES if (directory / name).is_file()]
    for name in HASHED_FILES:
        if name not in present:
            issues.append(Issue(directory / name, 1, "missing file"))
    if isinstance(manifest, dict):
        if manifest.get("format") != FORMAT_VERSION:
            issues.append(
                Issue(
                    manifest_path,
                    _line_of(manifest_text, '"format"'),
                    f"format is {manifest.get('format')!r}, expected {FORMAT_VERSION!r}",
                )
            )
        if len(present) == len(HASHED_FILES):
            actual = content_hash({n: (directory / n).read_bytes() for n in HASHED_FILES})
            if manifest.get("content_hash") != actual:
                issues.append(
                    Issue(
                        manifest_path,
                        _line_of(manifest_text, '"content_hash"'),
                        f"content_hash {manifest.get('content_hash')!r} does not match the files ({actual}); "
                        "changed on purpose: --reseal",
                    )
                )
    persona_ids: dict[str, int] = {}
    if PERSONAS_FILE in present:
        _, persona_ids, _ = _model_lines(directory / PERSONAS_FILE, issues, Persona)
    if ATTRIBUTES_FILE in present:
        _attribute_issues(directory / ATTRIBUTES_FILE, issues)
    if SCENARIOS_FILE in present:
        path = directory / SCENARIOS_FILE
        report.records, _, lines = _model_lines(path, issues, Scenario)
        if PERSONAS_FILE in present:
            for lineno, d in lines:
                persona = d.get("persona") if isinstance(d, dict) else None
                pid = persona.get("id") if isinstance(persona, dict) else None
                if isinstance(pid, str) and pid not in persona_ids:
                    issues.append(Issue(path, lineno, f"persona id {pid!r} is not in {PERSONAS_FILE}"))
    return report


def validate_scenarios_file(path: Path) -> ValidationReport:
    """Every problem of a bare ``scenarios.jsonl``."""
    report = ValidationReport(path, "scenarios")
    report.records, _, lines = _model_lines(path, report.issues, Scenario)
    _profile_name_issues(path, lines, report.issues)
    if report.records == 0 and not report.issues:
        report.issues.append(Issue(path, 1, "no scenarios in the file"))
    return report
