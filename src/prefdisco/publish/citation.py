"""``CITATION.cff``: the benchmark as a dataset (Citation File Format 1.2.0), named by its content hash, citing the
paper whose method it implements, the PrefDisco version that built it and each source benchmark."""

from __future__ import annotations

from typing import Any

import yaml  # type: ignore[import-untyped]

from prefdisco.publish.publication import Publication

PAPER: dict[str, Any] = {
    "type": "article",
    "title": "Personalized Reasoning: Just-in-time Personalization and Why LLMs Fail at It",
    "authors": [
        {"family-names": family, "given-names": given}
        for family, given in (
            ("Li", "Shuyue Stella"),
            ("Bose", "Avinandan"),
            ("Brahman", "Faeze"),
            ("Du", "Simon Shaolei"),
            ("Koh", "Pang Wei"),
            ("Fazel", "Maryam"),
            ("Tsvetkov", "Yulia"),
        )
    ],
    "year": 2025,
    "identifiers": [{"type": "other", "value": "arXiv:2510.00177", "description": "The paper on arXiv"}],
    "url": "https://arxiv.org/abs/2510.00177",
}
"""The paper, as the project's own CITATION.cff cites it."""

UNNAMED_AUTHOR = "The builders of this benchmark"
"""The author when ``--author`` names none (CFF needs one)."""


def citation(pub: Publication) -> dict[str, Any]:
    info = pub.info
    references: list[dict[str, Any]] = [
        PAPER,
        {
            "type": "software",
            "title": "PrefDisco",
            "authors": [{"name": "The PrefDisco maintainers"}],
            "version": info.package_version or pub.pin.version,
        },
    ]
    for s in pub.sources:
        entry: dict[str, Any] = {"type": "dataset", "title": s.benchmark, "authors": [{"name": "its authors"}]}
        if s.hub_id:
            entry["url"] = f"https://huggingface.co/datasets/{s.hub_id}"
        if " " not in s.license:
            entry["license"] = s.license
        references.append(entry)
    data: dict[str, Any] = {
        "cff-version": "1.2.0",
        "message": f"If you use this benchmark, cite it by its content hash ({info.content_hash}) and the paper.",
        "type": "dataset",
        "title": pub.title,
        "abstract": (
            "A PrefDisco personalization benchmark: problems paired with simulated people whose sparse weighted "
            "preferences a model must discover by asking."
        ),
        "authors": [{"name": name} for name in (pub.authors or [UNNAMED_AUTHOR])],
        "version": info.content_hash,
        "identifiers": [
            {"type": "other", "value": info.content_hash, "description": "The build's content hash (sha256)"}
        ],
        "license": pub.license,
        "keywords": ["personalization", "preference elicitation", "benchmark", "PrefDisco"],
        "references": references,
    }
    if info.date:
        data["date-released"] = info.date
    return data


def citation_text(pub: Publication) -> str:
    head = "# How to cite this benchmark (Citation File Format 1.2.0): the exact build, by its content hash.\n"
    return head + yaml.safe_dump(citation(pub), sort_keys=False, allow_unicode=True, width=1000)
