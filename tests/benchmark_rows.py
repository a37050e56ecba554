"""Real rows of the shared benchmark copies as ``Problem``s, for the correctness tests (the real loaders live
elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

from prefdisco.schema import AnswerType, Problem


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def medqa(benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"medqa-{i}",
            benchmark="medqa",
            question=r["question"],
            choices=[r["options"][k] for k in sorted(r["options"])],
            answer=r["answer_idx"],
            answer_type=AnswerType.LETTER,
        )
        for i, r in enumerate(_rows(benchmarks / "medqa" / "test.jsonl")[:40])
    ]


def math500(benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=r["unique_id"],
            benchmark="math500",
            question=r["problem"],
            answer=r["answer"],
            answer_type=AnswerType.LATEX,
            solution=r["solution"],
        )
        for r in _rows(benchmarks / "math500" / "test.jsonl")
    ]


def aime(benchmarks: Path) -> list[Problem]:
    return [
        Problem(id=r["ID"], benchmark="aime", question=r["Question"], answer=r["Answer"], answer_type="integer")
        for r in _rows(benchmarks / "aime" / "train.jsonl")
    ]


def mascqa_num(benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"{r['qid']}-{i}",
            benchmark="mascqa",
            question=r["question"],
            answer=r["answer"],
            answer_type=AnswerType.NUMERIC_RANGE,
        )
        for i, r in enumerate(_rows(benchmarks / "mascqa" / "test.jsonl"))
        if r["question_type"] == "NUM"
    ]


def simpleqa(benchmarks: Path) -> list[Problem]:
    return [
        Problem(
            id=f"simpleqa-{i}",
            benchmark="simpleqa",
            question=r["problem"],
            answer=r["answer"],
            answer_type=AnswerType.FREE_TEXT,
        )
        for i, r in enumerate(_rows(benchmarks / "simpleqa" / "test.jsonl")[:5])
    ]
