"""Where a response states its final answer: ``\\boxed{}`` contents, "the answer is ..." statements, the last math
segment, and ``\\text{}`` wrappers around an answer."""

from __future__ import annotations

import re
import string

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")


def boxed_contents(text: str) -> list[tuple[int, str]]:
    """All ``\\boxed{...}`` / ``\\fbox{...}`` contents with balanced braces, as (position, content).

    ``\\boxed 5`` (no braces) yields the next token. A box whose braces never close is skipped.
    """
    found: list[tuple[int, str]] = []
    for m in _BOXED.finditer(text):
        start = m.end()
        if start < len(text) and text[start] == "{":
            depth = 0
            for i in range(start, len(text)):
                if text[i] == "{":
                    depth += 1
                elif text[i] == "}":
                    depth -= 1
                    if depth == 0:
                        found.append((start + 1, text[start + 1 : i]))
                        break
        else:
            token = re.match(r"[^\s$]+", text[start:])
            if token and m.group(0).endswith(tuple(string.whitespace)):
                found.append((start, token.group(0)))
    return found


def last_boxed(text: str) -> str | None:
    """The content of the last balanced ``\\boxed{...}``, or None."""
    boxes = boxed_contents(text)
    return boxes[-1][1].strip() if boxes else None


_STATEMENT = re.compile(
    r"\b(?:final\s+)?answer\b\s*(?:\*\*)?\s*(?:is\b|:|=)\s*:?\s*(?:\*\*)?\s*"
    r"(?:(?:actually|therefore|thus|then|clearly|indeed|still)\s+)?",
    re.IGNORECASE,
)
_MATH_SEGMENT = re.compile(
    r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL
)
_SENTENCE_END = re.compile(r"\.(?!\d)|\n|;|,\s+(?:as|since|because|which|so|and|but)\b")


def answer_statement(text: str) -> str | None:
    """The payload of the last "answer is ..." / "Answer: ..." statement, trimmed to its math or sentence.

    "The final answer is $\\frac12$. I hope it is correct." gives ``\\frac12``; "Answer: 42 apples." gives
    "42 apples". None when there is no such statement or it is empty.
    """
    matches = list(_STATEMENT.finditer(text))
    return statement_payload(text, matches[-1].end()) if matches else None


def answer_statements(text: str) -> list[tuple[int, str]]:
    """Every "answer is ..." / "Answer: ..." statement with a payload, as (where its payload starts, payload)."""
    found = ((m.end(), statement_payload(text, m.end())) for m in _STATEMENT.finditer(text))
    return [(pos, payload) for pos, payload in found if payload is not None]


def statement_payload(text: str, start: int) -> str | None:
    """What a statement starting at ``start`` states: its first math segment, else its words up to the sentence's
    end, trimmed; None when empty."""
    line = text[start:].split("\n", 1)[0]
    segments = list(_MATH_SEGMENT.finditer(line))
    if segments:
        payload = next(g for g in segments[0].groups() if g is not None)
    else:
        end = _SENTENCE_END.search(line)
        payload = line[: end.start()] if end else line
    payload = payload.strip().strip("*").strip().rstrip(".").strip()
    return payload or None


def last_math_segment(text: str) -> str | None:
    """The last ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` segment, or None."""
    segments = list(_MATH_SEGMENT.finditer(text))
    if not segments:
        return None
    content = next(g for g in segments[-1].groups() if g is not None).strip()
    return content or None


def strip_latex_text(text: str) -> str:
    """Unwrap ``\\text{}``, ``\\textbf{}``, ``\\mathrm{}``, ``\\mathbf{}`` and ``\\mbox{}`` (one level)."""
    return re.sub(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}", r"\1", text).strip()
