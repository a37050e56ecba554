"""An evaluation run and its benchmark, read for response rating: what can be rated, and the texts to show.

The run folder is read through ``prefdisco.results.table.load_results`` (results, attributes and transcripts, from
the tables or straight from the logs); its judged criteria are ``analysis.human_ratings.criterion_scores``. The
run does not record where its benchmark is, so ``--bench`` names it, and it is checked to be the one evaluated:
when the folder has ``run.json`` (or ``workers.json``) the benchmark's first ``n_scenarios`` scenarios must hash
to its ``scenario_set`` (``evaluation.config.scenario_set_hash``); in any case every scenario the run scored must
be in the benchmark. Problems are one-line ``UserError``\\ s naming the file.

A criterion can be rated when a judge judged it validly (a refused or empty response's criteria are scored by rule,
not judged: ``criterion_scores``' ``by_rule``), its scenario's rubric has the criterion and the response's
transcript has a non-empty ``final_response``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from prefdisco.analysis.validity.human_ratings import NO_K, criterion_scores, needed_key_columns
from prefdisco.annotate.rating_items import ItemKey, Judged, RatingItem
from prefdisco.benchio import json_lines
from prefdisco.errors import UserError
from prefdisco.release.convert import load_scenarios
from prefdisco.results.contract import DEFAULT_EPOCH
from prefdisco.results.table import ResultsData, load_results
from prefdisco.schema import Scenario

RUN_FILES = ("run.json", "workers.json")
ResponseKey = tuple[str, str, str, str, int, int]
"""(model, task, scenario_id, mode, fixed_k, epoch): one response of the run."""


@dataclass
class RunForRating:
    population: list[Judged]
    key_columns: list[str]
    """The optional key columns (model, task, fixed_k, epoch) the run has several of: the export writes them."""
    scenarios: dict[str, Scenario]
    data: ResultsData

    def items(self, chosen: list[Judged]) -> list[RatingItem]:
        """The chosen criteria as rating items, positions 1.. in the given order, with their texts."""
        responses = _responses(self.data, {j.key[:6] for j in chosen})
        out = []
        for position, judged in enumerate(chosen, 1):
            model, task, sid, mode, k, epoch, attribute = judged.key
            scenario = self.scenarios[sid]
            criterion = scenario.criterion(attribute)
            out.append(
                RatingItem(
                    position=position,
                    model=model,
                    task=task,
                    scenario_id=sid,
                    mode=mode,
                    fixed_k=None if k == NO_K else k,
                    epoch=epoch,
                    attribute=attribute,
                    problem_text=scenario.problem.prompt_text(),
                    response=responses[judged.key[:6]],
                    description=criterion.description,
                    preferred_value=criterion.preferred_value,
                    levels=tuple(criterion.levels[level] for level in range(1, 6)),  # type: ignore[arg-type]
                )
            )
        return out


def read_run(run_dir: Path, bench: Path) -> RunForRating:
    run_dir, bench = Path(run_dir), Path(bench)
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: not a folder (expected the --log-dir of `prefdisco eval`)")
    data = load_results(run_dir)
    items = criterion_scores(data, str(run_dir))
    scenarios = load_scenarios(bench)
    _check_bench(run_dir, bench, scenarios, sorted(set(items["scenario_id"])))
    by_id = {s.id: s for s in scenarios}
    answered = _responses(data, None)
    population = []
    judged = items["score"].notna().to_numpy() & ~items["by_rule"].to_numpy(dtype=bool)  # no rule's score is rated
    for row in items.loc[judged].itertuples(index=False):
        key: ItemKey = (row.model, row.task, row.scenario_id, row.mode, int(row.fixed_k), int(row.epoch), row.attribute)
        rubric = {c.attribute for c in by_id[row.scenario_id].rubric}
        if row.attribute in rubric and key[:6] in answered:
            population.append(Judged(key, float(row.score)))
    if not population:
        raise UserError(f"{run_dir}: no validly judged criterion of a response with a final response to rate")
    return RunForRating(population, needed_key_columns(items), by_id, data)


def _check_bench(run_dir: Path, bench: Path, scenarios: list[Scenario], run_ids: list[str]) -> None:
    for name in RUN_FILES:
        path = run_dir / name
        if not path.is_file():
            continue
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise UserError(f"{path}: cannot read it as JSON ({e})") from None
        if not isinstance(recorded, dict) or "scenario_set" not in recorded:
            continue
        from prefdisco.evaluation.settings.config import scenario_set_hash

        n = int(recorded.get("n_scenarios") or len(run_ids))
        if scenario_set_hash(scenarios[:n]) != recorded["scenario_set"]:
            raise UserError(
                f"--bench {bench}: not the benchmark {run_dir} evaluated ({path.name} records scenario set "
                f"{recorded['scenario_set']}; the first {n} scenarios of {bench} are another set)"
            )
        break
    known = {s.id for s in scenarios}
    missing = [sid for sid in run_ids if sid not in known]
    if missing:
        raise UserError(
            f"--bench {bench}: {len(missing)} scenario(s) of {run_dir} are not in it (first: {missing[0]!r}); "
            "give the benchmark the run evaluated"
        )


def _responses(data: ResultsData, wanted: set[ResponseKey] | None) -> dict[ResponseKey, str]:
    """The non-empty final responses of the run, by response key (only ``wanted`` ones when given; the texts are
    kept only then, otherwise the values are empty strings, so a large run costs its keys only)."""
    found: dict[ResponseKey, str] = {}
    for record in _transcripts(data):
        key = _response_key(record)
        text = record.get("final_response")
        if key is None or not isinstance(text, str) or not text.strip():
            continue
        if wanted is None:
            found[key] = ""
        elif key in wanted:
            found[key] = text
    if wanted is not None and set(wanted) - set(found):
        raise UserError(f"{data.source}: the transcripts changed while they were read; try again")
    return found


def _transcripts(data: ResultsData) -> Iterator[dict[str, Any]]:
    if data.transcript_rows is not None:
        yield from data.transcript_rows.to_dict("records")
        return
    if data.transcripts is None or not data.transcripts.is_file():
        raise UserError(f"{data.source}: no transcripts.jsonl beside it: the responses to rate are needed")
    path = data.transcripts
    for number, record in json_lines(path):
        if isinstance(record, json.JSONDecodeError):
            raise UserError(f"{path}: line {number}: not a JSON object ({record.msg})")
        if isinstance(record, dict):
            yield record


def _response_key(record: dict[str, Any]) -> ResponseKey | None:
    try:
        k = record.get("fixed_k")
        fixed_k = NO_K if k is None or pd.isna(k) else int(k)
        epoch = record.get("epoch")
        trial = DEFAULT_EPOCH if epoch is None or pd.isna(epoch) else int(epoch)
        return (
            str(record["model"]),
            str(record["task"]),
            str(record["scenario_id"]),
            str(record["mode"]),
            fixed_k,
            trial,
        )
    except (KeyError, TypeError, ValueError):
        return None
