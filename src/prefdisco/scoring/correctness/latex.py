"""MATH-500 (LaTeX) answers: the final answer is equivalent to the gold by ``math_verify.verify``.

The final answer is the last ``\\boxed{}``, else an "answer is" statement, else the last math segment, else the
last number. math-verify parses LaTeX itself; model output is never evaluated here. Identical strings up to
spacing, ``\\left``/``\\right``, ``$`` and ``\\dfrac`` are accepted without it.
"""

from __future__ import annotations

import re
import signal
import threading

from prefdisco.scoring.correctness.result import CorrectnessResult
from prefdisco.scoring.extract.markup import answer_statement, last_boxed, last_math_segment
from prefdisco.scoring.extract.numbers import find_numbers

METHOD_MATH = "math_verify"

MATH_VERIFY_TIMEOUT_S = 5
"""Per-parse and per-comparison limit for math-verify (signal based: enforced on the main thread only)."""
MAX_MATH_ANSWER_CHARS = 1000
"""Longer extracted answers are not handed to math-verify (sympy can stall on huge expressions)."""


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
    # lazy: math-verify pulls in sympy and its LaTeX parser (seconds of import), needed only for LaTeX answers
    from math_verify import parse, verify
    from math_verify.errors import TimeoutException

    if len(answer) > MAX_MATH_ANSWER_CHARS:
        return False, f"answer longer than {MAX_MATH_ANSWER_CHARS} characters; not parsed"
    timeout = timeout_s if _signal_timeouts_available() else None
    try:
        gold_parsed = parse(_wrap_latex(gold), parsing_timeout=timeout)
        answer_parsed = parse(_wrap_latex(answer), parsing_timeout=timeout)
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


def _squash(latex: str) -> str:
    text = re.sub(r"\\(?:left|right|displaystyle)\b|\\[,!;: ]|\$|\s+", "", latex)
    return text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
