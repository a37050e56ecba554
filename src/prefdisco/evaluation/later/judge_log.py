"""One eval log judged after its run, through inspect's scoring of existing logs, and written back atomically.

``judge_log`` reads the whole log, scores every sample with one scorer through ``inspect_ai``'s ``score_async``
(``action="overwrite"`` for the first judging, which replaces the pending score of a ``--judge later`` sample;
``"append"`` for a further judge, beside the first), records the judging in the log's task metadata
(``results/judgings.py``) and replaces the file: the new log is written beside it and moved over it, so a crash
leaves the old log or the new one, never half of one.

What inline scoring does and ``score_async`` does not, done around each sample (its ``samples`` reader):

* the cache's epoch: inline, every call's cache key carries the sample's epoch (``CachePolicy(per_epoch=True)``);
  here it is set from the sample, so a deferred judging replays exactly the keys an inline one would;
* token usage: the first judging's calls are added to the sample's ``model_usage`` / ``role_usage`` as inline
  judging adds them (``grader*`` roles, so the results row's judge tokens and cost hold); a further judging's are
  kept on its own score (``metadata["usage"]``: [model, input, output tokens] per judge model), so the row's
  ``cost_usd`` adds them while its token columns stay the first judge's; every judging's tokens are also totalled
  in its metadata record.

The log's own ``model_roles`` are left as they are (they are part of inspect's eval-set task identity, so a rerun
of ``prefdisco eval`` still finds its finished logs); the judges are bound for scoring only, and the eval's roles
are not even built (no API key of the model under test or the user is needed to judge).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, ModelUsage
from inspect_ai.scorer import Scorer

from prefdisco.atomic import atomic_path
from prefdisco.errors import UserError
from prefdisco.progress import Tally
from prefdisco.results.contract import BATCHED_KEY
from prefdisco.results.judgings import JUDGINGS, USAGE_KEY, recorded_judgings
from prefdisco.scoring.deferred import JUDGED_SCORE
from prefdisco.scoring.metrics import none_aware_reducer


@dataclass
class JudgedLog:
    """What judging one log did: the score key it wrote and the tokens its judges used (cache hits use none)."""

    path: Path
    score: str
    input_tokens: int
    output_tokens: int


async def judge_log(
    path: Path,
    scorer: Scorer,
    roles: Mapping[str, Model],
    *,
    first: bool,
    record: dict[str, Any],
    tally: Tally | None = None,
    batched: bool = False,
) -> JudgedLog:
    """Score every sample of the log at ``path`` with ``scorer`` (judges bound as ``roles``), record ``record``
    (the judging's settings; its ``score`` key and tokens are filled in here) and replace the log. ``tally``
    counts each sample judged (for the progress lines). ``batched``: the judging's calls went through the provider's
    batch API (``prefdisco judge --batch``): its record says so (``batched``: a further judging's calls are priced
    so), and the first judging's rewrite of the task's metadata too (``BATCHED_KEY``; a regrade without it says
    they were not), so the rows price them as an inline run's."""
    from inspect_ai import score_async
    from inspect_ai.log import read_eval_log_async, write_eval_log_async

    log = await read_eval_log_async(str(path))
    samples = list(log.samples or [])
    if log.status != "success" or log.results is None:
        raise UserError(f"{path}: the eval did not finish (status {log.status}); rerun prefdisco eval to finish it")
    if log.results.total_samples != len(samples) or not samples:
        raise UserError(f"{path}: holds {len(samples)} of {log.results.total_samples} samples; rerun prefdisco eval")
    before = set(samples[0].scores or {})
    used: dict[str, ModelUsage] = {}
    further: dict[int, dict[str, ModelUsage]] = {}

    @contextlib.asynccontextmanager
    async def read(index: int) -> AsyncIterator[Any]:
        sample = samples[index]
        _start_sample(sample.epoch)  # in this sample's own scoring task: its context only
        yield sample
        models, by_role = _sample_usage()
        for model, u in models.items():
            used[model] = used.get(model, ModelUsage()) + u
        if first:  # the first judging's calls count as the sample's judge calls, as inline
            sample.model_usage = _added(sample.model_usage, models)
            sample.role_usage = _added(sample.role_usage, by_role)
        else:  # a further judging's: kept on its own score (below), for the row's cost
            further[index] = models
        if tally is not None:
            tally.done += 1

    saved_roles, log.eval.model_roles = log.eval.model_roles, None  # score_async would build every eval role
    try:
        await score_async(
            log,
            [scorer],
            epochs_reducer=none_aware_reducer(),
            model=roles["grader"],
            model_roles=dict(roles),
            action="overwrite" if first else "append",
            copy=False,
            samples=read,
        )
    finally:
        log.eval.model_roles = saved_roles
    added = sorted(set(samples[0].scores or {}) - before) if not first else [JUDGED_SCORE]
    if len(added) != 1:
        raise RuntimeError(f"{path}: expected one new score, found {added}")  # inspect names one per scorer
    for index, models in further.items():
        score = (samples[index].scores or {}).get(added[0])
        if score is not None:
            usage = [[model, u.input_tokens, u.output_tokens] for model, u in sorted(models.items())]
            score.metadata = {**(score.metadata or {}), USAGE_KEY: usage}
    tokens_in, tokens_out = sum(u.input_tokens for u in used.values()), sum(u.output_tokens for u in used.values())
    entry = {**record, "score": added[0], "input_tokens": tokens_in, "output_tokens": tokens_out, "batched": batched}
    log.eval.metadata = {**(log.eval.metadata or {}), JUDGINGS: [*recorded_judgings(log.eval), entry]}
    if first:  # these are now the sample's judge calls: by batch or not, whatever an earlier judging's were
        kept = [r for r in log.eval.metadata.get(BATCHED_KEY) or [] if r != "grader"]
        log.eval.metadata[BATCHED_KEY] = [*kept, *(["grader"] if batched else [])]
    with atomic_path(path) as tmp:
        await write_eval_log_async(log, str(tmp), format="eval")
    return JudgedLog(path, added[0], tokens_in, tokens_out)


def _start_sample(sample_epoch: int) -> None:
    """Set the cache's epoch to the sample's and start fresh usage counters (inspect's per-sample ones)."""
    from inspect_ai.model._cache import epoch
    from inspect_ai.model._model import init_sample_model_usage, init_sample_role_usage

    epoch.set(sample_epoch)
    init_sample_model_usage()
    init_sample_role_usage()


def _sample_usage() -> tuple[dict[str, ModelUsage], dict[str, ModelUsage]]:
    """The usage by model and by role of the calls made since ``_start_sample`` (cache hits count none)."""
    from inspect_ai.model._model import sample_model_usage, sample_role_usage

    return dict(sample_model_usage()), dict(sample_role_usage())


def _added(base: dict[str, ModelUsage] | None, extra: Mapping[str, ModelUsage]) -> dict[str, ModelUsage]:
    out = dict(base or {})
    for key, usage in extra.items():
        out[key] = out[key] + usage if key in out else usage
    return out
