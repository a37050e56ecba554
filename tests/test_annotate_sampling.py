from __future__ import annotations

from pathlib import Path

from prefdisco.annotate.bench import load_benchmark
from prefdisco.annotate.sampling import annotator_order, sample_items, shortfalls
from test_annotate_bench import (
    ATTRIBUTE_NAMES,
    make_scenario,
    standard_bench,
    standard_scenarios,
    write_bench,
)


def test_samples_distinct_problems_per_task_with_ten_and_ten(tmp_path: Path) -> None:
    bench = load_benchmark(standard_bench(tmp_path))
    items = sample_items(bench, per_task=2, seed=0)
    by_id = {s.id: s for s in bench.scenarios}
    tasks = [item.task for item in items]
    assert tasks.count("mmlu") == 2 and tasks.count("gpqa") == 2 and tasks.count("simpleqa") == 1
    for task in ("mmlu", "gpqa"):
        problems = [item.problem_id for item in items if item.task == task]
        assert len(set(problems)) == 2  # distinct problems, never two scenarios of one problem
    assert [item.position for item in items] == list(range(1, 6))
    for item in items:
        scenario = by_id[item.scenario_id]
        relevant = set(scenario.relevant_attributes)
        flagged = {c.attribute for c in item.candidates if c.llm_relevant}
        unflagged = {c.attribute for c in item.candidates if not c.llm_relevant}
        assert flagged <= relevant and not (unflagged & relevant)
        assert unflagged <= set(ATTRIBUTE_NAMES)
        assert item.task_text == scenario.problem.prompt_text()
        assert "A. first option" in item.task_text
        if item.task != "simpleqa":
            assert (item.n_relevant, item.n_irrelevant) == (10, 10)


def test_sampling_is_seeded_and_independent_of_other_tasks(tmp_path: Path) -> None:
    bench = load_benchmark(standard_bench(tmp_path))
    first = sample_items(bench, per_task=2, seed=0)
    assert first == sample_items(bench, per_task=2, seed=0)
    others = [sample_items(bench, per_task=2, seed=s) for s in range(1, 6)]
    assert any(o != first for o in others)

    only_mmlu = [s for s in standard_scenarios() if s.problem.benchmark == "mmlu"]
    alone = sample_items(load_benchmark(write_bench(tmp_path / "alone", only_mmlu)), per_task=2, seed=0)
    with_others = [item for item in first if item.task == "mmlu"]
    assert [(i.scenario_id, i.candidates) for i in alone] == [(i.scenario_id, i.candidates) for i in with_others]


def test_fewer_than_ten_relevant_or_irrelevant_shows_what_exists(tmp_path: Path) -> None:
    few_relevant = make_scenario("few-rel", "mmlu", "p1", ATTRIBUTE_NAMES[:4])
    few_irrelevant = make_scenario("few-irr", "mmlu", "p2", ATTRIBUTE_NAMES[:20])  # 26 - 20 = 6 irrelevant
    bench = load_benchmark(write_bench(tmp_path / "b", [few_relevant, few_irrelevant]))
    items = {item.scenario_id: item for item in sample_items(bench, per_task=2)}
    assert (items["few-rel"].n_relevant, items["few-rel"].n_irrelevant) == (4, 10)
    assert {c.attribute for c in items["few-rel"].candidates if c.llm_relevant} == set(ATTRIBUTE_NAMES[:4])
    assert (items["few-irr"].n_relevant, items["few-irr"].n_irrelevant) == (10, 6)
    assert {c.attribute for c in items["few-irr"].candidates if not c.llm_relevant} == set(ATTRIBUTE_NAMES[20:])
    notes = shortfalls(list(items.values()), per_side=10)
    assert len(notes) == 2
    assert any("few-rel" in n and "4 relevant and 10 irrelevant" in n for n in notes)
    assert any("few-irr" in n and "10 relevant and 6 irrelevant" in n for n in notes)


def test_alias_in_relevant_attributes_maps_to_catalogue_name(tmp_path: Path) -> None:
    scenario = make_scenario("s", "mmlu", "p", ["maths_background", "humor"])
    (item,) = sample_items(load_benchmark(write_bench(tmp_path / "b", [scenario])))
    assert {c.attribute for c in item.candidates if c.llm_relevant} == {"math_background", "humor"}


def test_annotator_order_is_a_stable_per_annotator_permutation(tmp_path: Path) -> None:
    items = sample_items(load_benchmark(standard_bench(tmp_path)))
    item = items[0]
    alice, bob = annotator_order(item, "alice"), annotator_order(item, "bob")
    assert sorted(alice, key=lambda c: c.attribute) == list(item.candidates)
    assert alice == annotator_order(item, "alice")
    assert alice != bob  # 20! orders: a collision would be a bug
