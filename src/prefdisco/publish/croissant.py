"""``croissant.json``: Croissant 1.1 metadata of a published folder, with the responsible-AI (RAI) fields.

Every Parquet file is a ``cr:FileObject`` with its sha256; every config's split is a ``cr:RecordSet``
(``<config>/<split>``) read from its files (a ``cr:FileSet`` of them), so ``mlcroissant`` generates one record per
row. Its fields are every Parquet column, nested as the Parquet is (:mod:`prefdisco.publish.fields`, which says
what ``mlcroissant`` 1.1.1 reads back and how). The RAI fields say how the data was made (sampled
problems, model-written simulated personas, profiles and rubrics), what it is for, its limitations and biases, and
that it holds no personal information. Nothing in the file depends on when it was written.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from prefdisco.publish.card import LIMITATIONS
from prefdisco.publish.fields import record_fields
from prefdisco.publish.layout import DATA, README
from prefdisco.publish.pin import sha256
from prefdisco.publish.publication import Publication

CONFORMS_TO = "http://mlcommons.org/croissant/1.1"
PARQUET = "application/x-parquet"
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""The JSON-LD context of Croissant 1.1 (``cr``, ``dct``, ``rai``)."""


def _rai(pub: Publication) -> dict[str, Any]:
    models = ", ".join(pub.info.models) or "the models named in prefdisco/manifest.json"
    sources = ", ".join(f"{s.benchmark} ({s.hub_id or 'no Hub id'})" for s in pub.sources)
    return {
        "rai:dataCollection": (
            f"Problems were sampled (seeded) from existing benchmarks: {sources}. For each problem, PrefDisco's "
            f"builder had language models ({models}) write simulated personas from seeded blueprints, choose the "
            "attributes relevant to the problem, write each persona's sparse weighted preference profile over them "
            "and a 1-5 rubric per attribute. Invalid replies were asked again, then dropped and counted in the "
            "manifest. No person was asked or observed."
        ),
        "rai:dataCollectionType": ["Secondary Data Analysis", "Software Collection"],
        "rai:dataAnnotationProtocol": (
            "No human annotation. Preference profiles and rubrics are model-written and checked by rule (weights "
            "sum to 1, every rubric has levels 1-5, no degenerate text)."
        ),
        "rai:machineAnnotationTools": list(pub.info.models) or ["see prefdisco/manifest.json"],
        "rai:dataUseCases": (
            "Evaluating whether language models personalize their reasoning: answering in baseline, discovery (asking "
            "a simulated user up to a budget of questions) and oracle conditions, scored by a rubric judge "
            "(PrefAlign, NormAlign) and by correctness. Not for training models meant to be evaluated on it."
        ),
        "rai:dataLimitations": LIMITATIONS,
        "rai:dataBiases": (
            "The personas' demographics, occupations, traits and preferences are what the builder models wrote from "
            "blueprints, so they carry those models' stereotypes and are not a sample of any population; the "
            "problems carry their source benchmarks' topical and cultural skews (mostly English, US-centred)."
        ),
        "rai:personalSensitiveInformation": (
            "None. Every persona is fictional (model-written); no real person's data is included."
        ),
        "rai:dataSocialImpact": (
            "Meant to measure and improve how models adapt answers to the person asking; a high score is no "
            "evidence of satisfying real users."
        ),
        "rai:dataReleaseMaintenancePlan": (
            f"A published build is fixed: its content hash ({pub.info.content_hash}) names it exactly. A changed "
            "build is a new publication with a new hash."
        ),
    }


def _record_set(config: str, split: str, schema: pa.Schema) -> dict[str, Any]:
    rs_id = f"{config}/{split}"
    return {
        "@type": "cr:RecordSet",
        "@id": rs_id,
        "name": rs_id,
        "description": f"The scenarios of config {config}, split {split}: one record per row.",
        "key": {"@id": f"{rs_id}/id"},
        "field": record_fields(rs_id, schema),
    }


def croissant(pub: Publication) -> dict[str, Any]:
    """The Croissant metadata as a JSON-LD document."""
    distribution: list[dict[str, Any]] = []
    record_sets = []
    for table in pub.tables:
        for split, paths in table.files.items():
            rs_id = f"{table.config.name}/{split}"
            for path in paths:
                distribution.append(
                    {
                        "@type": "cr:FileObject",
                        "@id": path,
                        "name": path,
                        "contentUrl": path,
                        "encodingFormat": PARQUET,
                        "sha256": sha256(pub.data[path]).removeprefix("sha256:"),
                    }
                )
            distribution.append(
                {
                    "@type": "cr:FileSet",
                    "@id": f"{rs_id}/files",
                    "name": f"{rs_id}/files",
                    "encodingFormat": PARQUET,
                    "includes": f"{DATA}/{table.config.name}/{split}-*.parquet",
                }
            )
            record_sets.append(_record_set(table.config.name, split, table.schema))
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": pub.title,
        "description": (
            "A PrefDisco personalization benchmark: problems paired with simulated people whose sparse weighted "
            f"preferences a model must discover. Content hash {pub.info.content_hash}. See {README}."
        ),
        "identifier": pub.info.content_hash,
        "version": "1.0.0",
        "license": pub.licenses(),
        "url": "https://arxiv.org/abs/2510.00177",
        "citeAs": (
            "@misc{prefdisco_benchmark_" + pub.info.short_hash + ", title={" + pub.title + "}, note={PrefDisco "
            "benchmark, content hash " + pub.info.content_hash + "}}"
        ),
        "isLiveDataset": False,
        "keywords": ["personalization", "preference elicitation", "benchmark", "synthetic personas"],
        "inLanguage": "en",
        **({"dateCreated": pub.info.date, "datePublished": pub.info.date} if pub.info.date else {}),
        **_rai(pub),
        "distribution": distribution,
        "recordSet": record_sets,
    }


def croissant_text(pub: Publication) -> str:
    return json.dumps(croissant(pub), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
