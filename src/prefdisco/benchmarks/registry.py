"""The ten supported benchmarks: where each lives and how its rows map to a Problem.

Hub ids, configs and splits are the canonical ones listed in ``shared/data/README.md``. Deliberate differences
from the paper's loaders (``prefdisco_release_format.md`` §5, §7):

* CommonsenseQA uses the **validation** split: its test split has no answer keys (an empty gold answer is a
  ``UserError`` anyway).
* LogiQA's gold index maps to all four letters A-D (the paper's rubric code could not handle D).
* SocialIQA's options ``answerA``-``answerC`` are part of every problem, and ``label`` "1"-"3" maps to A-C.
* SimpleQA's domain is "general knowledge" (the paper called it a "math problem").
* ScienceQA keeps text-only items (rows whose ``image`` is not null are skipped: problems carry no images) and
  prepends a non-empty ``hint`` to the question as context.

Problem ids come from the dataset's own id field where it has one (with a ``-dup<k>`` suffix on repeats, e.g.
MaScQA's duplicated qid), otherwise they are ``<benchmark>-<split>-<row index>`` (0-based, in the source's
order). ScienceQA's ``id`` exists only in the local copy; from the Hub its ids fall back to row indices.

``release_ids`` are the other Hub ids of the same data that the paper's release configs name (§5): its AIME,
MMLU, SimpleQA and MaScQA came from gneubig/aime-1983-2024, lighteval/mmlu, pvduy/simpleqa and
stellalisy/MaScQA. :func:`spec_for_hub_id` finds a benchmark by either kind of id (the release importer reads
a release file's ``dataset`` with it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from prefdisco.benchmarks.mapping import FieldMapping, GoldFormat
from prefdisco.benchmarks.mascqa import build_mascqa
from prefdisco.benchmarks.normalize import Row, RowBuilder, RowRef, build_fields
from prefdisco.errors import UserError
from prefdisco.schema import AnswerType

UNKNOWN_LICENSE = "unknown — check the source"
"""The license of a benchmark whose Hub card names none: said as such, never guessed."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """How to load one benchmark."""

    name: str
    hub_id: str | None  # None: local copies only (MaScQA)
    config: str | None
    split: str
    mapping: FieldMapping
    answer_types: tuple[AnswerType, ...]  # what its problems can have (MaScQA mixes several)
    build: RowBuilder = build_fields
    skip_if_set: str | None = None  # rows whose value in this field is not null are skipped
    id_required: bool = True  # False: a missing id column falls back to row-index ids
    source_hint: str = ""  # said when no source can be used
    source_fields: tuple[str, ...] = field(default=())  # the source's columns (canonical Hub names)
    release_ids: tuple[str, ...] = ()  # other Hub ids of this data, as the paper's release configs name it
    license: str = UNKNOWN_LICENSE  # the Hub card's license id (a published build names it; docs/publish.md)
    license_note: str = ""  # where the license was read, and what else the source says

    @property
    def domain(self) -> str:
        return self.mapping.domain

    @property
    def answer_type(self) -> AnswerType | None:
        """The answer type of every problem, or None when it varies (MaScQA)."""
        return self.answer_types[0] if len(self.answer_types) == 1 else None


def _build_simpleqa(row: Row, mapping: FieldMapping, ref: RowRef) -> dict[str, Any]:
    """Generic fields plus SimpleQA's ``metadata`` string (a Python dict literal) read into topic/urls."""
    fields = build_fields(row, mapping, ref)
    raw = row.get("metadata")
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, dict):
            for key, target in (("topic", "topic"), ("answer_type", "answer_kind"), ("urls", "urls")):
                if key in parsed:
                    fields["metadata"][target] = parsed[key]
    return fields


def _mc(answer: str, choices: str | tuple[str, ...], gold: GoldFormat, **kw: Any) -> dict[str, Any]:
    return {"answer": answer, "choices": choices, "gold": gold, "answer_type": AnswerType.LETTER, **kw}


_LETTER = (AnswerType.LETTER,)

_SPECS = (
    BenchmarkSpec(
        name="math500",
        hub_id="HuggingFaceH4/MATH-500",
        config="default",
        split="test",
        mapping=FieldMapping(
            question="problem",
            answer="answer",
            answer_type=AnswerType.LATEX,
            id="unique_id",
            solution="solution",
            domain="math",
            metadata=("subject", "level"),
        ),
        answer_types=(AnswerType.LATEX,),
        source_fields=("problem", "solution", "answer", "subject", "level", "unique_id"),
        license="mit",
        license_note="the upstream openai/prm800k repository's (the Hub card names none)",
    ),
    BenchmarkSpec(
        name="aime",
        hub_id="di-zhang-fdu/AIME_1983_2024",
        config="default",
        split="train",
        release_ids=("gneubig/aime-1983-2024",),
        mapping=FieldMapping(
            question="Question",
            answer="Answer",
            answer_type=AnswerType.INTEGER,
            id="ID",
            domain="math",
            metadata=("Year", "Problem Number", "Part"),
        ),
        answer_types=(AnswerType.INTEGER,),
        source_fields=("ID", "Year", "Problem Number", "Question", "Answer", "Part"),
        license="mit",
        license_note="the Hub card's; the problems are the MAA's AIME papers (from the AoPS wiki)",
    ),
    BenchmarkSpec(
        name="logiqa",
        hub_id="lucasmccabe/logiqa",
        config="default",
        split="test",
        mapping=FieldMapping(
            question=("context", "query"),
            **_mc("correct_option", "options", GoldFormat.INDEX0),
            domain="logic",
        ),
        answer_types=_LETTER,
        source_fields=("context", "query", "options", "correct_option"),
        license_note="the Hub card names no license",
    ),
    BenchmarkSpec(
        name="mascqa",
        hub_id=None,
        config=None,
        split="test",
        release_ids=("stellalisy/MaScQA",),
        mapping=FieldMapping(
            question="question",
            answer="answer",
            id="qid",
            domain="materials science",
            metadata=("topic", "question_type"),
        ),
        answer_types=(AnswerType.LETTER, AnswerType.NUMERIC_RANGE, AnswerType.FREE_TEXT),
        build=build_mascqa,
        source_hint=(
            "MaScQA has no Hugging Face dataset: pass the path of a local JSONL copy with fields "
            "qid, topic, question_type, question, answer (built from github.com/M3RG-IITD/MaScQA)"
        ),
        source_fields=("qid", "topic", "question_type", "question", "answer"),
        license="cc-by-nc-sa-4.0",
        license_note="no Hub dataset: the LICENSE of the GitHub repository M3RG-IITD/MaScQA (non-commercial)",
    ),
    BenchmarkSpec(
        name="scienceqa",
        hub_id="derek-thomas/ScienceQA",
        config="default",
        split="test",
        mapping=FieldMapping(
            question=("hint", "question"),
            **_mc("answer", "choices", GoldFormat.INDEX0),
            id="id",
            solution="solution",
            domain="science",
            metadata=("lecture", "grade", "subject", "topic", "category", "skill", "task"),
        ),
        answer_types=_LETTER,
        skip_if_set="image",
        id_required=False,
        source_fields=("id", "question", "hint", "choices", "answer", "has_image", "image"),
        license="cc-by-nc-sa-4.0",
        license_note="the original release's (lupantech/ScienceQA; non-commercial); the Hub copy's card: CC BY-SA 4.0",
    ),
    BenchmarkSpec(
        name="medqa",
        hub_id="GBaker/MedQA-USMLE-4-options",
        config="default",
        split="test",
        mapping=FieldMapping(
            question="question",
            **_mc("answer_idx", "options", GoldFormat.LETTER),
            domain="medicine",
            metadata=("meta_info",),
        ),
        answer_types=_LETTER,
        source_fields=("question", "answer", "options", "meta_info", "answer_idx", "metamap_phrases"),
        license="cc-by-4.0",
        license_note="the Hub card's",
    ),
    BenchmarkSpec(
        name="mmlu",
        hub_id="cais/mmlu",
        config="all",
        split="test",
        release_ids=("lighteval/mmlu",),
        mapping=FieldMapping(
            question="question",
            **_mc("answer", "choices", GoldFormat.INDEX0),
            domain="general knowledge",
            metadata=("subject",),
        ),
        answer_types=_LETTER,
        source_fields=("question", "subject", "choices", "answer"),
        license="mit",
        license_note="the Hub card's",
    ),
    BenchmarkSpec(
        name="simpleqa",
        hub_id="basicv8vc/SimpleQA",
        config="default",
        split="test",
        release_ids=("pvduy/simpleqa",),
        mapping=FieldMapping(
            question="problem", answer="answer", answer_type=AnswerType.FREE_TEXT, domain="general knowledge"
        ),
        answer_types=(AnswerType.FREE_TEXT,),
        build=_build_simpleqa,
        source_fields=("metadata", "problem", "answer"),
        license="mit",
        license_note="the Hub card's",
    ),
    BenchmarkSpec(
        name="commonsenseqa",
        hub_id="tau/commonsense_qa",
        config="default",
        split="validation",
        mapping=FieldMapping(
            question="question",
            **_mc("answerKey", "choices", GoldFormat.LETTER),
            id="id",
            domain="commonsense",
            metadata=("question_concept",),
        ),
        answer_types=_LETTER,
        source_fields=("id", "question", "question_concept", "choices", "answerKey"),
        license="mit",
        license_note="the Hub card's",
    ),
    BenchmarkSpec(
        name="socialiqa",
        hub_id="allenai/social_i_qa",
        config="default",
        split="validation",
        mapping=FieldMapping(
            question=("context", "question"),
            **_mc("label", ("answerA", "answerB", "answerC"), GoldFormat.INDEX1),
            domain="social",
        ),
        answer_types=_LETTER,
        source_fields=("context", "question", "answerA", "answerB", "answerC", "label"),
        license="cc-by-4.0",
        license_note="the AllenAI Social IQa release's (the Hub card names none)",
    ),
)

BENCHMARKS: dict[str, BenchmarkSpec] = {spec.name: spec for spec in _SPECS}
"""The supported benchmarks by name."""


def get_spec(name: str) -> BenchmarkSpec:
    """The spec for ``name`` (case-insensitive); an unknown name is a ``UserError`` listing the known ones."""
    spec = BENCHMARKS.get(name.strip().lower())
    if spec is None:
        raise UserError(f"unknown benchmark {name!r} (known: {', '.join(BENCHMARKS)})")
    return spec


_BY_HUB_ID: dict[str, BenchmarkSpec] = {
    hub_id: spec for spec in _SPECS for hub_id in (spec.hub_id, *spec.release_ids) if hub_id is not None
}


def spec_for_hub_id(hub_id: str) -> BenchmarkSpec | None:
    """The benchmark whose Hub id or release id is ``hub_id`` (exact spelling), or None."""
    return _BY_HUB_ID.get(hub_id)
