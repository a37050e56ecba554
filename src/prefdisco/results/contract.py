"""The column contract of the results tables: what an evaluation writes and every report input must hold.

* results — one row per (model, task, scenario_id, mode, fixed_k, epoch): ``REQUIRED_RESULT_COLUMNS`` are what a
  report needs (a table made elsewhere may carry only those, plus optional ``epoch``, ``failed`` and ``error``);
  ``RESULT_COLUMNS`` is what ``prefdisco eval`` writes;
* attributes — one row per judged criterion, trial, judge and repeat (``ATTRIBUTE_COLUMNS``;
  ``REQUIRED_ATTRIBUTE_COLUMNS`` without ``epoch``, ``judge`` and ``repeat``), score empty when the judgement was
  invalid; ``judge`` is the judge's model name (``DEFAULT_JUDGE`` in a table without the column) and ``repeat``
  the judge's 1-based re-judgement (``prefdisco eval --judge-model A --judge-model B --judge-repeats N``);
* transcripts — one JSON object per sample and trial (``transcripts.jsonl``).

``epoch`` is the trial (inspect's ``sample.epoch``, 1-based; ``prefdisco eval --epochs N``) and part of the row
key; a table without the column (an older run, a hand-made table) is read as one trial, epoch 1.
``assistant_seed`` / ``user_seed`` / ``grader_seed`` are the seeds the trial's calls were sent (``prefdisco.seeds``).
``decoy_scenario_id`` is the scenario whose profile and persona a wrong_persona row was shown (empty otherwise).
``STRATEGY_COLUMNS`` label the rows of a strategy solver (``prefdisco/checklist``, ``prefdisco/infogain``; empty
otherwise): see ``results/strategy_columns.py``.
``judged`` is 1 when the row's response was judged, 0 while a ``prefdisco eval --judge later`` row waits for
``prefdisco judge`` (PrefAlign empty, not failed; ``results/judgings.py``).
"""

from __future__ import annotations

EPOCH = "epoch"
"""The trial column; ``DEFAULT_EPOCH`` when a table has none."""
DEFAULT_EPOCH = 1

ELICITATION_COLUMNS: tuple[str, ...] = (
    "elicited_weight",
    "elicited_count",
    "question_hit_rate",
    "volunteered_count",
    "first_hit_turn",
)
"""Per discovery / fixed-K dialogue: what it drew out of the simulated user (``scoring/elicitation.py``); empty
when not measured (no dialogue; audit off or invalid for a user that does not record what it revealed)."""
SIMULATOR_COLUMNS: tuple[str, ...] = (*ELICITATION_COLUMNS, "user_critical_errors")
"""The optional simulator columns a results table may carry (kept by ``results.table`` when present);
``user_critical_errors`` is the audit's turns with a critical error (empty without a valid audit)."""

STRATEGY_COLUMNS: tuple[str, ...] = (
    "strategy",
    "strategy_k",
    "strategy_asked",
    "inferred_attributes",
    "inferred_precision",
    "inferred_recall",
)
"""Per row of a strategy solver: its name, its budget K, the attributes it asked about and the inferred attribute
set (JSON lists of names), and P@K / R@K of that set against the true profile (``results/strategy_columns.py``)."""

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
    *SIMULATOR_COLUMNS,
    "user_model",
    "grader_model",
    "cost_usd",
    "assistant_seed",
    "user_seed",
    "grader_seed",
    "decoy_scenario_id",
    *STRATEGY_COLUMNS,
    "judged",
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
JUDGE = "judge"
"""The judge column of the attribute table; ``DEFAULT_JUDGE`` when a table has none (one judge)."""
DEFAULT_JUDGE = "grader"
REPEAT = "repeat"
"""The repeat column of the attribute table; ``DEFAULT_REPEAT`` when a table has none."""
DEFAULT_REPEAT = 1
ATTRIBUTE_COLUMNS: tuple[str, ...] = (
    *REQUIRED_ATTRIBUTE_COLUMNS[:5],
    EPOCH,
    *REQUIRED_ATTRIBUTE_COLUMNS[5:],
    JUDGE,
    REPEAT,
)
RESULT_KEY: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "fixed_k", EPOCH)
TRIAL_GROUP: tuple[str, ...] = RESULT_KEY[:-1]
"""The trials of one (model, task, scenario_id, mode, fixed_k), which reports average."""
ATTRIBUTE_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute", JUDGE, REPEAT)
CRITERION_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute")
"""One criterion of one trial, over every judge and repeat (the panel score's group)."""
TABLE_SUFFIXES = (".parquet", ".csv")
