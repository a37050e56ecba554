"""``README.md``: the dataset card, a YAML header the Hub reads and a body written from the manifest.

The header names the licences (the build's own, then each source benchmark's known one), the task and size
categories, the pretty name, the tags, and one ``configs`` entry per config with its ``data_files`` per split
(``all`` the default), so ``datasets.load_dataset(REPO, CONFIG, split=...)`` reads exactly the files the folder
has. ``prefdisco`` in the header holds the build's content hash and where its files are. The body says how the
benchmark was built (models, settings, seed, counts kept and rejected), its content hash, how to evaluate it, the
fields, the licences, the known limitations and how to cite it.
"""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

from prefdisco.benchio import MANIFEST_FILE
from prefdisco.publish.layout import BENCH, CITATION, CROISSANT, EVAL_YAML, bench_file
from prefdisco.publish.publication import Publication
from prefdisco.publish.sources import ALL

TAGS = ("personalization", "preference-elicitation", "clarifying-questions", "synthetic", "prefdisco", "inspect-ai")
TASK_CATEGORIES = ("question-answering", "text-generation")


def header(pub: Publication) -> dict[str, Any]:
    """The card's YAML header as data."""
    configs = []
    for table in pub.tables:
        entry: dict[str, Any] = {"config_name": table.config.name}
        if table.config.name == ALL:
            entry["default"] = True
        entry["data_files"] = [{"split": split, "path": paths} for split, paths in table.files.items()]
        configs.append(entry)
    return {
        "pretty_name": pub.title,
        "license": pub.licenses(),
        "language": ["en"],
        "task_categories": list(TASK_CATEGORIES),
        "size_categories": [pub.size_category],
        "tags": list(TAGS),
        "configs": configs,
        "prefdisco": {
            "content_hash": pub.info.content_hash,
            "format": "prefdisco-bench/1",
            "package_version": pub.info.package_version,
            "manifest": bench_file(MANIFEST_FILE),
        },
    }


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


def _build_section(pub: Publication) -> list[str]:
    info = pub.info
    lines = ["## How it was built", ""]
    made = {"build": "built with `prefdisco build`", "prefq-bench import": "imported from the paper's release"}
    lines.append(f"This benchmark was {made.get(info.kind, 'written as a PrefDisco benchmark folder')}")
    lines[-1] += f" (PrefDisco {info.package_version})" if info.package_version else ""
    lines[-1] += f" on {info.date}." if info.date else "."
    if info.models:
        lines += ["", "Models that wrote personas, profiles and rubrics: " + ", ".join(f"`{m}`" for m in info.models)]
    if info.settings:
        lines += ["", "| setting | value |", "|---|---|"]
        lines += [f"| {label} | {value} |" for label, value in info.settings]
    counts = info.counts
    kept = ", ".join(f"{n} {what}" for what, n in counts.items())
    lines += ["", f"Kept: {kept}." if kept else "Kept: see the manifest."]
    if info.planned is not None:
        lines.append(f"Planned: {info.planned} scenarios.")
    if info.rejected:
        lines += ["", "Rejected or skipped:", ""] + [f"- {reason}: {n}" for reason, n in info.rejected]
    lines += [
        "",
        f"The build's manifest, persona library and attribute catalogue are in `{BENCH}/` as the build wrote them.",
    ]
    return lines


def _data_section(pub: Publication) -> list[str]:
    lines = ["## Configs and fields", "", "| config | split | scenarios | files |", "|---|---|---|---|"]
    for table in pub.tables:
        for split, paths in table.files.items():
            files = ", ".join(f"`{p}`" for p in paths)
            lines.append(f"| {table.config.name} | {split} | {len(table.config.splits[split])} | {files} |")
    lines += [
        "",
        "Each row is one scenario: `id`; `problem` (question, choices, gold `answer`, `answer_type`, `solution`, "
        "`metadata`); `persona` (who the simulated person is, with `big_five` and `expertise`); `profile.items` "
        "(the weighted preferences); `rubric` (one 1–5 criterion per profile attribute, `levels` keyed `1`…`5`); "
        "`relevant_attributes`; `provenance`; and `line`, the scenario's line in the build's `scenarios.jsonl`. "
        "Mappings whose keys are data are lists of key/value structs (`expertise`: `[{domain, level}]`, a trait's "
        "`facets`: `[{facet, score}]`).",
    ]
    for table in pub.tables:
        if table.json_fields:
            fields = ", ".join(f"`{f}`" for f in table.json_fields)
            lines += ["", f"In `{table.config.name}`, {fields} hold JSON text (their values have no one Arrow type)."]
    return lines


def _use_section(pub: Publication) -> list[str]:
    return [
        "## How to use it",
        "",
        "```python",
        "from datasets import load_dataset",
        f'rows = load_dataset("REPO", "{ALL}", split="{next(iter(pub.tables[0].files))}")',
        "```",
        "",
        "Evaluate it with PrefDisco (from a local copy of this folder, e.g. `huggingface-cli download REPO "
        "--repo-type dataset --local-dir DIR`):",
        "",
        "```bash",
        "prefdisco validate DIR",
        "prefdisco eval DIR --model openai/gpt-4o-mini --log-dir runs/gpt-4o-mini",
        "inspect eval prefdisco/prefdisco -T scenarios=DIR --model openai/gpt-4o-mini",
        "```",
        "",
        f"`{EVAL_YAML}` pins the task file and every file of this folder by sha256; `{CROISSANT}` is its Croissant "
        "1.1 metadata with the responsible-AI fields.",
    ]


def _license_section(pub: Publication) -> list[str]:
    lines = [
        "## Licences",
        "",
        f"The build's own content (personas, profiles, rubrics) is published under `{pub.license}`. Each problem "
        "keeps the licence of its source benchmark:",
        "",
        "| source benchmark | config | Hub id | licence | note |",
        "|---|---|---|---|---|",
    ]
    for s in pub.sources:
        lines.append(f"| {s.benchmark} | {s.config} | {s.hub_id or '—'} | {s.license} | {s.license_note} |")
    return lines


LIMITATIONS = (
    "The personas are simulated: written by language models from seeded blueprints, not by or about real people. "
    "Their preferences, and the rubrics that score them, are what those models wrote, and carry those models' "
    "biases. A score on this benchmark measures how a model personalizes for these simulated people, judged by a "
    "language-model judge; it is not a measure of satisfying real users. The problems keep their sources' licences "
    "and their sources' errors."
)


def card_text(pub: Publication) -> str:
    """The whole ``README.md``."""
    info = pub.info
    body = [
        f"# {pub.title}",
        "",
        "A [PrefDisco](https://arxiv.org/abs/2510.00177) personalization benchmark: each problem is paired with "
        "simulated people whose sparse, weighted preferences a model must discover (by asking) to answer the way "
        "they need.",
        "",
        f"**Content hash:** `{info.content_hash}` (over the build's `scenarios.jsonl`, `personas.jsonl` and "
        "`attributes.json`; `prefdisco validate DIR` checks it from this folder).",
        "",
        *_build_section(pub),
        "",
        *_data_section(pub),
        "",
        *_use_section(pub),
        "",
        *_license_section(pub),
        "",
        "## Known limitations",
        "",
        LIMITATIONS,
        "",
        "## Citation",
        "",
        f"Cite this benchmark by its content hash (`{CITATION}`) and the paper whose method it implements "
        "(arXiv:2510.00177).",
    ]
    return "---\n" + _yaml(header(pub)) + "---\n\n" + "\n".join(body) + "\n"


def read_header(text: str) -> dict[str, Any]:
    """The YAML header of a card; ValueError when there is none or it is no mapping."""
    if not text.startswith("---\n"):
        raise ValueError("no YAML header (the card must start with a line ---)")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("the YAML header has no closing line ---")
    data = yaml.safe_load(text[4:end])
    if not isinstance(data, dict):
        raise ValueError("the YAML header is not a mapping")
    return data
