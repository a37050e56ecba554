"""A release record's ``original_problem`` (or ``parsed_problem``) → :class:`Problem`.

The row is read with the evaluator's ``normalize_problem`` rules (:func:`normalize_release_problem`); the raw
row is kept in ``problem.metadata["original_problem"]``. When the metadata line's ``dataset`` is one of the
registered benchmarks (by its Hub id or the id the paper's release used, see
:func:`prefdisco.benchmarks.registry.spec_for_hub_id`), benchmark name, domain and answer type come from its
spec; otherwise the benchmark is that dataset id, the domain "math" when every preference's
``problem_context`` is "math problem" (else "general"), and the answer type is inferred. Problem id =
``problem_<i>`` (shared by all personas of a problem). A blank gold (CommonsenseQA's test split, which the paper's
config uses) is kept blank: its answer spec is ``NotJudgeable`` and correctness is None, never False.

Export (:func:`original_problem_row`) writes the stored source row (and ``parsed_problem``) back as written while
they still yield the problem's question, options and answer; otherwise a row built from the Problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from prefdisco.answer_spec import parse_integers, parse_ranges
from prefdisco.benchmarks.registry import spec_for_hub_id
from prefdisco.errors import UserError
from prefdisco.release.format import ANSWER_FIELDS, DEFAULT_BENCHMARK, PROBLEM_ID_RE, QUESTION_FIELDS
from prefdisco.release.record_error import RecordModelError
from prefdisco.schema import AnswerType, Problem, option_letters


@dataclass
class NormalizedProblem:
    """What the paper's evaluator extracts from a record (question, options letter→text, answer, ...)."""

    question: str
    options: dict[str, Any]
    answer: Any
    answer_field: str | None
    solution: str | None
    image: Any


def _options(value: Any) -> dict[str, Any]:
    if not value:
        return {}
    if isinstance(value, dict):
        labels, texts = value.get("label"), value.get("text")
        if isinstance(labels, list) and isinstance(texts, list):
            return dict(zip(labels, texts, strict=False))
        return dict(value)
    if isinstance(value, list):
        return {chr(65 + i): v for i, v in enumerate(value)}
    return {}


def normalize_release_problem(record: dict[str, Any]) -> NormalizedProblem:
    """Apply the evaluator's ``normalize_problem`` rules to a release record.

    ``parsed_problem`` wins when it is an object with a question. Otherwise, from ``original_problem``: the
    question is the first truthy of query/question/problem/Question/prompt, with ``context`` prepended;
    options come from ``choices`` or ``options`` (a list is lettered A, B, ...; ``{label, text}`` is zipped),
    else from answerA-answerD; the answer is the first non-null of correct_answer/answerKey/correct_option/
    answer_idx/Answer/answer/label, an int becoming a letter when options exist and a digit-string ``label``
    a 1-based letter; the solution joins ``lecture`` and ``solution``.
    """
    parsed = record.get("parsed_problem")
    if isinstance(parsed, dict) and parsed.get("question"):
        return NormalizedProblem(
            question=str(parsed["question"]),
            options=_options(parsed.get("options")),
            answer=parsed.get("answer", ""),
            answer_field="answer",
            solution=parsed.get("solution"),
            image=parsed.get("image"),
        )
    source = record.get("original_problem", record)
    if not isinstance(source, dict):
        return NormalizedProblem(str(source), {}, "", None, None, None)
    question: Any = next((source[k] for k in QUESTION_FIELDS if source.get(k)), "")
    context = source.get("context")
    if context:
        question = f"{context}\n\n{question}" if question else str(context)
    options = _options(source.get("choices") or source.get("options"))
    if not options:
        options = {k[-1]: source[k] for k in ("answerA", "answerB", "answerC", "answerD") if source.get(k) is not None}
    field = next((k for k in ANSWER_FIELDS if source.get(k) is not None), None)
    answer = source.get(field, "") if field else ""
    if isinstance(answer, int) and options:
        answer = chr(65 + answer)
    elif field == "label" and isinstance(answer, str) and answer.isdigit():
        answer = chr(64 + int(answer))
    parts = [str(source[k]) for k in ("lecture", "solution") if source.get(k) not in (None, "")]
    return NormalizedProblem(
        question=str(question),
        options=options,
        answer=answer,
        answer_field=field,
        solution="\n\n".join(parts) if parts else None,
        image=source.get("image"),
    )


def infer_answer_type(answer: str, source: Any) -> AnswerType:
    """The answer type of a non-multiple-choice answer: a numeric range (``lo to hi``, ``lo TO hi``, ``lo : hi``,
    alternatives joined by ``or``), LaTeX (or a boxed solution), an integer (``1,000`` included), a single
    decimal number (judged within 1 %, as a loaded MaScQA one), else free text."""
    ranges = parse_ranges(answer) if answer.strip() else None
    if ranges and not all(r.single for r in ranges):
        return AnswerType.NUMERIC_RANGE
    solution = source.get("solution") if isinstance(source, dict) else None
    if (isinstance(solution, str) and "\\boxed" in solution) or any(c in answer for c in "\\^{}$"):
        return AnswerType.LATEX
    if parse_integers(answer) is not None:
        return AnswerType.INTEGER
    return AnswerType.NUMERIC_RANGE if ranges else AnswerType.FREE_TEXT


def problem_from_release(record: dict[str, Any], dataset: str | None, where: str) -> Problem:
    """Build the Problem of one release record (``where`` prefixes error messages)."""
    parsed = record.get("parsed_problem")
    if not (isinstance(parsed, dict) and parsed.get("question")) and not isinstance(
        record.get("original_problem"), dict
    ):
        raise UserError(f"{where}: original_problem must be an object (the source row)")
    norm = normalize_release_problem(record)
    question = norm.question.strip()
    if not question:
        raise UserError(f"{where}: original_problem has no question (looked for {', '.join(QUESTION_FIELDS)})")
    answer = "" if norm.answer is None else str(norm.answer).strip()
    metadata: dict[str, Any] = {}
    choices: list[str] = []
    if norm.options:
        keys = list(norm.options)
        letters = option_letters(len(keys))
        if sorted(str(k) for k in keys) == letters:
            choices = [str(norm.options[letter]) for letter in letters]
        else:  # odd labels: relabel A, B, ... in the source order and map the answer through the labels
            choices = [str(v) for v in norm.options.values()]
            metadata["option_labels"] = [str(k) for k in keys]
            by_label = {str(k): letter for k, letter in zip(keys, letters, strict=True)}
            answer = by_label.get(answer, answer)
        if answer and answer not in letters and answer in choices:  # answer given as option text
            answer = letters[choices.index(answer)]
    spec = spec_for_hub_id(dataset) if dataset else None
    prefs = record.get("persona_preferences")
    contexts = (
        {p.get("problem_context") for p in prefs.values() if isinstance(p, dict)} if isinstance(prefs, dict) else set()
    )
    domain = spec.domain if spec else ("math" if contexts == {"math problem"} else "general")
    if choices:
        answer_type = AnswerType.LETTER
    elif spec and spec.answer_type is not None and spec.answer_type is not AnswerType.LETTER:
        answer_type = spec.answer_type
    else:
        answer_type = infer_answer_type(answer, record.get("original_problem"))
    pid = str(record.get("problem_id", ""))
    m = PROBLEM_ID_RE.match(pid)
    if m:
        metadata["release_index"] = int(m.group(1))
    if "original_problem" in record:
        metadata["original_problem"] = record["original_problem"]
    if isinstance(record.get("parsed_problem"), dict):
        metadata["parsed_problem"] = record["parsed_problem"]
    if norm.image is not None:
        metadata["image"] = norm.image
    try:
        return Problem(
            id=f"problem_{m.group(1)}" if m else pid,
            benchmark=spec.name if spec else (dataset or DEFAULT_BENCHMARK),
            domain=domain,
            question=question,
            choices=choices,
            answer=answer,
            answer_type=answer_type,
            solution=norm.solution,
            metadata=metadata,
        )
    except ValidationError as e:
        raise RecordModelError(where, "original_problem", e) from e


def original_problem_row(problem: Problem) -> tuple[dict[str, Any], dict[str, Any] | None, bool]:
    """(``original_problem``, ``parsed_problem`` or None, whether they are the stored source parts)."""
    raw = problem.metadata.get("original_problem")
    parsed = problem.metadata.get("parsed_problem")
    parsed = parsed if isinstance(parsed, dict) else None
    if raw is not None:
        record = {
            "problem_id": "problem_0_x",
            "original_problem": raw,
            **({"parsed_problem": parsed} if parsed else {}),
        }
        try:
            again = problem_from_release(record, None, "")
        except UserError:
            again = None
        if again is not None and (again.question, again.choices, again.answer) == (
            problem.question,
            problem.choices,
            problem.answer,
        ):
            return raw, parsed, True
    if problem.answer_type is AnswerType.LETTER:
        return {"question": problem.question, "choices": list(problem.choices), "answer": problem.answer}, None, False
    row: dict[str, Any] = {"problem": problem.question}
    if problem.solution:
        row["solution"] = problem.solution
    row["answer"] = problem.answer
    return row, None, False
