"""Real rows of the shared benchmark copies as ``Problem``s, read by the real loaders (the same path as a run),
for the correctness tests."""

from __future__ import annotations

from pathlib import Path

from prefdisco.answer_spec import AnswerType
from prefdisco.benchmarks import load_problems
from prefdisco.schema import Problem


def medqa(benchmarks: Path) -> list[Problem]:
    return load_problems("medqa", benchmarks / "medqa")[:40]


def math500(benchmarks: Path) -> list[Problem]:
    return load_problems("math500", benchmarks / "math500")


def aime(benchmarks: Path) -> list[Problem]:
    return load_problems("aime", benchmarks / "aime")


def mascqa_num(benchmarks: Path) -> list[Problem]:
    """MaScQA's numeric questions: the NUM rows (a voided one is free text with nothing to judge against)."""
    return [
        p
        for p in load_problems("mascqa", benchmarks / "mascqa")
        if p.answer_type is AnswerType.NUMERIC_RANGE or p.metadata.get("question_type") == "NUM"
    ]


def simpleqa(benchmarks: Path) -> list[Problem]:
    return load_problems("simpleqa", benchmarks / "simpleqa")[:5]
