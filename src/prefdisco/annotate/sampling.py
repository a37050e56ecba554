"""Which scenarios and which candidate attributes the annotators see, and in what order.

* Per task (``scenario.problem.benchmark``) ``per_task`` distinct problems are drawn, seeded; for each, one of
  its scenarios. A task with fewer problems contributes all it has.
* Per item ``per_side`` candidates the builder marked relevant (F(i)) and ``per_side`` irrelevant ones (the
  catalogue minus F(i)), seeded. When fewer exist, all that exist are shown (the sample summary says so).
* Each annotator sees an item's candidates in an order seeded by (annotator, scenario id): stable on reload,
  different between annotators.

Every draw uses its own ``random.Random`` seeded by a string, so the sample does not depend on dict order,
on Python's hash seed, or on which other tasks are in the folder.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from prefdisco.annotate.bench import attribute_index
from prefdisco.benchio import Bench
from prefdisco.schema import Attribute, Scenario

DEFAULT_PER_TASK = 2
DEFAULT_PER_SIDE = 10
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Candidate:
    attribute: str
    category: str
    description: str
    llm_relevant: bool


@dataclass(frozen=True)
class Item:
    """One scenario to annotate, with its candidates in canonical (name) order."""

    position: int  # 1-based place in the annotation sequence
    scenario_id: str
    task: str
    problem_id: str
    task_text: str
    candidates: tuple[Candidate, ...]

    @property
    def n_relevant(self) -> int:
        return sum(c.llm_relevant for c in self.candidates)

    @property
    def n_irrelevant(self) -> int:
        return len(self.candidates) - self.n_relevant


def sample_scenarios(scenarios: list[Scenario], per_task: int, seed: int) -> list[Scenario]:
    """Per task ``per_task`` distinct problems, seeded, and for each one of its scenarios: the draw every study
    shares (attribute relevance, play the user)."""
    if per_task < 1:
        raise ValueError("per_task must be >= 1")
    by_task: dict[str, dict[str, list[Scenario]]] = defaultdict(lambda: defaultdict(list))
    for scenario in scenarios:
        by_task[scenario.problem.benchmark][scenario.problem.id].append(scenario)
    chosen: list[Scenario] = []
    for task in sorted(by_task):
        rng = random.Random(f"prefdisco-annotate:{seed}:task:{task}")
        problems = by_task[task]
        for problem_id in rng.sample(sorted(problems), min(per_task, len(problems))):
            chosen.append(rng.choice(sorted(problems[problem_id], key=lambda s: s.id)))
    return chosen


def sample_items(
    bench: Bench,
    per_task: int = DEFAULT_PER_TASK,
    per_side: int = DEFAULT_PER_SIDE,
    seed: int = DEFAULT_SEED,
) -> list[Item]:
    if per_task < 1 or per_side < 1:
        raise ValueError("per_task and per_side must be >= 1")
    chosen = sample_scenarios(bench.scenarios, per_task, seed)
    index = attribute_index(bench.attributes)
    return [
        _item(bench.attributes, index, scenario, position, per_side, seed)
        for position, scenario in enumerate(chosen, 1)
    ]


def _item(
    catalogue: list[Attribute],
    index: dict[str, Attribute],
    scenario: Scenario,
    position: int,
    per_side: int,
    seed: int,
) -> Item:
    relevant = sorted({index[name].name for name in scenario.relevant_attributes})
    relevant_set = set(relevant)
    irrelevant = sorted(a.name for a in catalogue if a.name not in relevant_set)
    rng = random.Random(f"prefdisco-annotate:{seed}:candidates:{scenario.id}")
    picked = rng.sample(relevant, min(per_side, len(relevant))) + rng.sample(irrelevant, min(per_side, len(irrelevant)))
    attributes = [index[name] for name in sorted(picked)]
    candidates = tuple(
        Candidate(a.name, a.category, a.description, llm_relevant=a.name in relevant_set) for a in attributes
    )
    return Item(
        position=position,
        scenario_id=scenario.id,
        task=scenario.problem.benchmark,
        problem_id=scenario.problem.id,
        task_text=scenario.problem.prompt_text(),
        candidates=candidates,
    )


def annotator_order(item: Item, annotator: str) -> list[Candidate]:
    """The item's candidates in this annotator's order (seeded by annotator and scenario id)."""
    candidates = list(item.candidates)
    random.Random(f"prefdisco-annotate:order:{annotator}:{item.scenario_id}").shuffle(candidates)
    return candidates


def shortfalls(items: list[Item], per_side: int) -> list[str]:
    """One line per item showing fewer than ``per_side`` relevant or irrelevant candidates."""
    lines = []
    for item in items:
        if item.n_relevant < per_side or item.n_irrelevant < per_side:
            lines.append(
                f"{item.scenario_id} ({item.task}): {item.n_relevant} relevant and {item.n_irrelevant} "
                f"irrelevant candidates (fewer than {per_side} available)"
            )
    return lines
