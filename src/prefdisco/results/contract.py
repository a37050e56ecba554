"""The column contract of the results tables: what an evaluation writes and every report input must hold.

* results — one row per (model, task, scenario_id, mode, fixed_k, epoch): ``REQUIRED_RESULT_COLUMNS`` are what a
  report needs (a table made elsewhere may carry only those, plus optional ``epoch``, ``failed`` and ``error``);
  ``RESULT_COLUMNS`` is what ``prefdisco eval`` writes;
* attributes — one row per judged criterion and trial (``ATTRIBUTE_COLUMNS``; ``REQUIRED_ATTRIBUTE_COLUMNS``
  without ``epoch``), score empty when the judgement was invalid;
* transcripts — one JSON object per sample and trial (``transcripts.jsonl``).

``epoch`` is the trial (inspect's ``sample.epoch``, 1-based; ``prefdisco eval --epochs N``) and part of the row
key; a table without the column (an older run, a hand-made table) is read as one trial, epoch 1.
``assistant_seed`` / ``user_seed`` / ``grader_seed`` are the seeds the trial's calls were sent (``prefdisco.seeds``).
"""

from __future__ import annotations

EPOCH = "epoch"
"""The trial column; ``DEFAULT_EPOCH`` when a table has none."""
DEFAULT_EPOCH = 1

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
    *REQUIRED_RESULT_COLUMNS[:6],
    EPOCH,
    *REQUIRED_RESULT_COLUMNS[6:],
    "user_input_tokens",
    "user_output_tokens",
    "grader_input_tokens",
    "grader_output_tokens",
    "user_turns",
    "user_leaks",
    "user_model",
    "grader_model",
    "cost_usd",
    "assistant_seed",
    "user_seed",
    "grader_seed",
    "failed",
    "error",
)
REQUIRED_ATTRIBUTE_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "scenario_id",
    "mode",
    "fixed_k",
    "attribute",
    "weight",
    "score",
)
ATTRIBUTE_COLUMNS: tuple[str, ...] = (*REQUIRED_ATTRIBUTE_COLUMNS[:5], EPOCH, *REQUIRED_ATTRIBUTE_COLUMNS[5:])
RESULT_KEY: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "fixed_k", EPOCH)
TRIAL_GROUP: tuple[str, ...] = RESULT_KEY[:-1]
"""The trials of one (model, task, scenario_id, mode, fixed_k), which reports average."""
ATTRIBUTE_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute")
TABLE_SUFFIXES = (".parquet", ".csv")
