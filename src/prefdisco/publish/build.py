"""What a benchmark's manifest says of how it was made, read once for the card, the Croissant file and the citation.

A build's manifest (``prefdisco build``) has its settings (``config``), the builder models, the seeds and the counts
kept and rejected (``build_counts``, ``failures``, ``skipped``, ``duplicates``); an imported release's has its source
file (``source``) and the paper's generator models; anything else has only the counts every benchmark folder has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SETTINGS = (
    ("benchmark", "source benchmark"),
    ("split", "split"),
    ("problems", "problems sampled"),
    ("personas_per_problem", "personas per problem"),
    ("session_length", "session length"),
    ("library_size", "persona library size"),
    ("seed", "seed"),
    ("temperature", "temperature"),
    ("retries", "re-asks after an invalid reply"),
    ("max_share", "largest share of one persona bucket"),
    ("facets", "facet scores"),
)
"""The build settings the card shows, with their labels (from the manifest's ``config``)."""


@dataclass
class BuildInfo:
    content_hash: str
    kind: str  # build | prefq-bench import | benchmark folder
    created: str  # the manifest's created_at (an ISO time), or ""
    package_version: str
    models: list[str]
    settings: list[tuple[str, str]] = field(default_factory=list)  # (label, value)
    counts: dict[str, int] = field(default_factory=dict)  # scenarios, problems, personas, attributes
    planned: int | None = None
    rejected: list[tuple[str, int]] = field(default_factory=list)  # (reason, how many)
    library: int | None = None

    @property
    def short_hash(self) -> str:
        return self.content_hash.removeprefix("sha256:")[:12]

    @property
    def date(self) -> str:
        return self.created[:10]


def _models(manifest: dict[str, Any]) -> list[str]:
    models = manifest.get("models")
    if isinstance(models, dict):
        models = [m for value in models.values() for m in (value if isinstance(value, list) else [value])]
    return [str(m) for m in models] if isinstance(models, list) else []


def _rejected(manifest: dict[str, Any]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    failures = manifest.get("failures")
    if isinstance(failures, dict):
        for step, n in sorted((failures.get("by_step") or {}).items()):
            out.append((f"invalid model replies at the {step} step", int(n)))
    for reason, n in sorted((manifest.get("skipped") or {}).items()):
        out.append((f"skipped: {reason.replace('_', ' ')}", int(n)))
    source = manifest.get("source")
    if isinstance(source, dict) and source.get("skipped_lines"):
        out.append(("release lines nothing could score", len(source["skipped_lines"])))
    return [(reason, n) for reason, n in out if n]


def build_info(manifest: dict[str, Any]) -> BuildInfo:
    raw_config, raw_counts = manifest.get("config"), manifest.get("build_counts")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    source = manifest.get("source")
    kind = "build" if "build_counts" in manifest else "benchmark folder"
    if isinstance(source, dict) and source.get("kind") == "prefq-bench":
        kind = "prefq-bench import"
    counts: dict[str, Any] = raw_counts if isinstance(raw_counts, dict) else {}
    settings = [(label, str(config[key])) for key, label in SETTINGS if config.get(key) not in (None, "", {})]
    if isinstance(config.get("profile"), dict):
        profile = config["profile"]
        settings.append(("attributes per profile", f"{profile.get('min_attributes')}–{profile.get('max_attributes')}"))
    if isinstance(config.get("relevance"), dict):
        rel = config["relevance"]
        settings.append(("relevant attributes F(i)", f"{rel.get('min_relevant')}–{rel.get('max_relevant')}"))
    return BuildInfo(
        content_hash=str(manifest["content_hash"]),
        kind=kind,
        created=str(manifest.get("created_at") or ""),
        package_version=str(manifest.get("package_version") or ""),
        models=_models(manifest),
        settings=settings,
        counts={k: int(v) for k, v in (manifest.get("counts") or {}).items()},
        planned=counts.get("planned_scenarios"),
        rejected=_rejected(manifest),
        library=counts.get("library_personas"),
    )
