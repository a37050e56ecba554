"""``BuildConfig``: everything ``prefdisco build`` and ``prefdisco personas`` need, recorded in the manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from prefdisco.builder.profiles import ProfileConfig
from prefdisco.builder.relevance import RelevanceConfig
from prefdisco.builder.semantic_dedup import SemanticDedupConfig

DEFAULT_LIBRARY_SIZE = 100
"""The largest library a build generates by default (the paper's); fewer when the build needs fewer."""


class BuildConfig(BaseModel):
    """Everything ``prefdisco build`` needs; recorded in the manifest."""

    benchmark: str
    source: str | None = None
    split: str | None = None
    mapping: str | None = Field(default=None, description="field mapping for --benchmark generic")
    problems: int | None = Field(default=100, ge=1)
    personas_per_problem: int = Field(default=10, ge=1)
    session_length: int | None = Field(
        default=None,
        ge=1,
        description="--session-length K: every chosen persona gets at least K problems, its profiles a stable core "
        "(builder/sessions.py); None: personas chosen per problem on their own",
    )
    persona_library: Path | None = None
    library_size: int | None = Field(
        default=None,
        ge=1,
        description="personas to generate when no library is given; None: what the build needs "
        "(problems × personas per problem, divided by --session-length when given, at most 100, at least the "
        "personas per problem)",
    )
    models: list[str] = Field(default_factory=list)
    model_args: dict[str, Any] = Field(default_factory=dict, description="provider args (-M) for every model")
    seed: int = 0
    temperature: float = Field(default=0.7, ge=0)
    retries: int = Field(default=2, ge=0)
    max_connections: int = Field(default=8, ge=1)
    max_retries: int | None = Field(default=None, ge=0, description="inspect's retries of a failed request")
    timeout: int | None = Field(default=None, ge=1, description="seconds for a request, its retries included")
    attempt_timeout: int | None = Field(default=None, ge=1, description="seconds for one attempt")
    catalogue: Path | None = None
    ipip: Path | None = None
    facets: bool = False
    max_share: float = Field(default=0.05, gt=0, le=1)
    max_marginal_share: float | None = Field(default=2.0, gt=0)
    persona_batch: int = Field(default=8, ge=1)
    relevance: RelevanceConfig = Field(default_factory=RelevanceConfig)
    profile: ProfileConfig = Field(default_factory=ProfileConfig)
    semantic_dedup: SemanticDedupConfig = Field(default_factory=SemanticDedupConfig)
    min_yield: float = Field(
        default=0.5, ge=0, le=1, description="least share of the planned scenarios a build must keep (else exit 1)"
    )
    out: Path

    @model_validator(mode="after")
    def _library_size(self) -> BuildConfig:
        """Fill the default library size in, so the manifest records the number the build generated."""
        if self.library_size is None:
            needed = DEFAULT_LIBRARY_SIZE if self.problems is None else self.problems * self.personas_per_problem
            if self.session_length is not None:  # a session build uses no more personas than this
                needed //= self.session_length
            self.library_size = max(self.personas_per_problem, min(DEFAULT_LIBRARY_SIZE, needed))
        return self

    @property
    def library_n(self) -> int:
        """How many personas the library gets (``library_size``, filled in by validation)."""
        assert self.library_size is not None
        return self.library_size

    @model_validator(mode="after")
    def _consistent(self) -> BuildConfig:
        if self.relevance.min_relevant < self.profile.min_attributes:
            raise ValueError(
                f"min_relevant ({self.relevance.min_relevant}) must be at least min_attributes "
                f"({self.profile.min_attributes})"
            )
        if self.benchmark == "generic" and (not self.source or not self.mapping):
            raise ValueError("--benchmark generic needs --source PATH and --map question=...,answer=...")
        return self
