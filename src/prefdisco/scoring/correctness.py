"""Correctness of a final response, by each benchmark's own metric.

Entry points: ``check_correct`` (async; may call a grader model) and ``check_correct_offline`` (sync, no
model).
Dispatch is on ``Problem.answer_type``:

* LETTER: the chosen option letter (``extract.extract_choice``) equals the gold letter, or is one of
  ``metadata["accepted"]`` when the benchmark accepts several letters.
* INTEGER (AIME): the final integer equals an accepted value: ``metadata["accepted"]`` if present, else
  every integer 0-999 written in the gold string ("080 or 081 (both were accepted)" accepts 80 and 81).
  Leading zeros do not matter; a boxed expression (``2^{10}``) is compared symbolically with math-verify.
* LATEX (MATH-500): the final answer (last ``\\boxed{}``, else an "answer is" statement, else the last math
  segment, else the last number) is equivalent to the gold by ``math_verify.verify``. math-verify parses LaTeX
  itself; model output is never evaluated here.
* NUMERIC_RANGE (MaScQA NUM): the final number x is correct when lo <= x <= hi for one of the gold ranges
  ("0.85 to 0.89", "6850 : 6950", "a TO b OR c TO d"), bounds widened by a relative 1e-6 for floating-point
  rounding only. A single-number gold ("840000") is an exact answer: correct within 1% relative tolerance.
  Metadata ``lo``/``hi`` override the string. "Marks to all" (a voided exam question) is not judged (None).
* FREE_TEXT: SQuAD-normalized exact match of the final answer with the gold, or, with a grader model for
  SimpleQA (or ``metadata["grader"] == "model"``), SimpleQA's three-way grade CORRECT / INCORRECT /
  NOT_ATTEMPTED.

``correct=None`` means "could not be judged" (grader output unparseable after retries, voided question); it is
never folded into False.
"""

from __future__ import annotations

import json
import math
import re
import signal
import threading

from inspect_ai.model import CachePolicy, GenerateConfig, Model, ResponseSchema
from inspect_ai.util import JSONSchema
from pydantic import BaseModel, ConfigDict

from prefdisco.errors import UserError
from prefdisco.prompts import render
from prefdisco.schema import AnswerType, Problem
from prefdisco.scoring.extract import (
    answer_statement,
    extract_choice,
    final_integer,
    final_number,
    final_text_answer,
    find_numbers,
    last_boxed,
    last_math_segment,
    normalize_text,
)


class CorrectnessResult(BaseModel):
    """Whether a response is correct; ``correct`` is None when it could not be judged."""

    model_config = ConfigDict(extra="forbid")

    correct: bool | None
    extracted: str | None
    method: str
    grade: str | None = None
    detail: str = ""


METHOD_LETTER = "letter"
METHOD_INTEGER = "integer"
METHOD_MATH = "math_verify"
METHOD_RANGE = "numeric_range"
METHOD_MATCH = "normalized_match"
METHOD_GRADER = "simpleqa_grader"

MATH_VERIFY_TIMEOUT_S = 5
"""Per-parse and per-comparison limit for math-verify (signal based: enforced on the main thread only)."""
MAX_MATH_ANSWER_CHARS = 1000
"""Longer extracted answers are not handed to math-verify (sympy can stall on huge expressions)."""
RANGE_REL_TOL = 1e-6
"""Range bounds are widened by this relative amount, for floating-point rounding only."""
SINGLE_VALUE_REL_TOL = 0.01
"""A single-number NUMERIC_RANGE gold accepts answers within 1% of it."""

GRADES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")
GRADER_ATTEMPTS = 3
"""One call plus up to 2 retries when the grader's output cannot be parsed."""
GRADER_MAX_TOKENS = 256


# ---------------------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------------------


async def check_correct(
    problem: Problem, response: str, grader: Model | None = None, *, cache: CachePolicy | bool = False
) -> CorrectnessResult:
    """Judge ``response`` by the problem's metric; free text goes to ``grader`` if its benchmark wants it (its
    calls cached under ``cache``)."""
    if problem.answer_type is AnswerType.FREE_TEXT and grader is not None and uses_model_grader(problem):
        return await grade_simpleqa(problem.question, problem.answer, response, grader, cache=cache)
    return check_correct_offline(problem, response)


def check_correct_offline(problem: Problem, response: str) -> CorrectnessResult:
    """Judge ``response`` without any model (free text by normalized exact match)."""
    match problem.answer_type:
        case AnswerType.LETTER:
            return check_letter(problem, response)
        case AnswerType.INTEGER:
            return check_integer(problem, response)
        case AnswerType.LATEX:
            return check_latex(problem.answer, response)
        case AnswerType.NUMERIC_RANGE:
            return check_numeric_range(problem, response)
        case AnswerType.FREE_TEXT:
            return check_normalized_match(problem.answer, response)
    raise AssertionError(f"unhandled answer type {problem.answer_type!r}")  # pragma: no cover


def uses_model_grader(problem: Problem) -> bool:
    return problem.benchmark.strip().lower() == "simpleqa" or problem.metadata.get("grader") == "model"


# ---------------------------------------------------------------------------------------------------------
# Multiple choice
# ---------------------------------------------------------------------------------------------------------


def check_letter(problem: Problem, response: str) -> CorrectnessResult:
    accepted = _accepted_letters(problem)
    found = extract_choice(response, problem.choices)
    if found.letter is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_LETTER, detail=found.how)
    ok = found.letter in accepted
    detail = f"{found.how}; gold {'/'.join(accepted)}"
    return CorrectnessResult(correct=ok, extracted=found.letter, method=METHOD_LETTER, detail=detail)


def _accepted_letters(problem: Problem) -> list[str]:
    extra = problem.metadata.get("accepted")
    if isinstance(extra, list | tuple) and extra:
        return [str(x).strip().upper() for x in extra]
    return [problem.answer]


# ---------------------------------------------------------------------------------------------------------
# AIME integers
# ---------------------------------------------------------------------------------------------------------


def accepted_integers(problem: Problem) -> list[int]:
    """The integers a response may give: ``metadata["accepted"]``, else every 0-999 integer in the gold."""
    extra = problem.metadata.get("accepted")
    if isinstance(extra, list | tuple) and extra:
        try:
            return [int(str(x).strip()) for x in extra]
        except ValueError as e:
            raise UserError(f"problem {problem.id}: metadata.accepted must list integers, got {extra!r}") from e
    values = [int(x) for x in re.findall(r"(?<![\d.])\d+(?![\d.])", problem.answer) if 0 <= int(x) <= 999]
    if not values:
        raise UserError(f"problem {problem.id}: answer {problem.answer!r} holds no integer 0-999")
    return list(dict.fromkeys(values))


def check_integer(problem: Problem, response: str) -> CorrectnessResult:
    accepted = accepted_integers(problem)
    found = final_integer(response)
    gold_text = " or ".join(str(v) for v in accepted)
    if found.text is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_INTEGER, detail=found.how)
    if found.value is None:  # a boxed expression: compare symbolically with each accepted value
        for value in accepted:
            ok, why = math_equivalent(str(value), found.text)
            if ok:
                return CorrectnessResult(
                    correct=True, extracted=found.text, method=METHOD_INTEGER, detail=f"{found.how}; {why}"
                )
        return CorrectnessResult(
            correct=False,
            extracted=found.text,
            method=METHOD_INTEGER,
            detail=f"{found.how}: not an integer equal to {gold_text}",
        )
    ok = found.value.is_integer() and int(found.value) in accepted
    return CorrectnessResult(
        correct=ok, extracted=found.text, method=METHOD_INTEGER, detail=f"{found.how}; gold {gold_text}"
    )


# ---------------------------------------------------------------------------------------------------------
# MATH (LaTeX) answers
# ---------------------------------------------------------------------------------------------------------


def extract_math_answer(response: str) -> tuple[str | None, str]:
    """The final answer of a MATH-style response as (LaTeX text, where it was found)."""
    boxed = last_boxed(response)
    if boxed:
        return boxed, "boxed"
    statement = answer_statement(response)
    if statement:
        return re.sub(r"(?<!\\)\$", "", statement).strip(), "answer statement"
    segment = last_math_segment(response)
    if segment:
        return segment, "last math segment"
    nums = find_numbers(response)
    if nums:
        return nums[-1][1], "last number"
    return None, "no final answer found"


def check_latex(gold: str, response: str) -> CorrectnessResult:
    extracted, how = extract_math_answer(response)
    if extracted is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_MATH, detail=how)
    ok, why = math_equivalent(gold, extracted)
    return CorrectnessResult(correct=ok, extracted=extracted, method=METHOD_MATH, detail=f"{how}; {why}")


def _wrap_latex(text: str) -> str:
    """Hand math-verify one answer: inside ``\\boxed{}`` when its braces balance, else inside ``$...$``."""
    depth = 0
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            break
    return f"\\boxed{{{text}}}" if depth == 0 else f"${text.replace('$', '')}$"


def _signal_timeouts_available() -> bool:
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


def math_equivalent(gold: str, answer: str, timeout_s: int = MATH_VERIFY_TIMEOUT_S) -> tuple[bool, str]:
    """Whether ``answer`` equals ``gold`` as mathematics; (result, explanation).

    Identical strings up to spacing, ``\\left``/``\\right``, ``$`` and ``\\dfrac`` are accepted at once;
    everything else goes to math-verify (``math_verify_equivalent``).
    """
    if _squash(gold) == _squash(answer):
        return True, "identical after whitespace/markup normalization"
    return math_verify_equivalent(gold, answer, timeout_s)


def math_verify_equivalent(gold: str, answer: str, timeout_s: int = MATH_VERIFY_TIMEOUT_S) -> tuple[bool, str]:
    """Whether math-verify finds ``answer`` equivalent to ``gold``; (result, explanation).

    math-verify's timeouts use SIGALRM, which exists only on the main thread; elsewhere they are switched off
    (math-verify would raise) and only the length cap protects against runaway simplification. Any error or
    timeout counts as not equivalent, with the reason in the explanation.
    """
    from math_verify import parse, verify
    from math_verify.errors import TimeoutException

    if len(answer) > MAX_MATH_ANSWER_CHARS:
        return False, f"answer longer than {MAX_MATH_ANSWER_CHARS} characters; not parsed"
    timeout = timeout_s if _signal_timeouts_available() else None
    try:
        gold_parsed = parse(_wrap_latex(gold), parsing_timeout=timeout)  # type: ignore[arg-type]
        answer_parsed = parse(_wrap_latex(answer), parsing_timeout=timeout)  # type: ignore[arg-type]
        if not gold_parsed:
            return False, "math-verify could not parse the gold answer"
        if not answer_parsed:
            return False, "math-verify could not parse the answer"
        ok = verify(gold_parsed, answer_parsed, timeout_seconds=timeout)
    except TimeoutException:
        return False, "math-verify timed out"
    except Exception as e:  # math-verify/sympy internals: never let one answer crash a run
        return False, f"math-verify error: {type(e).__name__}"
    return bool(ok), "equivalent (math-verify)" if ok else "not equivalent (math-verify)"


def _squash(latex: str) -> str:
    text = re.sub(r"\\(?:left|right|displaystyle)\b|\\[,!;: ]|\$|\s+", "", latex)
    return text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")


# ---------------------------------------------------------------------------------------------------------
# MaScQA numeric ranges
# ---------------------------------------------------------------------------------------------------------

_VOIDED = re.compile(r"\s*marks\s+to\s+all\s*", re.IGNORECASE)
_RANGE_SEP = re.compile(r"\s+to\s+|\s*:\s*|\s*–\s*", re.IGNORECASE)


def gold_ranges(problem: Problem) -> list[tuple[float, float, bool]] | None:
    """The accepted ranges as (lo, hi, single_value); None when the question was voided ("Marks to all")."""
    meta = problem.metadata
    if meta.get("lo") is not None and meta.get("hi") is not None:
        try:
            lo, hi = float(meta["lo"]), float(meta["hi"])
        except (TypeError, ValueError) as e:
            raise UserError(f"problem {problem.id}: metadata lo/hi must be numbers, got {meta['lo']!r}") from e
        return [(min(lo, hi), max(lo, hi), False)]
    gold = problem.answer
    if _VOIDED.fullmatch(gold):
        return None
    text = re.sub(r"\bT0\b", "TO", gold, flags=re.IGNORECASE)  # "350 T0 350"
    text = re.sub(r"(?<=\d)[oO](?=\d|\s|$)", "0", text)  # "48O TO 494"
    ranges = []
    for part in re.split(r"\s+or\s+", text.strip(), flags=re.IGNORECASE):
        bounds = _RANGE_SEP.split(part.strip())
        values = [_single_number(b) for b in bounds]
        if len(values) not in (1, 2) or any(v is None for v in values):
            raise UserError(f"problem {problem.id}: answer {gold!r} is not a number or a range 'lo to hi'")
        if len(values) == 1:
            ranges.append((values[0], values[0], True))
        else:
            lo, hi = values
            ranges.append((min(lo, hi), max(lo, hi), False))  # type: ignore[type-var]
    return ranges  # type: ignore[return-value]


def _single_number(text: str) -> float | None:
    nums = find_numbers(text)
    return nums[0][0] if len(nums) == 1 and nums[0][1].replace(",", "") == text.strip().replace(",", "") else None


def in_ranges(x: float, ranges: list[tuple[float, float, bool]]) -> bool:
    for lo, hi, single in ranges:
        if single:
            if math.isclose(x, lo, rel_tol=SINGLE_VALUE_REL_TOL, abs_tol=1e-12):
                return True
        elif lo - RANGE_REL_TOL * abs(lo) - 1e-12 <= x <= hi + RANGE_REL_TOL * abs(hi) + 1e-12:
            return True
    return False


def check_numeric_range(problem: Problem, response: str) -> CorrectnessResult:
    ranges = gold_ranges(problem)
    if ranges is None:
        return CorrectnessResult(
            correct=None,
            extracted=None,
            method=METHOD_RANGE,
            detail=f"gold {problem.answer!r}: question voided upstream; not judged",
        )
    found = final_number(response)
    if found is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_RANGE, detail="no number found")
    value, text, how = found
    ok = in_ranges(value, ranges)
    shown = " or ".join(f"{lo:g}" if single else f"[{lo:g}, {hi:g}]" for lo, hi, single in ranges)
    return CorrectnessResult(
        correct=ok, extracted=text, method=METHOD_RANGE, detail=f"{how}: {value:g} vs gold {shown}"
    )


# ---------------------------------------------------------------------------------------------------------
# Free text
# ---------------------------------------------------------------------------------------------------------


def check_normalized_match(gold: str, response: str) -> CorrectnessResult:
    found = final_text_answer(response)
    if found is None:
        return CorrectnessResult(correct=False, extracted=None, method=METHOD_MATCH, detail="empty response")
    text, how = found
    ok = bool(normalize_text(gold)) and normalize_text(text) == normalize_text(gold)
    return CorrectnessResult(correct=ok, extracted=text, method=METHOD_MATCH, detail=how)


def _grader_config() -> GenerateConfig:
    schema = JSONSchema(
        type="object",
        properties={"grade": JSONSchema(type="string", enum=list(GRADES))},
        required=["grade"],
        additionalProperties=False,
    )
    return GenerateConfig(
        temperature=0,
        max_tokens=GRADER_MAX_TOKENS,
        response_schema=ResponseSchema(
            name="simpleqa_grade",
            description="the grade of the response against the gold target",
            json_schema=schema,
            strict=True,
        ),
    )


_GRADE_WORD = re.compile(r"\b(NOT[\s_-]?ATTEMPTED|INCORRECT|CORRECT)\b")
_GRADE_LETTER = {"A": "CORRECT", "B": "INCORRECT", "C": "NOT_ATTEMPTED"}


def _as_grade(word: str) -> str | None:
    grade = re.sub(r"[\s-]+", "_", word.strip().upper())
    grade = "NOT_ATTEMPTED" if grade == "NOTATTEMPTED" else grade
    return grade if grade in GRADES else None


def parse_grade(text: str) -> str | None:
    """Read a grade from the grader's output: JSON {"grade": ...}, a bare grade word, or a letter A/B/C."""
    body = re.sub(r"```(?:json)?", "", text).strip()
    for blob in [body, *re.findall(r"\{[^{}]*\}", body)]:
        try:
            data = json.loads(blob)
        except ValueError:
            continue
        if isinstance(data, dict):
            value = next((v for k, v in data.items() if str(k).lower() == "grade"), None)
            if isinstance(value, str) and _as_grade(value):
                return _as_grade(value)
    bare = body.strip(" \t\n.\"'*`")
    if _as_grade(bare):
        return _as_grade(bare)
    words = {_as_grade(w) for w in _GRADE_WORD.findall(body)}
    if len(words) == 1:
        return words.pop()
    letter = re.fullmatch(r"\(?([ABC])\)?\.?", bare)
    return _GRADE_LETTER[letter.group(1)] if letter else None


async def grade_simpleqa(
    question: str, gold: str, response: str, grader: Model, *, cache: CachePolicy | bool = False
) -> CorrectnessResult:
    """SimpleQA's grading: a grader model labels the response CORRECT, INCORRECT or NOT_ATTEMPTED.

    Unparseable grader output is retried (GRADER_ATTEMPTS calls in all); after that the result is
    ``correct=None``. Errors raised by the model call itself propagate (inspect already retries transient
    ones).
    """
    prompt = render("simpleqa_grader", question=question, target=gold, response=response)
    config = _grader_config()
    for attempt in range(1, GRADER_ATTEMPTS + 1):
        output = await grader.generate(prompt, config=config, cache=cache if attempt == 1 else False)
        grade = parse_grade(output.completion)
        if grade is not None:
            return CorrectnessResult(
                correct=grade == "CORRECT",
                extracted=None,
                method=METHOD_GRADER,
                grade=grade,
                detail=f"grader attempt {attempt}",
            )
    return CorrectnessResult(
        correct=None, extracted=None, method=METHOD_GRADER, grade=None, detail="grader output unparseable"
    )
