"""A short free-text answer for exact matching, and SQuAD answer normalization."""

from __future__ import annotations

import re
import string

from prefdisco.scoring.extract.markup import answer_statement, last_boxed, strip_latex_text

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_text(text: str) -> str:
    """SQuAD answer normalization: lower-case, drop punctuation and articles, collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


BOXED, STATEMENT = "boxed", "answer statement"
"""How ``final_text_answer`` found an answer that the response marked as one (else its last line)."""


def final_text_answer(response: str) -> tuple[str, str] | None:
    """A short answer for exact matching as (text, where): last box, "answer is" statement, else last line."""
    boxed = last_boxed(response)
    if boxed:
        return strip_latex_text(boxed), BOXED
    statement = answer_statement(response)
    if statement:
        return statement, STATEMENT
    lines = [ln.strip() for ln in response.strip().splitlines() if ln.strip()]
    if lines:
        return lines[-1].strip("*").strip(), "whole response" if len(lines) == 1 else "last line"
    return None
