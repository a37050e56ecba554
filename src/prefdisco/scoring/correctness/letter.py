"""Multiple choice: the chosen option letter is one of the accepted letters, or, for a multiple-select gold
(``all_required``), the letters of the final answer are exactly the accepted set."""

from __future__ import annotations

from collections.abc import Sequence

from prefdisco.answer_spec import LetterAnswer
from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.choice import extract_choice, extract_choices

METHOD_LETTER = "letter"


def check_letter(spec: LetterAnswer, choices: Sequence[str], response: str) -> CorrectnessResult:
    if spec.all_required:
        chosen, how = extract_choices(response, choices)
        if not chosen:
            return CorrectnessResult(correct=False, extracted=None, method=METHOD_LETTER, detail=how)
        ok = chosen == set(spec.accepted)
        shown = ",".join(sorted(chosen))
        return CorrectnessResult(
            correct=ok, extracted=shown, method=METHOD_LETTER, detail=f"{how}; gold all of {','.join(spec.accepted)}"
        )
    found = extract_choice(response, choices)
    if found.letter is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_LETTER, detail=found.how)
    ok = found.letter in spec.accepted
    detail = f"{found.how}; gold {'/'.join(spec.accepted)}"
    return CorrectnessResult(correct=ok, extracted=found.letter, method=METHOD_LETTER, detail=detail)
