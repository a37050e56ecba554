"""The embedded SmolLM2 model through inspect: constrained outputs, log-probabilities, and the demo end to end.

These run the real llama.cpp model (a few minutes in all on 2 cores).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from inspect_ai.model import GenerateConfig, get_model
from typer.testing import CliRunner

from prefdisco import cli
from prefdisco.demo import demo_scenarios
from prefdisco.dialogue.protocol import PROTOCOL_GBNF, parse_turn
from prefdisco.scoring.geval import logprob_weighted_score
from prefdisco.scoring.judge import CriterionScore
from prefdisco.structured import parse_reply, response_schema

pytestmark = pytest.mark.embedded

SCORE_SCHEMA = response_schema(CriterionScore, "criterion_score", strict=True)


def parse_score(text: str) -> int:
    return parse_reply(text, CriterionScore).score


@pytest.fixture(scope="module")
def smollm2():
    return get_model("prefdisco/smollm2", config=GenerateConfig(temperature=0.7, seed=1))


def test_schema_constrained_score_always_parses(smollm2):
    async def ask(i: int) -> str:
        out = await smollm2.generate(
            f"Rate from 1 to 5 how polite this reply is: 'Go away #{i}.' Reply with JSON.",
            config=GenerateConfig(max_tokens=16, response_schema=SCORE_SCHEMA),
        )
        return out.completion

    # concurrent requests are serialized inside the provider (two concurrent llama.cpp calls crash it)
    replies = asyncio.run(_gather([ask(i) for i in range(4)]))
    assert all(parse_score(r) in {1, 2, 3, 4, 5} for r in replies), replies


def test_protocol_grammar_gives_a_protocol_turn(smollm2):
    out = asyncio.run(
        smollm2.generate(
            "Help me work out 7 x 12. You may first ask me a question.",
            config=GenerateConfig(max_tokens=48, extra_body={"grammar": PROTOCOL_GBNF}),
        )
    )
    assert out.completion.startswith(("QUESTION: ", "ANSWER: "))
    assert not parse_turn(out.completion).unmarked


def test_log_probabilities_give_a_weighted_judge_score(smollm2):
    out = asyncio.run(
        smollm2.generate(
            "Rate from 1 to 5 how clear this is: 'Water boils at 100 C at sea level.' Reply with JSON.",
            config=GenerateConfig(
                max_tokens=16, temperature=0, response_schema=SCORE_SCHEMA, logprobs=True, top_logprobs=5
            ),
        )
    )
    content = out.choices[0].logprobs.content
    assert "".join(lp.token for lp in content) in out.completion
    assert all(lp.logprob <= 0 and len(lp.top_logprobs) == 5 for lp in content)
    weighted = logprob_weighted_score(out)
    assert weighted is not None and 1.0 <= weighted <= 5.0
    # greedy decoding picked the most likely digit, so the hard score is the top candidate at that step
    digit = next(lp for lp in content if lp.token.strip() in "12345" and lp.token.strip())
    assert parse_score(out.completion) == int(digit.token.strip())


def test_unknown_embedded_model_is_a_clear_error(tmp_path):
    scenarios = tmp_path / "scenarios.jsonl"
    scenarios.write_text(demo_scenarios()[0].model_dump_json() + "\n")
    log_dir = tmp_path / "run"
    result = CliRunner().invoke(
        _app(), ["eval", str(scenarios), "--model", "prefdisco/nosuch", "--log-dir", str(log_dir)]
    )
    assert result.exit_code == 2
    assert "unknown embedded model 'nosuch'" in result.output
    assert not log_dir.exists()


def test_prompt_cache_reads_only_what_differs_and_answers_the_same():
    """Three prompts that share a long beginning (as one scenario's judge prompts do in three conditions): with
    the cache of states the second and third read only their ends, and greedy answers equal the uncached ones."""
    from inspect_ai.model import ChatMessageUser

    rubric = " ".join(f"Criterion {i}: the response explains step {i} calmly and in plain words." for i in range(30))
    ends = ["Response: the answer is 4.", "Response: it is 5, since two and three make five.", "Response: 4."]
    config = GenerateConfig(max_tokens=16, temperature=0.0, seed=1)

    def answers(prompt_cache: int):
        model = get_model("prefdisco/smollm2", prompt_cache=prompt_cache, memoize=False)
        calls = [model.generate([ChatMessageUser(content=f"{rubric}\n{end}")], config=config) for end in ends]
        outputs = [asyncio.run(call) for call in calls]
        return [o.completion for o in outputs], [o.usage.input_tokens for o in outputs], model.api.loaded.llama.cache

    uncached, prompt_tokens, no_cache = answers(0)
    cached, _, cache = answers(8)
    assert no_cache is None
    assert cached == uncached
    assert cache.hits == 2  # the first prompt finds nothing; the second and third restore a state
    # each restored state covered the shared beginning (the rubric: most of the prompt), never more than the prompt
    shared = min(prompt_tokens) - 20
    assert 2 * shared <= cache.tokens_skipped <= sum(prompt_tokens[1:])


async def _gather(coros):
    return await asyncio.gather(*coros)


def _app():
    cli._register()
    return cli.app


def test_a_benchmark_folder_of_the_demos_scenario_resumes_its_run_without_a_call(readme_demo, tmp_path):
    """The README's quick demo ran its one scenario through the four conditions on the embedded model in a process of
    its own (``readme_demo``). Here a benchmark folder holding that scenario, run with the demo's settings into the
    demo's folder, resumes it: no embedded-model call, the same table (written again, unchanged); and the report
    stage reads the run. (In place: a run's cache scope is its folder's path, so a copy elsewhere is another run.)"""
    import pandas as pd
    from inspect_ai.log import list_eval_logs, read_eval_log

    from prefdisco.benchio import read_bench, write_bench
    from prefdisco.builder.catalogue import load_catalogue
    from prefdisco.demo import demo_plan
    from prefdisco.evaluation.run import run_conditions
    from prefdisco.models.llama_cpp import embedded_calls
    from readme_world import DEMO_FOLDER

    demo = readme_demo / DEMO_FOLDER
    scenarios, config = demo_plan(demo, limit=1, display="none")
    results = pd.read_csv(demo / "logs" / "results.csv")
    assert sorted(results["mode"]) == ["baseline", "discovery", "fixed_k", "oracle"]
    assert (results["family"] == "local").all() and (results["failed"] == 0).all()
    assert (results["input_tokens"] > 0).all() and (results["grader_input_tokens"] > 0).all()
    for name in ("results.csv", "results.parquet", "attributes.csv", "transcripts.jsonl"):
        assert (demo / "logs" / name).is_file()
    # the embedded model answered and judged every sample: at least an answer and a judge call each
    for info in list_eval_logs(str(demo / "logs")):
        sample = read_eval_log(info).samples[0]
        assert sum(1 for e in sample.events if e.event == "model") >= 2

    bench = tmp_path / "bench"
    personas = list({s.persona.id: s.persona for s in scenarios[:1]}.values())
    write_bench(bench, scenarios[:1], personas, load_catalogue(), {"source": "test"})
    before = embedded_calls()
    again = run_conditions(read_bench(bench).scenarios, config, label="demo")
    assert embedded_calls() - before == 0
    pd.testing.assert_frame_equal(
        again.results.reset_index(drop=True), pd.read_parquet(demo / "logs" / "results.parquet")
    )

    report = tmp_path / "report"
    result = CliRunner().invoke(_app(), ["report", str(demo / "logs"), "--out", str(report), "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    summary = json.loads((report / "summary.json").read_text())
    assert set(summary["mean_questions"]) == {"prefdisco/smollm2"}
    assert "data:image/png;base64," in (report / "report.html").read_text()


def test_grammar_keeps_lists_distinct_and_strings_within_the_cap():
    """A catalogue-name list marked uniqueItems cannot repeat a name (SmolLM2 otherwise fills a list with one
    name), and ``max_string_chars`` bounds every free string."""
    from prefdisco.builder.relevance import relevance_schema
    from prefdisco.structured import generate_structured

    names = tuple(f"attribute {c}" for c in "abcdefghij")
    schema = relevance_schema(names, 4, 6, 1)
    model = get_model("prefdisco/smollm2", config=GenerateConfig(temperature=0.7, seed=3), max_string_chars=30)
    prompt = "Pick the attributes relevant to teaching long division, and propose one new attribute. JSON only."
    result = asyncio.run(generate_structured(model, prompt, schema, config=GenerateConfig(max_tokens=400), retries=0))
    relevant = result.value.relevant
    assert 4 <= len(relevant) <= 6 and len(set(relevant)) == len(relevant)
    assert relevant == sorted(relevant, key=names.index)  # written in catalogue order, each at most once
    for attribute in result.value.new_attributes:
        assert len(attribute.name) <= 30 and len(attribute.description) <= 30
        assert all(len(v) <= 30 for v in attribute.values)


def test_build_on_the_embedded_model_validates_and_resumes(tmp_path, shared_dir):
    """`prefdisco build` with SmolLM2: one MMLU problem x one persona, validated, and a rerun calls nothing. Strings
    are capped at 40 characters (at 80 the rubrics ran from 700 to 3,000 tokens, 30 to 95 s). Each of the build's
    calls carries its own seed (``seeds.step_seed``): before, what the model wrote depended on the calls its process
    had made, and in the suite's order it once wrote five identical rubric levels, which validate refuses. The
    relevance call picks 4 attributes and proposes none (``--max-new-attributes 0``): it wrote 222 tokens with up to
    8 and 3 new ones, 37 without. SmolLM2 writing new-attribute proposals (names, descriptions, values) under the
    grammar is another test's claim: ``test_grammar_keeps_lists_distinct_and_strings_within_the_cap``."""
    from prefdisco.benchio import read_bench

    library = tmp_path / "personas.jsonl"
    library.write_text(demo_scenarios()[0].persona.model_dump_json() + "\n")
    out = tmp_path / "bench"
    argv = [
        "build", "--benchmark", "mmlu", "--source", str(shared_dir / "data/benchmarks/mmlu/test.jsonl"),
        "--problems", "1", "--personas-per-problem", "1", "--persona-library", str(library),
        "--model", "prefdisco/smollm2", "-M", "max_string_chars=40", "--max-attributes", "3", "--min-relevant", "4",
        "--max-relevant", "4", "--max-new-attributes", "0", "--out", str(out),
    ]  # fmt: skip
    first = CliRunner().invoke(_app(), argv)
    assert first.exit_code == 0, first.output
    assert "wrote 1 scenario to" in first.output
    checked = CliRunner().invoke(_app(), ["validate", str(out)])
    assert checked.exit_code == 0, checked.output
    scenario = read_bench(out).scenarios[0]
    assert len(scenario.profile.items) >= 3 and len(scenario.rubric) == len(scenario.profile.items)
    assert abs(sum(i.weight for i in scenario.profile.items) - 1) < 1e-9
    manifest = json.loads((out / "manifest.json").read_text())
    assert "prefdisco/smollm2" in json.dumps(manifest)

    again = CliRunner().invoke(_app(), argv)
    assert again.exit_code == 0, again.output
    assert "0 model call(s) this run" in again.output
