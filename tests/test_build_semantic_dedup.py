"""Semantic dedup of new attributes: the builder's model (scripted) decides whether a proposal the lexical pass
kept duplicates an attribute of Θ or one accepted earlier in the build; decisions are sorted, checkpointed,
recorded in the manifest, and a failed decision never merges anything."""

from __future__ import annotations

import asyncio
import itertools
import re
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, ModelOutput
from rich.console import Console
from typer.testing import CliRunner

from prefdisco.benchio import read_bench
from prefdisco.builder import pipeline, relevance, semantic_dedup
from prefdisco.builder.catalogue import load_catalogue
from prefdisco.builder.cli import _print_estimate, register
from prefdisco.builder.config import BuildConfig
from prefdisco.builder.pool import ModelPool, StepRunner
from prefdisco.builder.semantic_dedup import NEW, STEP, SemanticDedupConfig, deduplicate
from test_build_support import FakeBuilder, default_relevance, fake_model, make_problems

CATALOGUE = load_catalogue()
NAMES = [a.name for a in CATALOGUE]
SCHEMA = relevance.relevance_schema(tuple(NAMES), 1, 5, 3)

MEANINGS = {
    "Preference for analogical explanations": "Whether ideas should be explained by analogy with familiar things.",
    "Sourdough timing": "How much the answer should dwell on fermentation times when baking bread at home.",
    "Cooking comparisons": "Explaining steps by comparison with cooking, recipes and kitchen work.",
    "Kitchen metaphors": "Explaining steps with metaphors from the kitchen, cooking and recipes.",
}


def draft(name: str) -> dict[str, Any]:
    return {"name": name, "category": "communication", "description": MEANINGS[name], "values": ["low", "high"]}


def answers(proposals: dict[str, list[str]]) -> dict[str, Any]:
    """Relevance replies: problem id -> its catalogue names and the new attributes it proposes."""
    return {
        pid: SCHEMA.model_validate({"relevant": [NAMES[i]], "new_attributes": [draft(n) for n in names]})
        for i, (pid, names) in enumerate(proposals.items())
    }


def proposed_name(prompt: str) -> str:
    return re.search(r"^Suggested attribute: (.+)$", prompt, re.MULTILINE).group(1)  # type: ignore[union-attr]


def judge(table: dict[str, str]) -> Any:
    """A scripted dedup model: the proposal's entry in ``table`` if that name is among the offered candidates,
    else "new". It asserts that the reply schema offers exactly the candidates listed in the prompt, plus "new"."""

    def reply(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        offered = schema["properties"]["duplicate_of"]["enum"]
        listed = re.findall(r"^- (.+?)(?: \(also: .*?\))?: ", prompt, re.MULTILINE)
        assert offered == [*listed, NEW]
        want = table.get(proposed_name(prompt), NEW)
        return {"reason": f"scripted for {proposed_name(prompt)}", "duplicate_of": want if want in offered else NEW}

    return reply


def _dedup(fake: FakeBuilder, replies: dict[str, Any], **config: Any) -> tuple[Any, Any, StepRunner]:
    runner = StepRunner(pool=ModelPool([fake_model(fake)], seed=0))
    proposals = relevance.propose(replies, CATALOGUE)
    result = asyncio.run(deduplicate(runner, proposals.new, CATALOGUE, SemanticDedupConfig(**config)))
    final = proposals.renamed(result.renames, result.attributes)
    return result, relevance.assign(replies, CATALOGUE, final), runner


def test_a_duplicate_is_merged_into_the_catalogue_name_and_a_new_one_stays() -> None:
    fake = FakeBuilder({STEP: judge({"Preference for analogical explanations": "Use of analogies"})})
    replies = answers({"p1": ["Preference for analogical explanations"], "p2": ["Sourdough timing"]})
    result, relevant, runner = _dedup(fake, replies)
    assert fake.calls[STEP] == 2 and not runner.failures
    assert result.renames == {"Preference for analogical explanations": "Use of analogies"}
    assert [a.name for a in result.attributes] == ["Sourdough timing"]
    assert relevant["p1"] == [NAMES[0], "Use of analogies"] and relevant["p2"] == [NAMES[1], "Sourdough timing"]
    first, second = (d.as_dict() for d in result.decisions)
    assert first["proposed"] == "Preference for analogical explanations" and first["kind"] == "catalogue"
    assert first["canonical"] == "Use of analogies" and first["candidates"][0] == "Use of analogies"
    assert first["reason"] == "scripted for Preference for analogical explanations"
    assert first["model"] == "mockllm/model" and len(first["candidates"]) == 8  # max_candidates
    assert second == {**second, "proposed": "Sourdough timing", "canonical": "Sourdough timing", "kind": "new"}
    assert result.counts() == {"catalogue": 1, "build": 0, "new": 1, "failed": 0}


def test_two_proposals_of_one_build_that_duplicate_each_other_collapse_to_one() -> None:
    fake = FakeBuilder({STEP: judge({"Kitchen metaphors": "Cooking comparisons"})})
    replies = answers({"p1": ["Kitchen metaphors"], "p2": ["Cooking comparisons", "Sourdough timing"]})
    result, relevant, _ = _dedup(fake, replies)
    # sorted order: "Cooking comparisons" is decided (new) before "Kitchen metaphors", which is offered it
    assert [d.proposed for d in result.decisions] == ["Cooking comparisons", "Kitchen metaphors", "Sourdough timing"]
    assert [d.kind for d in result.decisions] == ["new", "build", "new"]
    assert "Cooking comparisons" in result.decisions[1].candidates
    cooking = next(a for a in result.attributes if a.name == "Cooking comparisons")
    assert [a.name for a in result.attributes] == ["Cooking comparisons", "Sourdough timing"]
    assert cooking.aliases == ["Kitchen metaphors"]
    assert relevant["p1"] == [NAMES[0], "Cooking comparisons"]
    assert relevant["p2"] == [NAMES[1], "Cooking comparisons", "Sourdough timing"]
    # a merged proposal is never a candidate: only accepted attributes are offered to later proposals
    assert "Kitchen metaphors" not in result.decisions[2].candidates


def test_the_order_of_problems_does_not_change_the_canonical_names() -> None:
    # The script merges a proposal into any other proposal it is offered (whichever was decided first), so
    # only a fixed decision order makes the outcome stable.
    def greedy(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
        offered = schema["properties"]["duplicate_of"]["enum"]
        other = [c for c in offered if c in MEANINGS]
        target = "Use of analogies" if proposed_name(prompt).startswith("Preference") else (other or [NEW])[0]
        return {"reason": "scripted", "duplicate_of": target}

    proposals = {
        "p1": ["Kitchen metaphors"],
        "p2": ["Cooking comparisons", "Preference for analogical explanations"],
        "p3": ["Sourdough timing", "Kitchen metaphors"],
    }
    outcomes = []
    for order in itertools.permutations(proposals):
        fake = FakeBuilder({STEP: greedy})
        replies = answers({pid: list(reversed(proposals[pid])) if pid == "p2" else proposals[pid] for pid in order})
        result, relevant, _ = _dedup(fake, replies)
        prompts = [p for step, p in fake.prompts if step == STEP]
        outcomes.append(
            (
                result.renames,
                [a.model_dump() for a in result.attributes],
                {pid: set(names) - set(NAMES) for pid, names in relevant.items()},
                prompts,
            )
        )
    assert all(o == outcomes[0] for o in outcomes)
    renames, attributes, new_per_problem, _ = outcomes[0]
    assert renames["Preference for analogical explanations"] == "Use of analogies"
    assert attributes[0]["name"] == "Cooking comparisons"  # decided first, so the others merge into it
    assert new_per_problem["p1"] == {"Cooking comparisons"}


def test_an_invalid_reply_keeps_the_attribute_and_records_the_failure() -> None:
    fake = FakeBuilder({STEP: lambda *a: {"reason": "it is telepathy", "duplicate_of": "Telepathy"}})
    replies = answers({"p1": ["Preference for analogical explanations"]})
    result, relevant, runner = _dedup(fake, replies)
    assert fake.calls[STEP] == 3  # the first reply and two re-asks
    assert not result.renames and [a.name for a in result.attributes] == ["Preference for analogical explanations"]
    assert relevant["p1"] == [NAMES[0], "Preference for analogical explanations"]
    (decision,) = result.decisions
    assert decision.kind == "failed" and decision.canonical == decision.proposed
    assert decision.model == "mockllm/model" and "duplicate_of" in decision.reason
    (failure,) = runner.failures
    assert (failure.step, failure.item, failure.attempts) == (STEP, "Preference for analogical explanations", 3)


# ---- through the whole build --------------------------------------------------------------------------------


class Recording(FakeBuilder):
    """A FakeBuilder that also keeps the temperature of every call, per step."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.temperatures: dict[str, set[float | None]] = {}

    def __call__(self, input: list[Any], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        assert config.response_schema is not None
        self.temperatures.setdefault(config.response_schema.name, set()).add(config.temperature)
        return super().__call__(input, tools, tool_choice, config)


def proposing(fake: FakeBuilder, prompt: str, schema: dict[str, Any], n: int) -> Any:
    """Relevance replies in which problem 0 proposes a near-duplicate of Θ's "Use of analogies" and problem 1
    a genuinely new attribute."""
    reply = default_relevance(fake, prompt, schema, n)
    if "What is 0 + 2 * 3?" in prompt:
        reply["new_attributes"] = [draft("Preference for analogical explanations")]
    elif "variant 1" in prompt:
        reply["new_attributes"] = [draft("Sourdough timing")]
    return reply


def _build(fake: FakeBuilder, out: Path, **kw: Any) -> Any:
    values: dict[str, Any] = {
        "benchmark": "toy",
        "problems": 3,
        "personas_per_problem": 2,
        "library_size": 4,
        "max_share": 0.5,
        "models": ["mockllm/a"],
        "out": out,
        **kw,
    }
    config = BuildConfig.model_validate(values)
    return asyncio.run(pipeline.build_benchmark(config, models=[fake_model(fake, "a")], problems=make_problems(3)))


def handlers() -> dict[str, Any]:
    return {"relevance": proposing, STEP: judge({"Preference for analogical explanations": "Use of analogies"})}


def test_a_build_renames_merged_proposals_everywhere_and_a_rerun_makes_no_call(tmp_path: Path) -> None:
    fake = Recording(handlers(), stable_names=True)
    report = _build(fake, tmp_path / "bench")
    assert fake.calls[STEP] == 2 and fake.temperatures[STEP] == {0.0} and fake.temperatures["profile"] == {0.7}
    bench = read_bench(tmp_path / "bench")
    assert [a.name for a in bench.attributes if a.name not in NAMES] == ["Sourdough timing"]
    by_problem = {s.problem.id: s for s in bench.scenarios}
    assert "Use of analogies" in by_problem["toy-0"].relevant_attributes
    assert "Sourdough timing" in by_problem["toy-1"].relevant_attributes
    for s in bench.scenarios:
        used = {i.attribute for i in s.profile.items} | {c.attribute for c in s.rubric}
        assert used <= set(s.relevant_attributes) <= {a.name for a in bench.attributes}
    profile_prompts = [p for step, p in fake.prompts if step == "profile"]
    assert not any("Preference for analogical explanations" in p for p in profile_prompts)
    assert any("Use of analogies" in p and "What is 0 + 2 * 3?" in p for p in profile_prompts)

    section = bench.manifest["attribute_dedup"]["semantic"]
    assert section["enabled"] and section["counts"] == {"catalogue": 1, "build": 0, "new": 1, "failed": 0}
    merged = section["decisions"][0]
    assert (merged["proposed"], merged["canonical"], merged["kind"]) == (
        "Preference for analogical explanations",
        "Use of analogies",
        "catalogue",
    )
    assert merged["model"] == "mockllm/a" and merged["reason"]
    assert bench.manifest["usage"]["per_step"][STEP]["calls"] == 2
    assert bench.manifest["new_attributes"] == ["Sourdough timing"] == [a.name for a in bench.attributes[-1:]]
    assert report.dedup == bench.manifest["attribute_dedup"]

    again = Recording(handlers(), stable_names=True)
    rerun = _build(again, tmp_path / "bench")
    assert again.total == 0
    assert rerun.dedup["semantic"]["decisions"] == section["decisions"]
    assert rerun.usage["per_step"][STEP]["cached"] == 2


def test_switched_off_it_makes_no_call_and_keeps_both_proposals(tmp_path: Path) -> None:
    fake = FakeBuilder({"relevance": proposing})  # no semantic_dedup handler: a call would fail the build
    report = _build(fake, tmp_path / "bench", semantic_dedup={"enabled": False})
    assert fake.calls[STEP] == 0 and not report.failures
    assert report.manifest["new_attributes"] == ["Preference for analogical explanations", "Sourdough timing"]
    assert report.dedup["semantic"] == {**report.dedup["semantic"], "enabled": False}
    assert "decisions" not in report.dedup["semantic"]


def test_the_flag_and_the_dry_run_estimate(tmp_path: Path, monkeypatch: Any) -> None:
    import typer

    seen: list[BuildConfig] = []
    monkeypatch.setattr("prefdisco.builder.cli._print_estimate", lambda console, config: seen.append(config))
    app = typer.Typer()
    register(app)
    data = tmp_path / "quiz.jsonl"
    data.write_text("".join(f'{{"q": "What is {i} + {i}?", "a": "{2 * i}"}}\n' for i in range(1, 4)))
    args = ["build", "--benchmark", "generic", "--source", str(data), "--map", "question=q,answer=a"]
    args += ["--problems", "2", "--model", "mockllm/model", "--out", str(tmp_path / "bench"), "--dry-run"]
    for extra, enabled in (([], True), (["--no-semantic-dedup"], False), (["--semantic-dedup"], True)):
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        assert seen[-1].semantic_dedup.enabled is enabled
    monkeypatch.undo()

    def rows(config: BuildConfig) -> str:
        console = Console(width=250, record=True)
        _print_estimate(console, config)
        return console.export_text()

    text = rows(seen[0])
    line = next(row for row in text.splitlines() if STEP in row)
    n_problems, max_new = 2, seen[0].relevance.max_new
    assert f"│ {n_problems * max_new} " in line and "at most 3 per problem" in line
    assert semantic_dedup.estimate(CATALOGUE, 4, 3, SemanticDedupConfig())["calls"] == 12
    assert "off (--no-semantic-dedup)" in rows(seen[1])
    assert not (tmp_path / "bench").exists()
