"""The column contract of the results tables: what an evaluation writes and every report input must hold.

* results — one row per (model, task, scenario_id, mode, fixed_k): ``REQUIRED_RESULT_COLUMNS`` are what a
  report needs (a table made elsewhere may carry only those, plus optional ``failed`` and ``error``);
  ``RESULT_COLUMNS`` is what ``prefdisco eval`` writes;
* attributes — one row per judged criterion (``ATTRIBUTE_COLUMNS``), score empty when the judgement was invalid;
* transcripts — one JSON object per sample (``transcripts.jsonl``).
"""

from __future__ import annotations

REQUIRED_RESULT_COLUMNS: tuple[str, ...] = (
    "model",
    "family",
    "task",
    "scenario_id",
    "mode",
    "fixed_k",
    "pref_align",
    "correct",
    "n_questions",
    "judge_invalid",
    "input_tokens",
    "output_tokens",
)
RESULT_COLUMNS: tuple[str, ...] = (
    *REQUIRED_RESULT_COLUMNS,
    "user_input_tokens",
    "user_output_tokens",
    "grader_input_tokens",
    "grader_output_tokens",
    "user_turns",
    "user_leaks",
    "user_model",
    "grader_model",
    "cost_usd",
    "failed",
    "error",
)
ATTRIBUTE_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "scenario_id",
    "mode",
    "fixed_k",
    "attribute",
    "weight",
    "score",
)
RESULT_KEY: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "fixed_k")
ATTRIBUTE_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute")
TABLE_SUFFIXES = (".parquet", ".csv")
