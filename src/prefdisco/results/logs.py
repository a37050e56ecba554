"""The results table, read straight from inspect eval logs.

``results_from_logs(folder)`` returns three tables:

* results — one row per (model, task, scenario_id, mode, fixed_k, epoch): ``model, family, task, scenario_id,
  mode, fixed_k, epoch, pref_align, correct, n_questions, judge_invalid, input_tokens, output_tokens`` plus
  per-role tokens (``user_*``, ``grader_*``), the trial's seeds (``assistant_seed``, ``user_seed``,
  ``grader_seed``), ``decoy_scenario_id`` (wrong_persona rows; empty otherwise), the simulator columns
  (``SIMULATOR_COLUMNS``: elicitation metrics and ``user_critical_errors``), the strategy columns
  (``STRATEGY_COLUMNS``: strategy solver rows only, ``strategy_columns.py``), ``failed`` and ``error``;
* attributes — one row per judged criterion, trial, judge and repeat: ``model, task, scenario_id, mode, fixed_k,
  epoch, attribute, weight, score, judge, repeat`` (score empty when the judgement was invalid; ``judge`` the
  judge's model name; a log an older version wrote has one judge, the ``grader`` role's model, and repeat 1);
* transcripts — one row per sample and trial: the assistant-side messages, dialogue turns, final response,
  epoch and seeds.

``epoch`` is inspect's ``sample.epoch`` (1-based: ``prefdisco eval --epochs N`` runs N trials of each sample).

Which logs count: for every (model, task name, task arguments) only the newest log is read, preferring a
successful one; logs a crash left behind (status ``started``) never shadow a newer or finished log.
A sample that errored is kept as a row with ``failed=1`` and its error, never as a zero.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.atomic import atomic_path
from prefdisco.errors import UserError
from prefdisco.results.contract import (
    ATTRIBUTE_COLUMNS,
    DEFAULT_JUDGE,
    DEFAULT_REPEAT,
    RESULT_COLUMNS,
    RESULT_KEY,
    SIMULATOR_COLUMNS,
)
from prefdisco.results.strategy_columns import strategy_columns
from prefdisco.seeds import TrialSeeds

_FAMILIES = {
    "openai": "openai",
    "azureai": "openai",
    "anthropic": "anthropic",
    "bedrock": "anthropic",
    "google": "google",
    "vertex": "google",
    "prefdisco": "local",
    "llama-cpp-python": "local",
    "ollama": "local",
    "vllm": "local",
    "sglang": "local",
    "hf": "local",
    "mockllm": "mock",
}


def model_family(model: str) -> str:
    """Provider family of an inspect model name (``openai/gpt-4.1`` → ``openai``)."""
    provider, _, name = model.partition("/")
    if provider in ("openrouter", "together", "fireworks", "openai-api", "bedrock") and name:
        vendor = name.split("/")[0].lower()
        for family in ("openai", "anthropic", "google"):
            if family in vendor or (family == "anthropic" and "claude" in vendor):
                return family
        if "gemini" in name.lower():
            return "google"
        if "claude" in name.lower():
            return "anthropic"
    return _FAMILIES.get(provider, provider or "unknown")


@dataclass(frozen=True)
class Tables:
    results: pd.DataFrame
    attributes: pd.DataFrame
    transcripts: pd.DataFrame


def error_cause(message: str) -> str:
    """One line saying why a sample failed: the provider's ``Error code: ...`` line when there is one (a
    generate error's message also carries the request, prompt included), else its first line; at most 300 chars."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        found = re.search(r"Error code: \d+.*", line)
        if found:
            return found.group(0)[:300]
    for line in lines:
        if not line.startswith(("{", "[", '"')):
            return line[:300]
    return (lines[0] if lines else "unknown error")[:300]


def _role_model(header: Any, role: str) -> str | None:
    roles = header.eval.model_roles or {}
    config = roles.get(role)
    if isinstance(config, list):
        config = config[0] if config else None
    return getattr(config, "model", None)


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    """A price table: ``{"provider/model": {"input": USD per 1M input tokens, "output": USD per 1M output}}``."""
    file = Path(path)
    try:
        data = json.loads(file.read_text())
    except FileNotFoundError as e:
        raise UserError(f"--prices {file}: file not found") from e
    except json.JSONDecodeError as e:
        raise UserError(f"--prices {file}: not valid JSON (line {e.lineno}: {e.msg})") from e
    if not isinstance(data, dict):
        raise UserError(f"--prices {file}: expected an object keyed by model name")
    for model, entry in data.items():
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), int | float) and entry[k] >= 0 for k in ("input", "output")
        ):
            raise UserError(f"--prices {file}: {model}: expected {{'input': USD/1M tokens, 'output': USD/1M tokens}}")
    return {m: {"input": float(e["input"]), "output": float(e["output"])} for m, e in data.items()}


def _cost(
    row: dict[str, Any], prices: dict[str, dict[str, float]], graders: list[tuple[str | None, int, int]] | None = None
) -> float | None:
    """USD for one sample over its roles (``graders``: each judge's (model, input, output tokens); None: the
    ``grader_*`` columns at the ``grader_model``'s price); None when a role's model has no price."""
    total = 0.0
    parts = [(row["model"], row["input_tokens"], row["output_tokens"])]
    parts.append((row["user_model"], row["user_input_tokens"], row["user_output_tokens"]))
    if graders is None:
        parts.append((row["grader_model"], row["grader_input_tokens"], row["grader_output_tokens"]))
    else:
        parts += graders
    for model, n_in, n_out in parts:
        if not n_in and not n_out:
            continue
        price = prices.get(model or "")
        if price is None:
            return None
        total += (n_in * price["input"] + n_out * price["output"]) / 1_000_000
    return total


def read_header(info: Any) -> Any:
    """An eval log's header; a truncated or corrupt log file is a UserError naming it."""
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(info, header_only=True)
    except Exception as e:  # inspect raises ValueError/KeyError/zip errors for damaged files
        name = getattr(info, "name", info)
        raise UserError(
            f"{name}: unreadable inspect log ({type(e).__name__}: {e}); move it out of the log folder"
        ) from e


def _select_logs(folder: Path) -> list[Any]:
    """The newest log (a successful one first) per run folder, model, condition, task arguments and roles.

    Folders count separately, so a large eval split over several processes with their own log folders is read
    whole from their common parent.
    """
    from inspect_ai.log import list_eval_logs

    chosen: dict[tuple[str, ...], tuple[tuple[int, str], Any]] = {}
    for info in list_eval_logs(str(folder), recursive=True):
        header = read_header(info)
        if header.eval.metadata is None or "prefdisco_mode" not in header.eval.metadata:
            continue
        roles = {r: _role_model(header, r) for r in ("user", "grader", *sorted(header.eval.model_roles or {}))}
        key = (
            str(info.name).rsplit("/", 1)[0],
            header.eval.model,
            header.eval.task,
            json.dumps([header.eval.task_args, roles], sort_keys=True, default=str),
        )
        rank = (1 if header.status == "success" else 0, header.eval.created)
        if key not in chosen or rank > chosen[key][0]:
            chosen[key] = (rank, info)
    return [info for _, info in chosen.values()]


def _samples(info: Any) -> list[Any]:
    """A log's samples without their events. Reading the whole log at once costs about half the CPU per sample
    of streaming them one by one (6 vs 11-13 ms here); a log whose sample index is incomplete (a crashed run) is
    streamed, taking whatever samples it holds."""
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    try:
        return list(read_eval_log(info, exclude_fields={"events"}).samples or [])
    except Exception:  # inspect raises several types for a partly written log
        return list(read_eval_log_samples(info, all_samples_required=False, exclude_fields={"events"}))


def _is_judge(role: str) -> bool:
    """The first judge's role ``grader`` or a panel judge's ``grader_2``, ``grader_3``, …"""
    return role == "grader" or role.startswith("grader_")


def _judge_usage(sample: Any, header: Any) -> list[tuple[str | None, int, int]]:
    """(model, input tokens, output tokens) of every judge role of a sample."""
    return [
        (_role_model(header, role), u.input_tokens, u.output_tokens)
        for role, u in (sample.role_usage or {}).items()
        if _is_judge(role)
    ]


def _usage(sample: Any, model: str) -> dict[str, int]:
    """Tokens of the model under test, the user and the judges (``grader_*``: every judge of a panel)."""
    roles = {role: usage for role, usage in (sample.role_usage or {}).items()}
    total_in = sum(u.input_tokens for u in (sample.model_usage or {}).values())
    total_out = sum(u.output_tokens for u in (sample.model_usage or {}).values())
    row = {}
    for role in ("user", "grader"):
        usage = [u for r, u in roles.items() if (_is_judge(r) if role == "grader" else r == role)]
        row[f"{role}_input_tokens"] = sum(u.input_tokens for u in usage)
        row[f"{role}_output_tokens"] = sum(u.output_tokens for u in usage)
    row["input_tokens"] = total_in - row["user_input_tokens"] - row["grader_input_tokens"]
    row["output_tokens"] = total_out - row["user_output_tokens"] - row["grader_output_tokens"]
    return row


def results_from_logs(folder: str | Path, prices: dict[str, dict[str, float]] | None = None) -> Tables:
    results: list[dict[str, Any]] = []
    attributes: list[dict[str, Any]] = []
    transcripts: list[dict[str, Any]] = []
    for info in _select_logs(Path(folder)):
        header = read_header(info)
        meta = header.eval.metadata or {}
        model = header.eval.model
        key = {"model": model, "mode": meta["prefdisco_mode"], "fixed_k": meta.get("prefdisco_fixed_k")}
        for sample in _samples(info):
            score = (sample.scores or {}).get("prefdisco_scorer")
            seeds = sample.store_as(TrialSeeds)
            trial = {"epoch": int(sample.epoch)}
            seeded = {"assistant_seed": seeds.assistant, "user_seed": seeds.user, "grader_seed": seeds.grader}
            value = score.value if score is not None and isinstance(score.value, dict) else {}
            task = (sample.metadata or {}).get("benchmark", header.eval.task)
            failed = sample.error is not None or score is None
            row = {
                **key,
                **trial,
                "family": model_family(model),
                "task": task,
                "scenario_id": str(sample.id),
                "pref_align": value.get("pref_align"),
                "correct": value.get("correct"),
                "n_questions": value.get("n_questions"),
                "judge_invalid": value.get("judge_invalid"),
                "user_turns": value.get("user_turns"),
                "user_leaks": value.get("user_leaks"),
                **{name: value.get(name) for name in SIMULATOR_COLUMNS},
                "user_model": _role_model(header, "user"),
                "grader_model": _role_model(header, "grader"),
                "decoy_scenario_id": (sample.metadata or {}).get("decoy_scenario_id"),
                **strategy_columns(sample, meta),
                "failed": int(failed),
                "error": error_cause(sample.error.message)
                if sample.error
                else ("not scored" if score is None else None),
                **_usage(sample, model),
                **seeded,
            }
            row["cost_usd"] = _cost(row, prices, _judge_usage(sample, header)) if prices else None
            results.append(row)
            if score is not None:
                for j in (score.metadata or {}).get("judgements", []):
                    attributes.append(
                        {
                            **key,
                            **trial,
                            "task": task,
                            "scenario_id": str(sample.id),
                            "attribute": j["attribute"],
                            "weight": j["weight"],
                            "score": j["score"],
                            "judge": _role_model(header, j.get("judge_role", "grader"))
                            or j.get("judge")
                            or DEFAULT_JUDGE,
                            "repeat": int(j.get("repeat", DEFAULT_REPEAT)),
                        }
                    )
            transcripts.append(
                {
                    **key,
                    **trial,
                    **seeded,
                    "task": task,
                    "scenario_id": str(sample.id),
                    "messages": [{"role": m.role, "content": m.text} for m in sample.messages],
                    "turns": (score.metadata or {}).get("turns", []) if score else [],
                    "final_response": score.answer if score else None,
                }
            )
    return _finish(
        folder,
        pd.DataFrame(results, columns=list(RESULT_COLUMNS)),
        pd.DataFrame(attributes, columns=list(ATTRIBUTE_COLUMNS)),
        pd.DataFrame(transcripts),
    )


def merge_tables(parts: list[Tables], folder: str | Path) -> Tables:
    """The tables of several run folders below ``folder`` (e.g. the workers of one split run), as
    ``results_from_logs(folder)`` would read them."""
    return _finish(
        folder,
        pd.concat([p.results for p in parts], ignore_index=True),
        pd.concat([p.attributes for p in parts], ignore_index=True),
        pd.concat([p.transcripts for p in parts], ignore_index=True),
    )


_SEED_TYPES = {"assistant_seed": "Int64", "user_seed": "Int64", "grader_seed": "Int64"}
"""Seeds stay integers when a row has none (a sample an older version logged)."""


def _finish(
    folder: str | Path, results_df: pd.DataFrame, attributes: pd.DataFrame, transcripts: pd.DataFrame
) -> Tables:
    repeated = results_df[results_df.duplicated(list(RESULT_KEY), keep=False)]
    if len(repeated):
        first = repeated.iloc[0]
        raise UserError(
            f"{folder}: scenario {first['scenario_id']} ({first['model']}, {first['mode']}, trial {first['epoch']}) "
            "appears in more than one run folder below it; read the runs separately or remove the duplicate run"
        )
    order = ["model", "task", "mode", "fixed_k", "scenario_id", "epoch"]
    results_df = results_df.astype(_SEED_TYPES).sort_values(order, kind="stable")
    if len(transcripts) and "assistant_seed" in transcripts.columns:
        transcripts = transcripts.astype(_SEED_TYPES)
    return Tables(results=results_df.reset_index(drop=True), attributes=attributes, transcripts=transcripts)


def write_tables(tables: Tables, folder: str | Path) -> dict[str, Path]:
    """Write results.csv/.parquet, attributes.csv/.parquet and transcripts.jsonl atomically into ``folder``."""
    out = Path(folder)
    written: dict[str, Path] = {}
    for name, frame in (("results", tables.results), ("attributes", tables.attributes)):
        for suffix, write in ((".csv", frame.to_csv), (".parquet", frame.to_parquet)):
            with atomic_path(out / f"{name}{suffix}") as tmp:
                write(tmp, index=False)
            written[f"{name}{suffix}"] = out / f"{name}{suffix}"
    with atomic_path(out / "transcripts.jsonl") as tmp:
        tables.transcripts.to_json(tmp, orient="records", lines=True, force_ascii=False)
    written["transcripts.jsonl"] = out / "transcripts.jsonl"
    return written
