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
``session_id`` and ``position`` (1-based) place a row of a sessions run (``--sessions``) in its session, in every
condition (the carry arms and the per-scenario ones); empty in other runs.
``STRATEGY_COLUMNS`` label the rows of a strategy solver (``prefdisco/checklist``, ``prefdisco/infogain``; empty
otherwise): see ``results/strategy_columns.py``.
``judged`` is 1 when the row's response was judged, 0 while a ``prefdisco eval --judge later`` row waits for
``prefdisco judge`` (PrefAlign empty, not failed; ``results/judgings.py``).
``pref_align_coverage`` is the share of the profile's weight whose criteria the run's judges scored validly;
``pref_align_reason`` says why a judged, not failed row has no PrefAlign (``judge coverage``: less than half of the
weight covered, ``scoring/alignment.py``; ``refused`` / ``empty``: a non-answer left out by ``--refusals exclude``,
``END_COLUMNS``), empty otherwise.
``in_pref_align`` (attributes) is 1 for the judgements the row's PrefAlign is made of (the run's judges: inline, or
the first ``prefdisco judge``) and 0 for a further judge's (``prefdisco judge --judge-model OTHER``); a table
without the column has only the run's judgements. The attribute rows of a refused or empty response hold the rule's
score, not a judgement (``RULED_FLAGS``: the results row says so). ``judge_call`` / ``judge_position`` (attributes)
place a structured judgement in its call's shuffled list of criteria (empty for per-criterion judging; optional on
input).

A condition is ``mode`` and ``fixed_k`` together. Every table (results, attributes, the report's tables) has the
two columns: ``mode`` (``fixed_k`` for a fixed-K condition) and ``fixed_k`` (K; empty for every other condition —
NaN in a validated frame, null in JSON, ``NO_K`` only inside a join key, never written). Wherever a condition is
one name (``summary.json`` keys, the report's text and figure legends, the dry run's lines) it is
``condition_label`` (``modes.py``): the mode, or ``fixed_k=K``.
"""

from __future__ import annotations

# a condition's one name (``modes.py``), re-exported: the tables and reports name it from here
from prefdisco.modes import FIXED_K_MODE as FIXED_K_MODE
from prefdisco.modes import condition_label as condition_label

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
"""Per dialogue with the simulated user (``dialogue/plan.asks_user``): what it drew out of it
(``scoring/elicitation.py``); empty when not measured (no dialogue; audit off or invalid for a user that does not
record what it revealed)."""
HYGIENE_COLUMNS: tuple[str, ...] = ("user_flags", "user_redraws")
"""Per dialogue with a simulated reply: the replies kept with a hygiene fault and the flagged draws drawn again
(``--user-retry``; ``dialogue/hygiene.py``); empty when no reply was screened (no question, single turn)."""
USER_FLAG_REASONS = "user_flag_reasons"
"""The faults of the replies kept: a JSON object, fault → replies with it (``{}``: all clean; empty as above)."""
SIMULATOR_COLUMNS: tuple[str, ...] = (*ELICITATION_COLUMNS, "user_critical_errors", *HYGIENE_COLUMNS)
"""The optional simulator columns a results table may carry (kept by ``results.table`` when present);
``user_critical_errors`` is the audit's turns with a critical error (empty without a valid audit)."""

STRATEGY_COLUMNS: tuple[str, ...] = (
    "strategy",
    "strategy_k",
    "strategy_prior",
    "strategy_asked",
    "inferred_attributes",
    "inferred_precision",
    "inferred_recall",
)
"""Per row of a strategy solver: its name, its budget K, the attributes it asked about and the inferred attribute
set (JSON lists of names), and P@K / R@K of that set against the true profile (``results/strategy_columns.py``)."""

HARM_COLUMNS: tuple[str, ...] = (
    "pushback_target",
    "correct_after_pushback",
    "flip_turn",
    "pushback_held",
    "belief_agreement",
)
"""The harm probes of a row (``scoring/harms.py``): the wrong answer the person insisted on or stated, the
correctness of the answer held after the last reply to pushback, the first turn a correct answer gave in, the
replies to pushback from which no answer was read (held), agreement with a stated belief; empty when the probe was
not run."""
END_COLUMNS: tuple[str, ...] = ("stop_reason", "refused", "truncated", "empty")
"""How the final response ended (``dialogue/response_end.py``, ``scoring/non_answer.py``): the provider's stop reason
as inspect reports it (``stop``, ``max_tokens``, ``content_filter``, …; empty when a driver handed over text or in an
older run) and 1 / 0 flags: ``refused`` (a refusal or content filter), ``truncated`` (cut at the token or context
limit), ``empty`` (no visible text). A refused or empty response is scored by rule — PrefAlign 1, incorrect — or,
with ``--refusals exclude``, left out (PrefAlign and ``correct`` empty, ``pref_align_reason`` ``refused`` /
``empty``); it is never judged. Optional on input."""
RULED_FLAGS: tuple[str, ...] = (END_COLUMNS[1], END_COLUMNS[3])
"""``refused`` and ``empty``: a results row with either 1 holds a response scored by rule, and its attribute rows (every
judge's, every repeat's, a further judge's too) hold the rule's score 1, not a judgement: no judge was shown the
response. ``analysis/panel.judged_rows`` (the rows a judge actually judged) leaves them out of every judge statistic.
A table without the two columns (an older run, which judged every response) has only judgements."""
CACHE_COLUMNS: tuple[str, ...] = tuple(
    f"{role}{kind}"
    for role in ("", "user_", "grader_")
    for kind in ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
)
"""Per role (the model under test, ``user_``, ``grader_``: every judge): input tokens read from and written to the
provider's prompt cache (billed at their own rates, apart from ``input_tokens``, which is the fresh input) and the
reasoning tokens (part of ``output_tokens``), from inspect's usage. Optional on input (0 in an older run)."""
COST_COLUMNS: tuple[str, ...] = ("cost_usd", "user_cost_usd", "grader_cost_usd")
"""USD of the row at the run's prices (``prices.py``: cached input at its own rate): in all, and the simulated user's
and the judges' parts (the model under test's is the rest); empty when a model has no price. Optional on input."""
ROLE_TOKENS: tuple[str, ...] = (
    "user_input_tokens",
    "user_output_tokens",
    "grader_input_tokens",
    "grader_output_tokens",
)
OPTIONAL_COUNTS: tuple[str, ...] = (*ROLE_TOKENS, *CACHE_COLUMNS, *COST_COLUMNS)
"""The optional token and cost columns a validated results frame keeps (numbers >= 0)."""
QUALITY = "quality"
"""The response's general quality, 1-5: the mean of the quality judge's three scores (``scoring/quality.py``);
empty when not measured (``--no-quality``, a reply still invalid after the re-asks, a row not judged yet)."""
PROTOCOL_ID = "protocol_id"
"""The id of the protocol the row was made under (``evaluation/protocol/protocols.py``; empty in an older run)."""
BATCHED = "batched"
"""The roles whose calls for the row went through the provider's batch API (``--batch``,
``evaluation/settings/batch.py``):
``assistant`` and/or ``grader``, space-separated; empty when none did. ``cost_usd`` prices them at the batch share."""
BATCHED_KEY = "prefdisco_batched"
"""A task's metadata: the roles whose calls it sends by batch (the rows' ``batched``)."""
SENT_BY_BATCH, SENT_REAL_TIME = "batch", "real-time"
"""How the calls of a judge-usage entry were sent, where the row's ``batched`` does not say it (the last item of an
entry of ``SampleRows.judge_usage``): the targeted user's mapping (real-time), a further judging (as it was sent)."""
SESSION_COLUMNS: tuple[str, ...] = ("session_id", "position")
"""A sessions run's session and 1-based position of the row's scenario (empty otherwise)."""
SESSION_LABEL = "session_label"
"""Attributes of a sessions run: ``recurring``, ``changed`` or ``new`` in the session (``sessions/model.py``)."""

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
COVERAGE = "pref_align_coverage"
"""The share of the profile's weight validly judged (optional on input)."""
UNSCORED_REASON = "pref_align_reason"
"""Why a judged, not failed row has no PrefAlign (optional on input)."""
RESULT_COLUMNS: tuple[str, ...] = (
    *REQUIRED_RESULT_COLUMNS[:6],
    EPOCH,
    *REQUIRED_RESULT_COLUMNS[6:7],
    COVERAGE,
    UNSCORED_REASON,
    *REQUIRED_RESULT_COLUMNS[7:],
    *ROLE_TOKENS,
    *CACHE_COLUMNS,
    "user_turns",
    "user_leaks",
    *SIMULATOR_COLUMNS,
    USER_FLAG_REASONS,
    "user_model",
    "grader_model",
    PROTOCOL_ID,
    *COST_COLUMNS,
    BATCHED,
    "assistant_seed",
    "user_seed",
    "grader_seed",
    "decoy_scenario_id",
    *HARM_COLUMNS,
    QUALITY,
    *END_COLUMNS,
    *SESSION_COLUMNS,
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
IN_PREF_ALIGN = "in_pref_align"
"""1 for the judgements the results row's PrefAlign is made of, 0 for a further judge's; all 1 when absent."""
JUDGE_CALL = "judge_call"
"""The structured judge's call (1-based, within its judge and repeat) that scored the criterion; empty for a
per-criterion judgement (``scoring/criterion_order.py``). Optional on input."""
JUDGE_POSITION = "judge_position"
"""The criterion's position (1-based) in that call's shuffled list; empty as ``judge_call``. Optional on input."""
ATTRIBUTE_COLUMNS: tuple[str, ...] = (
    *REQUIRED_ATTRIBUTE_COLUMNS[:5],
    EPOCH,
    *REQUIRED_ATTRIBUTE_COLUMNS[5:],
    JUDGE,
    REPEAT,
    IN_PREF_ALIGN,
    SESSION_LABEL,
    JUDGE_CALL,
    JUDGE_POSITION,
)
RESULT_KEY: tuple[str, ...] = ("model", "task", "scenario_id", "mode", "fixed_k", EPOCH)
TRIAL_GROUP: tuple[str, ...] = RESULT_KEY[:-1]
"""The trials of one (model, task, scenario_id, mode, fixed_k), which reports average."""
ATTRIBUTE_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute", JUDGE, REPEAT)
CRITERION_KEY: tuple[str, ...] = (*RESULT_KEY, "attribute")
"""One criterion of one trial, over every judge and repeat (the panel score's group)."""
TABLE_SUFFIXES = (".parquet", ".csv")

NO_K = -1
"""``fixed_k`` of the conditions without K inside a join or group key (never written to a table)."""
