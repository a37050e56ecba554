"""Free text without a grader model: SQuAD-normalized exact match of the final answer with the gold."""

from __future__ import annotations

from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.text import BOXED, STATEMENT, final_text_answer, normalize_text

METHOD_MATCH = "normalized_match"


def check_normalized_match(gold: str, response: str) -> CorrectnessResult:
    found = final_text_answer(response)
    if found is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_MATCH, detail="empty response")
    text, how = found
    ok = bool(normalize_text(gold)) and normalize_text(text) == normalize_text(gold)
    # a box or an "answer is" statement is an answer; a last line taken for one is only when it is the gold
    # ("I stand by my earlier answer." is no answer read)
    answered = ok or how in (BOXED, STATEMENT)
    return CorrectnessResult(correct=ok, extracted=text, method=METHOD_MATCH, detail=how, answered=answered)
