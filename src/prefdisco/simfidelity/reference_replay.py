"""``prefdisco simfidelity --reference KIND PATH``: each row of a human reference (``simfidelity/rows.py``) asked again
of each simulated user, to measure how the simulators answer against how the people did
(``simfidelity/answer_behaviour.py``).

A row becomes the simulated user's situation in PrefDisco's own terms (``reference_scenario``): the person's hidden
need is the profile (one attribute, ``NEED_ATTRIBUTE``, whose value is the need's text), the problem is the search
topic the person asked about, the persona a neutral web searcher (the reference does not describe its people), and
the clarifying question is the assistant's first question. The simulator is built as ``prefdisco eval`` builds
its user (``dialogue/user.build_user``: the same classes and prompts) and answers it as it would in a dialogue;
a flagged reply is drawn again up to ``--user-retry`` times, as in a run.

``--limit N`` draws N rows stratified by topic: the topics in a seeded order, each topic's rows in a seeded order,
then one row of each topic in turn until N are drawn (so N ≥ the number of topics covers every topic).

Every call is seeded (``seeds.call_seed`` of the seed, the row, ``reference`` and the role) and every answer is
written to ``OUT/answers.jsonl`` as it comes, so a rerun with the same settings (``OUT/reference_run.json``) makes
only the calls not yet answered: a finished run, none.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.model import GenerateConfig, Model

from prefdisco.atomic import atomic_write
from prefdisco.dialogue.hygiene import Screen
from prefdisco.dialogue.user import build_user
from prefdisco.dialogue.user_reply import redraw
from prefdisco.errors import UserError
from prefdisco.evaluation.protocol.protocols import user_prompts
from prefdisco.schema import (
    BIG_FIVE,
    Persona,
    PreferenceItem,
    PreferenceProfile,
    Problem,
    RubricCriterion,
    Scenario,
    TraitScore,
)
from prefdisco.seeds import call_seed, seed_scope, seeded_model
from prefdisco.simfidelity.replay import Simulator, load_model
from prefdisco.simfidelity.rows import ReferenceRow

CONDITION = "reference"
NEED_ATTRIBUTE = "Information need"
RUN_FILE = "reference_run.json"
ANSWERS_FILE = "answers.jsonl"
SEARCHER = Persona(
    id="reference-searcher",
    name="Sam Searcher",
    age=35,
    occupation="web user",
    summary="A person searching the web who typed a short query and is asked what they are looking for.",
    big_five={t: TraitScore(level="medium", score=3.0) for t in BIG_FIVE},
)
"""The reference's people are not described: every row's simulated user is this neutral searcher."""


def reference_scenario(row: ReferenceRow, benchmark: str) -> Scenario:
    """Row ``row`` as a scenario: the topic as the problem, the need as the one attribute of the profile."""
    need = PreferenceItem(
        attribute=NEED_ATTRIBUTE,
        value=row.need,
        weight=1.0,
        justification="",
        description="what the person is searching for",
    )
    criterion = RubricCriterion(
        attribute=NEED_ATTRIBUTE,
        preferred_value=row.need,
        description="the response serves the person's information need",
        levels={n: f"level {n}" for n in range(1, 6)},
    )
    problem = Problem(
        id=f"{benchmark}-{row.row}",
        benchmark=benchmark,
        domain="web search",
        question=f"I searched the web for: {row.topic or row.need}",
        answer="",
        answer_type="free_text",
    )
    return Scenario(
        id=f"{benchmark}-{row.row}",
        problem=problem,
        persona=SEARCHER,
        profile=PreferenceProfile(items=[need]),
        rubric=[criterion],
    )


def draw_rows(rows: Sequence[ReferenceRow], limit: int | None, seed: int) -> list[ReferenceRow]:
    """``limit`` rows stratified by topic (module docstring), in file order; every row without ``limit``."""
    if limit is None or limit >= len(rows):
        return list(rows)
    rng = np.random.default_rng([seed, 7])
    by_topic: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_topic.setdefault(row.topic_id, []).append(i)
    topics = [sorted(by_topic)[k] for k in rng.permutation(len(by_topic))]
    queues = {t: [by_topic[t][k] for k in rng.permutation(len(by_topic[t]))] for t in topics}
    chosen: list[int] = []
    while len(chosen) < limit:
        for topic in topics:
            if queues[topic] and len(chosen) < limit:
                chosen.append(queues[topic].pop())
    return [rows[i] for i in sorted(chosen)]


def run_settings(layout: str, path: Path, rows: Sequence[ReferenceRow], simulators: Sequence[Simulator], **more: Any):
    """What a reference run is, recorded in ``OUT/reference_run.json``: a rerun with these resumes. Each simulator's
    prompt hash is in it, so answers given under other user prompts are never resumed as this run's."""
    return {
        "reference": layout,
        "path": str(Path(path).resolve()),
        "rows": [r.row for r in rows],
        "simulators": [vars(s) | {"user_prompts": user_prompts(s.user_type)} for s in simulators],
        **more,
    }


def check_out(out: Path, settings: dict[str, Any], overwrite: bool) -> dict[tuple[str, str], dict[str, Any]]:
    """The answers ``out`` already holds for ``settings`` (a resume); a folder of another run is refused in one
    line unless ``overwrite``, which starts it afresh."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    run_file, answers = out / RUN_FILE, out / ANSWERS_FILE
    if run_file.is_file():
        try:
            held = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            held = None
        if held != json.loads(json.dumps(settings)):
            if not overwrite:
                raise UserError(
                    f"--out {out}: holds another reference run (other rows, simulators or settings); give "
                    "--overwrite to replace it, or another --out"
                )
            answers.unlink(missing_ok=True)
    elif out.is_dir() and any(out.iterdir()) and not overwrite:
        raise UserError(f"--out {out}: holds files of something else; give --overwrite or another --out")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(run_file, json.dumps(settings, indent=2))
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if answers.is_file():
        for line in answers.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line a kill cut short: asked again
            done[(record["simulator"], record["reference_row"])] = record
    return done


async def answer(
    row: ReferenceRow, simulator: Simulator, model: Model, mapper: Model | None, benchmark: str, seed: int
) -> dict[str, Any]:
    """The simulator's answer to ``row``'s question, drawn again while flagged (up to its ``user_retry``)."""
    scenario = reference_scenario(row, benchmark)
    seeded = seeded_model(model, call_seed(seed_scope(seed), scenario.id, CONDITION, 1, "user"))
    user = build_user(simulator.user_type, seeded, scenario, False, mapper=mapper)
    screen = Screen(scenario)
    said = await user.reply(row.question)
    for attempt in range(1, simulator.user_retry + 1):
        if not screen.check(said).flagged:
            break
        again = await redraw(user, row.question, attempt, [])
        if again is None:
            break
        said = again
    return {
        "simulator": simulator.label,
        "reference_row": row.row,
        "simulated_answer": said.text,
        "flags": list(screen.check(said).reasons),
    }


def replay_reference(
    rows: Sequence[ReferenceRow],
    simulators: Sequence[Simulator],
    mapper_model: str | None,
    out: Path,
    done: dict[tuple[str, str], dict[str, Any]],
    *,
    benchmark: str,
    seed: int,
) -> list[dict[str, Any]]:
    """Every (simulator, row) answer: ``done``'s as they are, the others asked now and appended to
    ``OUT/answers.jsonl`` as each comes; in simulator then row order."""
    from inspect_ai._util.platform import platform_init
    from inspect_ai.util._display import init_display_type

    platform_init()
    init_display_type("none")
    needs_mapper = any(s.user_type == "targeted" for s in simulators)
    if needs_mapper and not mapper_model:
        raise UserError("--user-type targeted maps each question with a grader call: give --judge-model")
    mapper = None
    if needs_mapper and mapper_model:
        mapper = load_model(mapper_model, GenerateConfig(temperature=0.0), "--judge-model")
    models = [(s, load_model(s.user_model, s.config(), f"--user-model {s.user_model}")) for s in simulators]
    wanted = [(s, m, r) for s, m in models for r in rows if (s.label, r.row) not in done]

    async def run_all() -> None:
        with (out / ANSWERS_FILE).open("a", encoding="utf-8") as store:

            async def one(s: Simulator, m: Model, r: ReferenceRow) -> None:
                record = await answer(r, s, m, mapper, benchmark, seed)
                store.write(json.dumps(record) + "\n")
                store.flush()
                done[(s.label, r.row)] = record

            await asyncio.gather(*(one(s, m, r) for s, m, r in wanted))

    if wanted:
        asyncio.run(run_all())
    return [done[(s.label, r.row)] for s in simulators for r in rows]
