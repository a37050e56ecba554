"""Semantic dedup of new attributes: the builder's model decides whether a proposal duplicates an attribute.

The lexical pass (:mod:`prefdisco.builder.dedup`) merges spellings and fillers, but "Use of analogies" and
"Preference for analogical explanations" survive it as two attributes. After it, every new attribute it kept
goes through one structured call (:func:`deduplicate`):

* **Order.** Proposals are decided one at a time, sorted by (casefolded name, name), so the same set of
  proposals gives the same decisions whatever the order of the problems that proposed them.
* **Candidates.** A proposal is compared with the attributes of Θ and the new attributes already accepted in
  this build (a proposal merged into another one is never a candidate). The prompt lists at most
  ``max_candidates`` of them, the highest by :func:`candidate_score`, ties in catalogue-then-acceptance order.
* **Reply.** ``{"reason", "duplicate_of"}``, where ``duplicate_of`` is a ``Literal`` of the candidate names
  plus ``"new"``, built at run time; the model writes at temperature 0, through the builder's ``StepRunner``,
  so each decision is checkpointed and a rerun replays it without a call.
* **Effect.** A duplicate is renamed to the chosen attribute wherever F(i) uses it (a build attribute gains
  the proposal's names as aliases); ``"new"`` accepts it as a candidate for the proposals after it. A failed
  decision (invalid after the retries) keeps the proposal as new and is recorded as a failure, never merged.

Every decision (proposed name, canonical name, kind, reason, model, candidates) goes to the manifest.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, ClassVar, Literal

from inspect_ai.model import GenerateConfig
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from prefdisco import prompts
from prefdisco.builder.dedup import name_similarity, normalize_tokens
from prefdisco.builder.pool import StepRunner
from prefdisco.schema import Attribute
from prefdisco.structured import literal, response_schema

STEP = "dedup"
"""The step name (checkpoint, usage, failures), after its prompt template ``build_dedup``."""
NEW = "new"
"""The reply value that keeps a proposal as a new attribute."""
MAX_TOKENS = 256
"""Output budget of one decision: a short reason and one name."""
EXPECTED_OUTPUT_CHARS = 180

DecisionKind = Literal["catalogue", "build", "new", "failed"]


class SemanticDedupConfig(BaseModel):
    """``enabled``: run the pass (``--semantic-dedup/--no-semantic-dedup``); ``max_candidates``: attributes
    listed in one prompt."""

    enabled: bool = True
    max_candidates: int = Field(default=8, ge=1, le=60)


class _ReplyBase(BaseModel):
    model_config = ConfigDict(extra="ignore")
    allowed: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _fold(cls, data: Any) -> Any:
        """Forgive case and spacing in ``duplicate_of``; anything else is left to the Literal to reject."""
        if not isinstance(data, dict) or not isinstance(data.get("duplicate_of"), str):
            return data
        by_fold = {a.casefold(): a for a in cls.allowed}
        name = by_fold.get(" ".join(data["duplicate_of"].split()).casefold())
        return {**data, "duplicate_of": name} if name is not None else data


@cache
def reply_schema(names: tuple[str, ...]) -> type[BaseModel]:
    """Reply model: a short ``reason``, then ``duplicate_of``, one of ``names`` or ``"new"``."""
    choice: Any = literal(*names, NEW)
    model = create_model(
        "SemanticDedup",
        __base__=_ReplyBase,
        reason=(str, Field(min_length=1, max_length=300)),
        duplicate_of=(choice, Field(description=f'an existing attribute name, or "{NEW}"')),
    )
    model.allowed = (*names, NEW)
    return model


@dataclass
class Decision:
    """One proposal's outcome, as recorded in the manifest."""

    proposed: str
    canonical: str
    kind: DecisionKind  # catalogue / build: merged into that attribute; new: kept; failed: kept, no valid reply
    reason: str
    model: str
    candidates: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "proposed": self.proposed,
            "canonical": self.canonical,
            "kind": self.kind,
            "reason": self.reason,
            "model": self.model,
            "candidates": list(self.candidates),
        }


@dataclass
class SemanticResult:
    renames: dict[str, str] = field(default_factory=dict)
    """Proposal name -> the attribute it duplicates (merged proposals only)."""
    attributes: list[Attribute] = field(default_factory=list)
    """The new attributes kept, sorted by name, with the names merged into them as aliases."""
    decisions: list[Decision] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        found = Counter(d.kind for d in self.decisions)
        return {kind: found[kind] for kind in ("catalogue", "build", "new", "failed")}


def _forms(attribute: Attribute) -> tuple[str, ...]:
    return (attribute.name, *attribute.aliases)


def _words(attribute: Attribute) -> set[str]:
    return set(normalize_tokens(" ".join((*_forms(attribute), attribute.description))))


def candidate_score(proposal: Attribute, candidate: Attribute, idf: dict[str, float]) -> float:
    """How lexically close ``candidate`` is to ``proposal``, in [0, 2]: the best ``dedup.name_similarity`` over
    the names and aliases of both, plus the idf-weighted Jaccard index of their content words (names, aliases
    and description, normalized as in :mod:`prefdisco.builder.dedup`)."""
    names = max(name_similarity(a, b) for a in _forms(proposal) for b in _forms(candidate))
    mine, theirs = _words(proposal), _words(candidate)
    union = sum(idf.get(w, 0.0) for w in mine | theirs)
    shared = sum(idf.get(w, 0.0) for w in mine & theirs)
    return names + (shared / union if union else 0.0)


def select_candidates(proposal: Attribute, pool: Sequence[Attribute], limit: int) -> list[Attribute]:
    """The ``limit`` attributes of ``pool`` with the highest :func:`candidate_score`, ties in pool order; idf is
    ``log(1 + n / df)`` over the pool and the proposal (n documents)."""
    docs = [_words(a) for a in (*pool, proposal)]
    df = Counter(w for words in docs for w in words)
    idf = {w: math.log(1 + len(docs) / n) for w, n in df.items()}
    listed = [i for i, a in enumerate(pool) if a.name.casefold() != NEW]  # "new" is the reply's own value
    ranked = sorted(listed, key=lambda i: (-candidate_score(proposal, pool[i], idf), i))
    return [pool[i] for i in ranked[:limit]]


def _line(attribute: Attribute) -> str:
    also = f" (also: {', '.join(attribute.aliases)})" if attribute.aliases else ""
    return f"- {attribute.name}{also}: {attribute.description}"


def dedup_prompt(proposal: Attribute, candidates: Sequence[Attribute]) -> str:
    return prompts.render(
        "build_dedup",
        proposal=proposal.name,
        description=proposal.description,
        values=", ".join(proposal.value_space),
        candidates="\n".join(_line(a) for a in candidates),
    )


def _absorb(target: Attribute, proposal: Attribute) -> Attribute:
    aliases = sorted({*target.aliases, *_forms(proposal)} - {target.name})
    return target.model_copy(update={"aliases": aliases})


async def deduplicate(
    runner: StepRunner, proposals: Sequence[Attribute], catalogue: Sequence[Attribute], config: SemanticDedupConfig
) -> SemanticResult:
    """Decide every proposal in turn (see the module docstring); one call each, at temperature 0."""
    # Same checkpoint, usage ledger, failures and progress as ``runner``; only the temperature differs.
    cold = replace(runner, config=runner.config.merge(GenerateConfig(temperature=0.0)))
    result = SemanticResult()
    pool: list[Attribute] = list(catalogue)
    in_catalogue = len(pool)
    order = sorted(proposals, key=lambda a: (a.name.casefold(), a.name))
    runner.progress.start(STEP, len(order))
    for proposal in order:
        candidates = select_candidates(proposal, pool, config.max_candidates)
        names = [a.name for a in candidates]
        outcome = await cold.run(
            STEP, proposal.name, dedup_prompt(proposal, candidates), reply_schema(tuple(names)),
            name=STEP, max_tokens=MAX_TOKENS,
        )  # fmt: skip
        if outcome is None:
            failure = next((f for f in reversed(runner.failures) if (f.step, f.item) == (STEP, proposal.name)), None)
            reason, model = (failure.reason, failure.model) if failure else ("no valid reply", "")
            decision = Decision(proposal.name, proposal.name, "failed", reason, model, names)
        else:
            choice: str = outcome.value.duplicate_of  # type: ignore[attr-defined]
            reason = outcome.value.reason  # type: ignore[attr-defined]
            kind: DecisionKind = "new"
            if choice != NEW:
                index = next(i for i, a in enumerate(pool) if a.name == choice)
                kind = "catalogue" if index < in_catalogue else "build"
                if kind == "build":
                    pool[index] = _absorb(pool[index], proposal)
                result.renames[proposal.name] = choice
            decision = Decision(proposal.name, proposal.name if kind == "new" else choice, kind, reason,
                                outcome.model, names)  # fmt: skip
        if decision.kind in ("new", "failed"):
            pool.append(proposal)
        result.decisions.append(decision)
    result.attributes = sorted(pool[in_catalogue:], key=lambda a: a.name)
    return result


def manifest_section(config: SemanticDedupConfig, result: SemanticResult | None) -> dict[str, Any]:
    """What the manifest records of the pass (``result`` is None when it was switched off)."""
    section: dict[str, Any] = {
        "enabled": config.enabled,
        "max_candidates": config.max_candidates,
        "temperature": 0.0,
        "order": "proposals sorted by (casefolded name, name)",
    }
    if result is not None:
        section["counts"] = result.counts()
        section["decisions"] = [d.as_dict() for d in result.decisions]
    return section


def estimate(
    catalogue: Sequence[Attribute], n_problems: int, max_new: int, config: SemanticDedupConfig
) -> dict[str, Any]:
    """``--dry-run``: an upper bound of the calls (one per new attribute the lexical pass keeps, at most
    ``max_new`` per problem) and their chars/4 tokens, for a typical proposal and ``max_candidates`` candidates."""
    if not config.enabled:
        return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "note": "off (--no-semantic-dedup)"}
    calls = n_problems * max_new
    if calls == 0:
        return {"calls": 0, "input_tokens": 0, "output_tokens": 0, "note": "no new attributes allowed"}
    typical = Attribute(
        name="x" * 32, category=catalogue[0].category, description="x" * 160, value_space=["x" * 12] * 3
    )
    candidates = list(catalogue[: config.max_candidates])
    schema = response_schema(reply_schema(tuple(a.name for a in candidates)))
    chars = len(dedup_prompt(typical, candidates)) + len(schema.json_schema.model_dump_json(exclude_none=True))
    return {
        "calls": calls,
        "input_tokens": math.ceil(chars * calls / 4),
        "output_tokens": math.ceil(EXPECTED_OUTPUT_CHARS * calls / 4),
        "note": f"at most {max_new} per problem: one per new attribute the lexical pass keeps, run one after another",
    }
