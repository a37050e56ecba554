"""Multiple choice: the chosen option letter equals the gold letter, or one of ``metadata["accepted"]``."""

from __future__ import annotations

from prefdisco.schema import Problem
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.choice import extract_choice

METHOD_LETTER = "letter"


def accepted_letters(problem: Problem) -> list[str]:
    """``metadata["accepted"]`` when the benchmark accepts several letters, else the gold letter."""
    extra = problem.metadata.get("accepted")
    if isinstance(extra, list | tuple) and extra:
        return [str(x).strip().upper() for x in extra]
    return [problem.answer]


def check_letter(problem: Problem, response: str) -> CorrectnessResult:
    accepted = accepted_letters(problem)
    found = extract_choice(response, problem.choices)
    if found.letter is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_LETTER, detail=found.how)
    ok = found.letter in accepted
    detail = f"{found.how}; gold {'/'.join(accepted)}"
    return CorrectnessResult(correct=ok, extracted=found.letter, method=METHOD_LETTER, detail=detail)
