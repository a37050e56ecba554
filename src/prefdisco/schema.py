"""The PrefDisco data model.

Every artefact that crosses a stage boundary (benchmark folder, eval logs, results table) is one of these
pydantic models, and every invariant the method relies on is enforced here, at construction time:

* a preference profile is non-empty, its attribute names are unique, its weights are > 0 and sum to 1 (an
  attribute of weight 0 adds nothing to PrefAlign = Σ w·g, yet would be judged and paid for);
* a rubric criterion describes every score level 1..5;
* a scenario has exactly one rubric criterion per profile attribute (and no other);
* a multiple-choice problem's gold answer is one of its option letters.

Invalid data raises ``pydantic.ValidationError`` (a ``ValueError``) naming the field and what was expected.
"""

from __future__ import annotations

import hashlib
import math
import string
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from prefdisco.answer_spec import AnswerSpec, AnswerType, LetterAnswer, answer_spec

WEIGHT_TOLERANCE = 1e-6
"""Profile weights must sum to 1 within this tolerance (use ``PreferenceProfile.normalized`` to fix drift)."""

SCORE_LEVELS = (1, 2, 3, 4, 5)

NonEmptyStr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=True)


# ---------------------------------------------------------------------------------------------------------
# Problems
# ---------------------------------------------------------------------------------------------------------


def option_letters(n: int) -> list[str]:
    if n > len(string.ascii_uppercase):
        raise ValueError(f"at most 26 options are supported, got {n}")
    return list(string.ascii_uppercase[:n])


class Problem(_Model):
    """One item of a static benchmark, normalized. ``answer_spec`` is what counts as correct (``answer_spec.py``):
    read from the gold (answer, answer type, metadata) once, whenever a problem is built or loaded, and never
    written, so the gold text stays its one source. ``model_copy(update=...)`` does not re-read it: build a new
    problem from a dump to change the gold."""

    id: NonEmptyStr
    benchmark: NonEmptyStr
    domain: NonEmptyStr = "general"
    question: NonEmptyStr
    choices: list[str] = Field(default_factory=list, description="option texts in letter order A, B, ...")
    answer: str = Field(description="gold answer as written; an option letter for multiple choice; blank: none")
    answer_type: AnswerType
    answer_spec: AnswerSpec = Field(  # type: ignore[assignment]  # _read_spec fills it before validation
        default=None, exclude=True, description="read from the gold on every load; never written (one source)"
    )
    solution: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _read_spec(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("answer_spec") is None and "answer_type" in data:
            answer_type = AnswerType(data["answer_type"])
            metadata = data.get("metadata") or {}
            spec = answer_spec(str(data.get("answer", "")), answer_type, metadata, str(data.get("benchmark", "")))
            data = {**data, "answer_spec": spec}
        return data

    @model_validator(mode="after")
    def _check_answer(self) -> Problem:
        if self.answer_type is AnswerType.LETTER:
            if len(self.choices) < 2:
                raise ValueError(f"problem {self.id}: a letter answer needs at least 2 choices")
            letters = option_letters(len(self.choices))
            spec = self.answer_spec
            gold = [self.answer.strip()] if self.answer.strip() else []
            gold += spec.accepted if isinstance(spec, LetterAnswer) else []
            wrong = [g for g in gold if g not in letters]
            if wrong:
                raise ValueError(f"problem {self.id}: answer {wrong[0]!r} is not one of the option letters {letters}")
        return self

    @property
    def letters(self) -> list[str]:
        return option_letters(len(self.choices))

    def prompt_text(self) -> str:
        """The problem as shown to the assistant: the question, then one ``X. text`` line per option."""
        if not self.choices:
            return self.question
        options = "\n".join(f"{letter}. {text}" for letter, text in zip(self.letters, self.choices, strict=True))
        return f"{self.question}\n\n{options}"


# ---------------------------------------------------------------------------------------------------------
# Attributes, personas, profiles, rubrics
# ---------------------------------------------------------------------------------------------------------

AttributeCategory = Literal["knowledge", "misconceptions", "cognitive", "affective", "meta-cognitive", "communication"]
ATTRIBUTE_CATEGORIES: tuple[str, ...] = (
    "knowledge",
    "misconceptions",
    "cognitive",
    "affective",
    "meta-cognitive",
    "communication",
)


class Attribute(_Model):
    """A preference dimension of the attribute universe Θ."""

    name: NonEmptyStr
    category: AttributeCategory
    description: NonEmptyStr
    value_space: list[NonEmptyStr] = Field(min_length=2, description="ordered values or scale anchors")
    aliases: list[str] = Field(default_factory=list)


BigFiveTrait = Literal["openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"]
BIG_FIVE: tuple[str, ...] = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
TraitLevel = Literal["low", "medium", "high"]
TRAIT_LEVEL_RANGES: dict[str, tuple[float, float]] = {"low": (1.0, 2.4), "medium": (2.5, 3.5), "high": (3.6, 5.0)}
"""The 1-5 scores of each level, as the persona builder samples them; ``trait_level`` is their inverse."""


def trait_level(score: float) -> TraitLevel:
    """Big Five score 1-5 → level: < 2.5 low, <= 3.5 medium, else high (1-2 / 3 / 4-5 for integers)."""
    if score < 2.5:
        return "low"
    if score <= 3.5:
        return "medium"
    return "high"


def persona_id(name: str, description: str) -> str:
    """A persona's id, as the paper's builder derives it: the last name token lower-cased, ``_``, then
    ``md5("<name>_<description>")[:8]``. Imported and built personas alike."""
    digest = hashlib.md5(f"{name}_{description}".encode()).hexdigest()[:8]
    return f"{name.split()[-1].lower()}_{digest}"


class TraitScore(_Model):
    level: TraitLevel
    score: float = Field(ge=1, le=5, description="1-5 scale, as in IPIP-NEO scoring")
    facets: dict[str, float] = Field(default_factory=dict, description="optional facet scores, 1-5")


class Persona(_Model):
    """A simulated user: Big Five, demographics, education, expertise."""

    id: NonEmptyStr
    name: NonEmptyStr
    age: int = Field(ge=13, le=100)
    occupation: NonEmptyStr
    location: str = ""
    education: str = ""
    summary: NonEmptyStr = Field(description="one or two sentences: who this person is")
    big_five: dict[BigFiveTrait, TraitScore]
    expertise: dict[str, str] = Field(default_factory=dict, description="domain -> level (novice ... expert)")
    backstory: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("big_five")
    @classmethod
    def _all_traits(cls, v: dict[str, TraitScore]) -> dict[str, TraitScore]:
        missing = [t for t in BIG_FIVE if t not in v]
        if missing:
            raise ValueError(f"big_five is missing traits: {', '.join(missing)}")
        return v

    def profile_text(self) -> str:
        """A compact description of the person for the user simulator (not the preferences)."""
        traits = ", ".join(f"{t} {self.big_five[t].level}" for t in BIG_FIVE)  # type: ignore[index]
        lines = [
            f"Name: {self.name}",
            f"Age: {self.age}; occupation: {self.occupation}"
            + (f"; location: {self.location}" if self.location else ""),
        ]
        if self.education:
            lines.append(f"Education: {self.education}")
        lines.append(f"About: {self.summary}")
        lines.append(f"Personality (Big Five): {traits}")
        if self.expertise:
            lines.append("Expertise: " + "; ".join(f"{d}: {lvl}" for d, lvl in self.expertise.items()))
        if self.backstory:
            lines.append(f"Background: {self.backstory}")
        return "\n".join(lines)


class PreferenceItem(_Model):
    """One attribute of a sparse preference profile: what this person wants on this problem, and how much."""

    attribute: NonEmptyStr
    value: NonEmptyStr
    weight: float = Field(ge=0, le=1)
    justification: str = ""
    description: str = Field(default="", description="what the attribute means (copied from Θ)")
    category: AttributeCategory | None = None

    @field_validator("weight")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("weight must be a finite number")
        return v


class PreferenceProfile(_Model):
    """A sparse, weighted profile. Weights are > 0 and sum to 1: an attribute of weight 0 would count for nothing
    in PrefAlign (Σ w·g) and still be judged, every condition, every trial."""

    items: list[PreferenceItem] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> PreferenceProfile:
        names = [i.attribute for i in self.items]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"profile lists attribute(s) more than once: {', '.join(dupes)}")
        problems = []
        total = math.fsum(i.weight for i in self.items)
        if abs(total - 1.0) > WEIGHT_TOLERANCE:
            problems.append(f"profile weights must sum to 1, got {total:.6g}")
        zero = [i.attribute for i in self.items if i.weight == 0]
        if zero:
            problems.append(
                f"profile attribute(s) of weight 0: {', '.join(zero)} (it adds nothing to PrefAlign but is still "
                "judged): give it a weight > 0, or remove it and its rubric criterion"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @classmethod
    def normalized(cls, items: list[PreferenceItem], weights: list[float] | None = None) -> PreferenceProfile:
        """Build a profile whose weights are rescaled to sum to exactly 1.

        ``weights`` gives raw non-negative weights (e.g. importances 1-5) in item order; without it the items'
        own weights are rescaled. The last weight absorbs floating-point drift so the sum is 1 to machine
        precision. Returns new items; the caller's list and items are not modified.
        """
        raw = [i.weight for i in items] if weights is None else [float(w) for w in weights]
        if len(raw) != len(items):
            raise ValueError(f"got {len(raw)} weights for {len(items)} profile items")
        if any(not math.isfinite(w) or w < 0 for w in raw):
            raise ValueError("profile weights must be finite and >= 0")
        total = math.fsum(raw)
        if not items or total <= 0:
            raise ValueError("cannot normalize a profile whose weights sum to 0")
        scaled = [i.model_copy(update={"weight": w / total}) for i, w in zip(items, raw, strict=True)]
        rest = math.fsum(i.weight for i in scaled[:-1])
        scaled[-1] = scaled[-1].model_copy(update={"weight": max(0.0, 1.0 - rest)})
        return cls(items=scaled)

    def weight_of(self, attribute: str) -> float:
        for item in self.items:
            if item.attribute == attribute:
                return item.weight
        raise KeyError(attribute)

    def item(self, attribute: str) -> PreferenceItem:
        for item in self.items:
            if item.attribute == attribute:
                return item
        raise KeyError(attribute)


class RubricCriterion(_Model):
    """How to score one profile attribute, with an anchor for every level 1..5."""

    attribute: NonEmptyStr
    preferred_value: NonEmptyStr
    description: NonEmptyStr = Field(description="what the judge checks for on this problem")
    levels: dict[int, NonEmptyStr]

    @field_validator("levels")
    @classmethod
    def _five_levels(cls, v: dict[int, str]) -> dict[int, str]:
        missing = [lvl for lvl in SCORE_LEVELS if lvl not in v]
        extra = sorted(k for k in v if k not in SCORE_LEVELS)
        if missing:
            raise ValueError(f"rubric levels must describe every score 1..5; missing {missing}")
        if extra:
            raise ValueError(f"rubric levels must be 1..5; unexpected {extra}")
        return dict(sorted(v.items()))


class Scenario(_Model):
    """A (problem, persona) pair with its sparse profile and rubric: one unit of evaluation."""

    id: NonEmptyStr
    problem: Problem
    persona: Persona
    profile: PreferenceProfile
    rubric: list[RubricCriterion] = Field(min_length=1)
    relevant_attributes: list[str] = Field(
        default_factory=list, description="F(i): the attributes the builder judged relevant to this problem"
    )
    provenance: dict[str, Any] = Field(
        default_factory=dict, description="which builder model wrote which part, seeds, source"
    )

    @model_validator(mode="after")
    def _rubric_matches_profile(self) -> Scenario:
        profile = [i.attribute for i in self.profile.items]
        rubric = [c.attribute for c in self.rubric]
        if len(set(rubric)) != len(rubric):
            raise ValueError(f"scenario {self.id}: rubric has more than one criterion for an attribute")
        missing = [a for a in profile if a not in rubric]
        unknown = [a for a in rubric if a not in profile]
        problems = [f"rubric has no criterion for profile attribute(s) {missing}"] if missing else []
        problems += [f"rubric criterion for attribute(s) {unknown} not in profile"] if unknown else []
        if problems:
            raise ValueError(f"scenario {self.id}: {'; '.join(problems)}")
        return self

    def criterion(self, attribute: str) -> RubricCriterion:
        for c in self.rubric:
            if c.attribute == attribute:
                return c
        raise KeyError(attribute)


# ---------------------------------------------------------------------------------------------------------
# Dialogue and results
# ---------------------------------------------------------------------------------------------------------


# the conditions (``modes.py``), re-exported: every stage names them from here
from prefdisco.modes import CONDITIONS as CONDITIONS  # noqa: E402
from prefdisco.modes import CONTROLS as CONTROLS  # noqa: E402
from prefdisco.modes import MODES as MODES  # noqa: E402
from prefdisco.modes import PROBES as PROBES  # noqa: E402
from prefdisco.modes import SESSION_ARMS as SESSION_ARMS  # noqa: E402
from prefdisco.modes import Mode as Mode  # noqa: E402

UserMapping = Literal["attributes", "none", "vague", "invalid"]
"""How a targeted simulated user read a question (``dialogue/targeted.py``)."""


class FlaggedReply(_Model):
    """A user reply the hygiene checks flagged (``dialogue/hygiene.py``), kept as drawn, with its reasons."""

    content: str
    flags: list[str]


class DialogueTurn(_Model):
    """One message of a discovery dialogue, as the protocol parsed it.

    Reply turns of a user that knows what it revealed (``--user-type targeted``) also carry ``revealed`` (the
    profile attributes it was shown and answered about; [] when none) and ``mapping`` (how its question was read:
    ``attributes``, ``none``, ``vague``, or ``invalid`` when the mapping call failed, which is answered as vague).
    Both are None for other users and other turns.

    Reply turns of a screened dialogue carry ``flags``: the hygiene faults of the reply kept ([] when clean; None
    for other turns and dialogues recorded before the checks), and ``redrawn``: the flagged replies drawn before it
    and redrawn (``--user-retry``), oldest first."""

    role: Literal["assistant", "user"]
    kind: Literal["question", "answer", "reply"]
    content: str
    revealed: list[str] | None = None
    mapping: UserMapping | None = None
    flags: list[str] | None = None
    redrawn: list[FlaggedReply] = Field(default_factory=list)


class AttributeJudgement(_Model):
    """The judge's verdict on one rubric criterion. ``score`` is None when the judgement was invalid."""

    attribute: NonEmptyStr
    weight: float = Field(ge=0, le=1)
    score: float | None = Field(default=None, ge=1, le=5)
    valid: bool
    attempts: int = Field(default=1, ge=1)
    rationale: str = ""
    error: str | None = None
    judge_call: int | None = Field(default=None, ge=1)
    """The structured judge's call that scored it (1-based within its judging; ``scoring/criterion_order.py``);
    None for a per-criterion judgement or a panel's combined one."""
    judge_position: int | None = Field(default=None, ge=1)
    """Its position (1-based) in that call's shuffled list of criteria; None as ``judge_call``."""

    @model_validator(mode="after")
    def _valid_iff_score(self) -> AttributeJudgement:
        if self.valid != (self.score is not None):
            raise ValueError("a judgement is valid exactly when it has a score")
        return self
