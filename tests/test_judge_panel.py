"""Judge panels and repeats: panel scores and PrefAlign by hand, distinct seeds and cache keys per judging, the
single-judge fingerprint, the attribute table's judge/repeat rows and their consumers, and the reliability
statistics (Krippendorff's ordinal α, repeat noise, the length-bias probe) checked against hand computations."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

import prefdisco.cli as cli
from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.analysis.report.build import build_report
from prefdisco.analysis.stats.panel import judged_rows
from prefdisco.analysis.stats.trials import average_attribute_trials
from prefdisco.analysis.validity.judges import (
    MIN_UNITS,
    judge_agreement,
    judge_noise,
    judge_pref_align,
    length_bias,
    ordinal_alpha,
    response_lengths,
)
from prefdisco.errors import UserError
from prefdisco.evaluation.running.guard import guard_run
from prefdisco.evaluation.running.task import build_task
from prefdisco.evaluation.settings.config import PANEL_DEFAULTS, UNCOMPARED_SETTINGS, RunConfig
from prefdisco.results.table import load_results
from prefdisco.schema import AttributeJudgement
from prefdisco.scoring.panel import Judging, combine, judging_name, panel_roles
from prefdisco.seeds import call_seed, seed_scope
from scripted import Call, Scripted, constant, make_scenario
from test_report import HEADER, write_csv

SEED = 7
SCOPE = seed_scope(SEED)  # the seed scope of a run with --seed 7
# make_scenario(): weights 0.5 / 0.3 / 0.2 for these three criteria, in this order
DEPTH, ANALOGIES, VOCAB = "Explanation depth", "Use of analogies", "Technical vocabulary"


def named_judge(name: str, respond, calls: list[Call]) -> Model:
    """A mockllm judge called ``mockllm/<name>`` (judges of a panel have their own model names)."""

    def outputs(input: list[ChatMessage], tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        call = Call(list(input), config)
        calls.append(call)
        output = ModelOutput.from_content(model=name, content=respond(call))
        output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return output

    return get_model(f"mockllm/{name}", custom_outputs=outputs, memoize=False)


def criterion_of(call: Call) -> str:
    return next(a for a in (DEPTH, ANALOGIES, VOCAB) if f"The preference: {a}" in call.text)


def seed_of(sid: str, name: str, condition: str = "baseline", epoch: int = 1) -> int:
    return call_seed(SCOPE, sid, condition, epoch, name)


def run_task(tmp_path: Path, roles: dict[str, Model], cache_scope: str | None = None, **settings):
    """One baseline sample judged by the panel ``roles`` (the rubric only: no quality call, beside the point here)."""
    config = RunConfig(seed=SEED, **{"quality": False, **settings})
    task = build_task([make_scenario()], config, "baseline", cache_scope=cache_scope)
    [log] = inspect_eval(
        task,
        model=Scripted(constant("The answer is B: 3 trips.")).model,
        model_roles={"user": Scripted(constant("Short.")).model, **roles},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    return log


# ---- the panel score and PrefAlign ---------------------------------------------------------------------------


def test_two_judges_two_repeats_give_the_panel_mean_and_its_pref_align(tmp_path):
    # judge A (grader): repeat 1 scores 4 / 2 / 5, repeat 2 scores 2 / 3 / garbage;
    # judge B (grader_2): both repeats 5 / 1 / garbage. Repeats are told apart by the seed each one sends.
    a_seeds = {seed_of("s1", "grader"): 1, seed_of("s1", "grader#2"): 2}
    b_seeds = {seed_of("s1", "grader_2"): 1, seed_of("s1", "grader_2#2"): 2}
    a_scores = {1: {DEPTH: 4, ANALOGIES: 2, VOCAB: 5}, 2: {DEPTH: 2, ANALOGIES: 3, VOCAB: None}}
    b_scores = {1: {DEPTH: 5, ANALOGIES: 1, VOCAB: None}, 2: {DEPTH: 5, ANALOGIES: 1, VOCAB: None}}

    def scripted(seeds, scores):
        def respond(call: Call) -> str:
            score = scores[seeds[call.config.seed]][criterion_of(call)]
            return "no idea" if score is None else json.dumps({"score": score})

        return respond

    a_calls: list[Call] = []
    b_calls: list[Call] = []
    roles = {
        "grader": named_judge("judge-a", scripted(a_seeds, a_scores), a_calls),
        "grader_2": named_judge("judge-b", scripted(b_seeds, b_scores), b_calls),
    }
    log = run_task(tmp_path, roles, judge_panel=["judge-b"], judge_repeats=2)
    score = log.samples[0].scores["prefdisco_scorer"]

    # depth: A (4+2)/2 = 3, B 5 -> 4; analogies: A 2.5, B 1 -> 1.75; vocabulary: A 5 (its only valid), B none -> 5
    assert score.value["pref_align"] == pytest.approx(0.5 * 4 + 0.3 * 1.75 + 0.2 * 5)  # 3.525
    assert score.value["judge_invalid"] == 3  # A's second vocabulary, B's two
    records = score.metadata["judgements"]
    assert len(records) == 2 * 2 * 3
    seen = {(r["judge"], r["judge_role"], r["repeat"], r["attribute"]): r["score"] for r in records}
    assert seen[("mockllm/judge-a", "grader", 2, ANALOGIES)] == 3
    assert seen[("mockllm/judge-b", "grader_2", 1, VOCAB)] is None
    # each judging sent its own seed: 2 seeds per judge, none shared
    assert {c.config.seed for c in a_calls} == set(a_seeds) and {c.config.seed for c in b_calls} == set(b_seeds)


def test_combine_rule_on_hand_made_judgings():
    def js(*scores):
        return [
            AttributeJudgement(attribute=f"a{i}", weight=w, score=s, valid=s is not None)
            for i, (w, s) in enumerate(zip((0.6, 0.4), scores, strict=True))
        ]

    judgings = [
        Judging("m1", "grader", 1, js(1, None)),
        Judging("m1", "grader", 2, js(2, None)),
        Judging("m1", "grader", 3, js(4, None)),
        Judging("m2", "grader_2", 1, js(5, None)),
    ]
    a0, a1 = combine(judgings)
    # a0: judge 1's repeat-mean (1+2+4)/3 = 7/3, judge 2's 5 -> (7/3 + 5)/2 = 11/3 (not the flat mean 3)
    assert a0.score == pytest.approx(11 / 3) and a0.valid
    assert a1.score is None and not a1.valid  # no valid judgement at all: invalid, as a single judge's would be
    # one judge, one repeat: the judgement itself
    single = js(3, None)
    assert combine([Judging("m", "grader", 1, single)]) == single


def test_roles_and_judging_names():
    assert panel_roles(3) == ("grader", "grader_2", "grader_3")
    assert [judging_name("grader", 1), judging_name("grader", 2), judging_name("grader_2", 3)] == [
        "grader",
        "grader#2",
        "grader_2#3",
    ]


# ---- repeats: own seeds, own cache entries, and a rerun makes no call ----------------------------------------


def test_repeats_send_distinct_seeds_and_cache_keys_and_a_rerun_makes_no_call(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[Call] = []
    grader = named_judge("judge-r", lambda call: '{"score": 3}', calls)
    run_task(tmp_path / "first", {"grader": grader}, judge_repeats=3, cache_scope="run-scope-1")
    # three real re-judgements of each of the three criteria (the same prompt, so only the seed and the cache
    # scope tell them apart), each repeat with its own seed
    assert len(calls) == 9
    expected = {seed_of("s1", n) for n in ("grader", "grader#2", "grader#3")}
    assert len(expected) == 3 and {c.config.seed for c in calls} == expected
    for criterion in (DEPTH, ANALOGIES, VOCAB):
        assert {c.config.seed for c in calls if criterion_of(c) == criterion} == expected

    log = run_task(tmp_path / "second", {"grader": grader}, judge_repeats=3, cache_scope="run-scope-1")
    assert len(calls) == 9  # every judgement replayed from the run-scoped cache
    assert log.samples[0].scores["prefdisco_scorer"].value["pref_align"] == pytest.approx(3.0)


# ---- run settings: the single-judge fingerprint, the guard, validation ----------------------------------------


def config(tmp_path: Path, **changes) -> RunConfig:
    return replace(RunConfig(models=["m"], user_model="u", grader_model="g", log_dir=tmp_path), **changes)


def test_a_single_judge_fingerprint_is_unchanged_and_a_panel_adds_its_keys(tmp_path):
    single = config(tmp_path).fingerprint("set", 2)
    assert not set(PANEL_DEFAULTS) & set(single)
    assert single["grader_model"] == "g"
    panel = config(tmp_path, judge_panel=["h"], judge_repeats=2).fingerprint("set", 2)
    changed = {"protocol_id": panel["protocol_id"]}  # repeats change the protocol (evaluation/protocol/protocols.py)
    assert panel == {**single, "judge_panel": ["h"], "judge_repeats": 2, **changed}
    assert panel["protocol_id"] != single["protocol_id"] == "default-v1.0"
    repeated = config(tmp_path, judge_repeats=3).fingerprint("set", 2)
    assert repeated == {**single, "judge_repeats": 3, "protocol_id": repeated["protocol_id"]}
    assert config(tmp_path).role_config("grader_2") == config(tmp_path).role_config("grader")


def test_the_guard_refuses_to_mix_single_and_panel_runs_in_one_folder(tmp_path):
    def guard(folder, **changes):
        guard_run(folder, config(folder, **changes).fingerprint("set", 2), UNCOMPARED_SETTINGS, PANEL_DEFAULTS)

    guard(tmp_path / "a")
    guard(tmp_path / "a")  # a single-judge run resumes
    with pytest.raises(UserError, match=r"judge_panel = \[\], not \[\"h\"\]"):
        guard(tmp_path / "a", judge_panel=["h"])
    guard(tmp_path / "b", judge_panel=["h"], judge_repeats=2)
    guard(tmp_path / "b", judge_panel=["h"], judge_repeats=2)  # so does a panel run
    with pytest.raises(UserError, match=r"judge_panel = \[\"h\"\], not \[\]"):
        guard(tmp_path / "b")
    with pytest.raises(UserError, match="judge_repeats = 2, not 1"):
        guard(tmp_path / "b", judge_panel=["h"])


def test_validation_refuses_a_repeated_judge_and_zero_repeats(tmp_path):
    with pytest.raises(UserError, match="--judge-model: g given more than once"):
        config(tmp_path, judge_panel=["h", "g"]).validate()
    with pytest.raises(UserError, match="--judge-repeats: expected at least 1, got 0"):
        config(tmp_path, judge_repeats=0).validate()


# ---- Krippendorff's ordinal α --------------------------------------------------------------------------------


def test_ordinal_alpha_perfect_agreement_is_one():
    assert ordinal_alpha(np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]])).value == pytest.approx(1.0)


def test_ordinal_alpha_of_a_small_table_matches_the_definition_by_hand():
    # units (rater 1, rater 2): (1,1) (2,2) (3,3) (1,2) (2,3). Coincidences o11 = o22 = o33 = 2, o12 = o21 = o23 =
    # o32 = 1, so n1 = 3, n2 = 4, n3 = 3, n = 10. Ordinal distances: d12 = d23 = (3 + 4 - 3.5)^2 = 12.25 (and
    # (4 + 3 - 3.5)^2), d13 = (3 + 4 + 3 - 3)^2 = 49. Observed sum o*d = 2 * 12.25 + 2 * 12.25 = 49; expected
    # sum n_c n_k d = 2 * (12 * 12.25 + 12 * 12.25 + 9 * 49) = 1470. alpha = 1 - (n - 1) * 49 / 1470 = 0.7.
    result = ordinal_alpha(np.array([[1, 2, 3, 1, 2], [1, 2, 3, 2, 3]], dtype=float))
    assert result.value == pytest.approx(0.7) and result.n_units == 5 and result.reason is None
    # a unit only one rater scored is not pairable and leaves alpha alone
    padded = ordinal_alpha(np.array([[1, 2, 3, 1, 2, 5], [1, 2, 3, 2, 3, np.nan]]))
    assert padded.value == pytest.approx(0.7) and padded.n_units == 5


def test_ordinal_alpha_is_null_with_a_reason():
    assert "single rater" in ordinal_alpha(np.array([[1, 2, 3, 4, 5]])).reason
    few = ordinal_alpha(np.array([[1, 2, 3, 4], [1, 2, 3, 4]]))
    assert few.value is None and few.n_units == 4 and f"need at least {MIN_UNITS}" in few.reason
    flat = ordinal_alpha(np.full((2, 6), 3.0))
    assert flat.value is None and "no variation" in flat.reason


# ---- the attribute table with judges and repeats, and its consumers -------------------------------------------

ATTR_HEADER = ["model", "task", "scenario_id", "mode", "fixed_k", "attribute", "weight", "score"]
MODES = ("baseline", "discovery", "oracle")


def results_rows(failed: tuple[str, str] | None = None) -> list[list[object]]:
    rows = []
    for i, sid in enumerate(("s1", "s2", "s3")):
        for j, mode in enumerate(MODES):
            bad = int((sid, mode) == failed)
            rows.append(["m-a", "openai", "t1", sid, mode, "", 2 + j + 0.1 * i, 1, j, 0, 100, 50, bad])
    return rows


# (scenario, mode) -> (clarity score, depth score) of the first judge
FIRST = {
    (s, m): (1 + (i + j) % 5, 1 + (2 * i + j) % 5)
    for i, s in enumerate(("s1", "s2", "s3"))
    for j, m in enumerate(MODES)
}


def single_rows() -> list[list[object]]:
    return [
        ["m-a", "t1", s, m, "", attr, w, FIRST[(s, m)][k]]
        for (s, m) in FIRST
        for k, (attr, w) in enumerate((("clarity", 0.6), ("depth", 0.4)))
    ]


def make_run(folder: Path, attribute_rows: list[list[object]], header: list[str]) -> Path:
    folder.mkdir(parents=True)
    write_csv(folder / "results.csv", HEADER, results_rows())
    write_csv(folder / "attributes.csv", header, attribute_rows)
    with (folder / "transcripts.jsonl").open("w") as fh:
        for (s, m), _ in FIRST.items():
            obj = {"model": "m-a", "task": "t1", "scenario_id": s, "mode": m, "fixed_k": None, "epoch": 1}
            fh.write(json.dumps({**obj, "messages": [], "final_response": "x" * (10 * len(s + m))}) + "\n")
    return folder


def test_consumers_compute_the_same_numbers_for_a_single_judge_table_with_or_without_the_columns(tmp_path):
    plain = build_report(
        load_results(make_run(tmp_path / "plain", single_rows(), ATTR_HEADER)), n_boot=0, figures=False
    )
    with_cols = [[*row, "openai/judge", 1] for row in single_rows()]
    tagged = build_report(
        load_results(make_run(tmp_path / "tagged", with_cols, [*ATTR_HEADER, "judge", "repeat"])),
        n_boot=0,
        figures=False,
    )
    pd.testing.assert_frame_equal(plain.attribute_scores, tagged.attribute_scores)
    pd.testing.assert_frame_equal(plain.worst_attributes, tagged.worst_attributes)
    assert [e.attributes for e in plain.examples] == [e.attributes for e in tagged.examples]
    skip = {"source", "judge_agreement", "judge_noise", "length_bias", "effective_judges"}  # they name the judge
    assert {k: v for k, v in plain.summary.items() if k not in skip} == {
        k: v for k, v in tagged.summary.items() if k not in skip
    }
    # one row per criterion, as before: clarity in baseline over s1..s3 is (1 + 2 + 3) / 3
    row = plain.attribute_scores.query("mode == 'baseline' and attribute == 'clarity'").iloc[0]
    assert row["n"] == 3 and row["mean_score"] == pytest.approx(2.0)
    # a table without the column: one judge, "grader"; one point per response, per condition
    assert {c: v["n"] for c, v in plain.summary["length_bias"]["grader"].items()} == {
        "baseline": 3,
        "discovery": 3,
        "oracle": 3,
    }
    assert tagged.summary["judge_agreement"]["m-a"]["t1"]["alpha"] is None
    assert "single judge" in tagged.summary["judge_agreement"]["m-a"]["t1"]["reason"]


def panel_rows() -> list[list[object]]:
    """Judge A as FIRST in repeat 1 and FIRST + 1 (capped at 5) in repeat 2; judge B gives 5 everywhere but has
    no valid depth score for (s1, baseline)."""
    rows = []
    for (s, m), scores in FIRST.items():
        for k, (attr, w) in enumerate((("clarity", 0.6), ("depth", 0.4))):
            rows.append(["m-a", "t1", s, m, "", attr, w, scores[k], "A", 1])
            rows.append(["m-a", "t1", s, m, "", attr, w, min(scores[k] + 1, 5), "A", 2])
            b = "" if (s, m, attr) == ("s1", "baseline", "depth") else 5
            rows.append(["m-a", "t1", s, m, "", attr, w, b, "B", 1])
    return rows


def test_panel_tables_average_each_judges_repeats_then_the_judges(tmp_path):
    data = load_results(make_run(tmp_path / "panel", panel_rows(), [*ATTR_HEADER, "judge", "repeat"]))
    assert len(data.attributes) == 9 * 2 * 3
    per_criterion = average_attribute_trials(data.attributes, data.results).astype({"scenario_id": str, "mode": str})
    assert len(per_criterion) == 9 * 2 and "judge" not in per_criterion.columns
    got = per_criterion.set_index(["scenario_id", "mode", "attribute"])["score"]
    # (s1, baseline): clarity A (1 + 2)/2 = 1.5, B 5 -> 3.25; depth A (1 + 2)/2 = 1.5, B invalid -> 1.5
    assert got[("s1", "baseline", "clarity")] == pytest.approx(3.25)
    assert got[("s1", "baseline", "depth")] == pytest.approx(1.5)
    # (s3, discovery): clarity FIRST = 1 + 3 % 5 = 4 -> A (4 + 5)/2 = 4.5, B 5 -> 4.75
    assert got[("s3", "discovery", "clarity")] == pytest.approx(4.75)
    report = build_report(data, n_boot=0, figures=False)
    baseline_clarity = report.attribute_scores.query("mode == 'baseline' and attribute == 'clarity'").iloc[0]
    # FIRST clarity in baseline is 1, 2, 3 -> A's means 1.5, 2.5, 3.5, each with B's 5 -> 3.25, 3.75, 4.25
    assert baseline_clarity["mean_score"] == pytest.approx((3.25 + 3.75 + 4.25) / 3)

    # per-judge PrefAlign from the attribute table: (s1, baseline) A = 0.6 * 1.5 + 0.4 * 1.5, B = 5 (depth invalid)
    att = judged_rows(data.attributes, data.results)
    per_judge = judge_pref_align(att).set_index(["scenario_id", "mode", "judge"])["pref_align"]
    assert per_judge[("s1", "baseline", "A")] == pytest.approx(1.5)
    assert per_judge[("s1", "baseline", "B")] == pytest.approx(5.0)


def test_agreement_noise_and_length_bias_by_hand(tmp_path):
    # five units of one model x task, one attribute; judge A repeats r1 = 1 2 3 1 2 and r2 = 1 2 3 2 3 (the
    # alpha = 0.7 table above); judge B gives A's repeat-means 1 2 3 1.5 2.5 exactly (perfect agreement)
    r1, r2 = [1, 2, 3, 1, 2], [1, 2, 3, 2, 3]
    sids = [f"s{i}" for i in range(1, 6)]
    rows = []
    for sid, a1, a2 in zip(sids, r1, r2, strict=True):
        rows += [
            ["m-a", "t1", sid, "baseline", "", "clarity", 1.0, a1, "A", 1],
            ["m-a", "t1", sid, "baseline", "", "clarity", 1.0, a2, "A", 2],
            ["m-a", "t1", sid, "baseline", "", "clarity", 1.0, (a1 + a2) / 2, "B", 1],
        ]
    folder = tmp_path / "run"
    folder.mkdir()
    results = [["m-a", "openai", "t1", s, "baseline", "", 2, 1, 0, 0, 1, 1, 0] for s in sids]
    write_csv(folder / "results.csv", HEADER, results)
    write_csv(folder / "attributes.csv", [*ATTR_HEADER, "judge", "repeat"], rows)
    lengths = [10, 30, 20, 40, 50]
    with (folder / "transcripts.jsonl").open("w") as fh:
        for sid, n in zip(sids, lengths, strict=True):
            obj = {"model": "m-a", "task": "t1", "scenario_id": sid, "mode": "baseline", "fixed_k": None}
            fh.write(json.dumps({**obj, "epoch": 1, "final_response": "y" * n}) + "\n")
    data = load_results(folder / "results.csv")
    att = judged_rows(data.attributes, data.results)

    [cell] = judge_agreement(att).to_dict("records")
    assert cell["n_judges"] == 2 and cell["n_units"] == 5 and cell["alpha"] == pytest.approx(1.0)

    noise = judge_noise(att).set_index("judge")
    assert noise.loc["A", "alpha"] == pytest.approx(0.7)
    # per-unit SD (ddof 1) of (1,1) (2,2) (3,3) (1,2) (2,3): 0, 0, 0, 1/sqrt 2, 1/sqrt 2
    assert noise.loc["A", "mean_sd"] == pytest.approx(2 / math.sqrt(2) / 5)
    assert pd.isna(noise.loc["B", "alpha"]) and "one repeat" in noise.loc["B", "reason"]

    found = response_lengths(data.transcripts, None)
    assert sorted(found["length"]) == sorted(lengths)
    bias = length_bias(att, found).set_index(["judge", "mode"])
    # B's scores 1 2 3 1.5 2.5 -> ranks 1 3 5 2 4; lengths 10 30 20 40 50 -> ranks 1 3 2 4 5;
    # d = 0 0 3 -2 -1, sum d^2 = 14, rho = 1 - 6 * 14 / (5 * 24) = 0.3
    assert bias.loc[("B", "baseline"), "n"] == 5 and bias.loc[("B", "baseline"), "spearman"] == pytest.approx(0.3)
    assert 0 < bias.loc[("B", "baseline"), "p"] <= 1

    summary = build_report(data, n_boot=0, figures=False).summary
    assert summary["judge_agreement"] == {"m-a": {"t1": {"alpha": pytest.approx(1.0), "n_units": 5, "reason": None}}}
    assert summary["judge_noise"]["A"]["alpha"] == pytest.approx(0.7)
    assert summary["judge_noise"]["B"] == {"alpha": None, "mean_sd": None, "reason": noise.loc["B", "reason"]}
    assert summary["length_bias"]["B"]["baseline"]["spearman"] == pytest.approx(0.3)
    assert summary["length_bias"]["B"]["baseline"]["n"] == 5


def test_the_validity_line_gives_the_length_probes_own_reason(tmp_path):
    """Issue 49: the Validity table said length bias "needs transcripts" of a run whose transcripts were there and
    whose probe had too few responses for a ρ (two here). The line now gives the reason the probe
    computed: too few responses, no transcripts, or no variation."""

    def reading(n: int, transcripts: bool, lengths=(10, 30, 20), scores=(1, 2, 3)):
        folder = tmp_path / f"run-{n}-{transcripts}-{lengths[0]}-{scores[0]}"
        folder.mkdir()
        sids = [f"s{i}" for i in range(1, n + 1)]
        results = [["m-a", "openai", "t1", s, "baseline", "", 2, 1, 0, 0, 1, 1, 0] for s in sids]
        write_csv(folder / "results.csv", HEADER, results)
        rows = [["m-a", "t1", s, "baseline", "", "clarity", 1.0, v, "A", 1] for s, v in zip(sids, scores, strict=False)]
        write_csv(folder / "attributes.csv", [*ATTR_HEADER, "judge", "repeat"], rows)
        if transcripts:
            with (folder / "transcripts.jsonl").open("w") as fh:
                for sid, length in zip(sids, lengths, strict=False):
                    key = {"model": "m-a", "task": "t1", "scenario_id": sid, "mode": "baseline", "fixed_k": None}
                    fh.write(json.dumps({**key, "epoch": 1, "final_response": "y" * length}) + "\n")
        report = build_report(load_results(folder / "results.csv"), n_boot=0, figures=False)
        return next(r for r in report.readings if r.instrument.startswith("Length bias"))

    few = reading(2, transcripts=True)  # transcripts beside the results, two responses: too few for a rank correlation
    assert "transcripts" not in few.finding + few.reading
    assert few.finding == "not measured: at most 2 scored response(s) with a length per judge and condition"
    assert few.reading.startswith("Spearman's ρ needs at least 3 responses in a condition")
    none = reading(3, transcripts=False)
    assert none.finding == "not measured: no transcripts" and "needs transcripts" in none.reading
    flat = reading(3, transcripts=True, lengths=(20, 20, 20))
    assert flat.finding == "not measured: no variation in scores or in response lengths"
    assert reading(3, transcripts=True).finding == "|ρ| at most 0.50"  # ranks 1 2 3 against 1 3 2: 1 - 6·2/24


def test_a_failed_rows_judgements_are_left_out_of_the_reliability_statistics(tmp_path):
    folder = make_run(tmp_path / "run", panel_rows(), [*ATTR_HEADER, "judge", "repeat"])
    write_csv(folder / "results.csv", HEADER, results_rows(failed=("s2", "oracle")))
    data = load_results(folder / "results.csv")
    att = judged_rows(data.attributes, data.results)
    assert len(att) == 8 * 2 * 3
    assert not ((att["scenario_id"] == "s2") & (att["mode"] == "oracle")).any()


def test_a_bad_repeat_cell_is_one_line_naming_row_and_column(tmp_path):
    rows = [[*row, "A", 1] for row in single_rows()]
    rows[2][-1] = 0
    folder = make_run(tmp_path / "run", rows, [*ATTR_HEADER, "judge", "repeat"])
    with pytest.raises(UserError, match=r"attributes.csv: data row 3: column repeat: 0 is not an integer >= 1"):
        load_results(folder / "results.csv")


# ---- a CLI run of a two-judge panel on the fault mock, then its report -------------------------------------------


def test_cli_panel_run_writes_rows_per_judge_and_the_report_writes_judge_agreement(tmp_path, monkeypatch):
    cli._register()
    scenarios = tagged_scenarios(4)
    bench = write_scenarios(tmp_path / "scenarios.jsonl", scenarios)
    with MockOpenAI() as mock:
        for key, value in mock.env("mock").items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
        monkeypatch.setenv("INSPECT_DISPLAY", "none")
        first, second = f"openai-api/mock/m{mock.port}", f"openai-api/mock/j{mock.port}"
        args = ["eval", str(bench), "--model", first, "--log-dir", str(tmp_path / "run"), "--display", "none"]
        args += ["--modes", "baseline", "--judge-model", first, "--judge-model", second, "--judge-repeats", "2"]
        result = CliRunner().invoke(cli.app, args)
        before = mock.stats()
        judge_calls = before["by_role"].get("judge", 0)
        for log in (tmp_path / "run").rglob("*.eval"):  # lose the logs: every sample runs again, from the cache
            log.unlink()
        rerun = CliRunner().invoke(cli.app, args)
        calls_again = mock.stats()["completions"] - before["completions"]
    assert result.exit_code == 0, result.output
    assert rerun.exit_code == 0, rerun.output
    assert calls_again == 0  # both judges' calls replayed from their own cache scopes

    n_criteria = sum(len(s.rubric) for s in scenarios)
    attributes = pd.read_csv(tmp_path / "run" / "attributes.csv")
    assert judge_calls == 2 * 2 * n_criteria  # every judge scored every criterion twice (own seeds, own cache)
    assert sorted(attributes["judge"].unique()) == sorted([first, second])
    assert attributes.groupby(["judge", "repeat"]).size().to_dict() == {
        (j, r): n_criteria for j in (first, second) for r in (1, 2)
    }
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["grader_model"] == first and run["judge_panel"] == [second] and run["judge_repeats"] == 2

    # PrefAlign of each results row is over the panel scores: the mean of the two judges per criterion
    results = pd.read_csv(tmp_path / "run" / "results.csv")
    assert set(results["grader_model"]) == {first}
    for row in results.itertuples():
        rows = attributes[attributes["scenario_id"] == row.scenario_id]
        panel = rows.groupby("attribute").agg(weight=("weight", "first"), score=("score", "mean"))
        expected = (panel["weight"] * panel["score"]).sum() / panel["weight"].sum()
        assert row.pref_align == pytest.approx(expected), row

    report = CliRunner().invoke(
        cli.app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep"), "--no-figures"]
    )
    assert report.exit_code == 0, report.output
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    [task] = {s.problem.benchmark for s in scenarios}
    cell = summary["judge_agreement"][first][task]
    # the mock's judge reply is a function of the prompt alone, so the two judges agree exactly
    assert cell == {"alpha": pytest.approx(1.0), "n_units": n_criteria, "reason": None}
    assert set(summary["length_bias"]) == {first, second}
    assert summary["length_bias"][first]["baseline"]["n"] == len(scenarios)  # one point per response
    # the mock's reply ignores the seed, so the repeats agree exactly too
    assert summary["judge_noise"][second] == {"alpha": pytest.approx(1.0), "mean_sd": 0.0, "reason": None}


# ---- one rule: PrefAlign's judgements, and a further judge beside them ----------------------------------------


def assert_pref_align_is_its_judgements(results: pd.DataFrame, attributes: pd.DataFrame) -> int:
    """For every scored results row: ``pref_align`` = Σ w · (mean score over its ``in_pref_align`` judgements) over
    the criteria with a valid one, ÷ Σ w of those criteria; ``pref_align_coverage`` = that Σ w ÷ Σ w of all its
    criteria. Returns how many rows were checked."""
    key = ["model", "task", "scenario_id", "mode", "epoch"]
    mine = attributes.loc[attributes["in_pref_align"] == 1]
    checked = 0
    for row in results.loc[results["pref_align"].notna()].to_dict("records"):
        hit = np.logical_and.reduce([mine[k].astype(str) == str(row[k]) for k in key])
        per = mine.loc[hit].groupby("attribute").agg(weight=("weight", "first"), score=("score", "mean"))
        valid = per.dropna(subset=["score"])
        assert len(per) and len(valid), row
        expected = (valid["weight"] * valid["score"]).sum() / valid["weight"].sum()
        assert row["pref_align"] == pytest.approx(expected), row
        assert row["pref_align_coverage"] == pytest.approx(valid["weight"].sum() / per["weight"].sum()), row
        checked += 1
    return checked


def run_with_a_further_judge(folder: Path) -> Path:
    """Judge A (the run's, two repeats: FIRST, then FIRST + 1 capped at 5) makes PrefAlign; judge B, added
    afterwards (``in_pref_align`` 0), scores 5 everywhere. results.csv holds A's PrefAlign."""
    rows, results = [], []
    for (s, m), (clarity, depth) in FIRST.items():
        for attr, w, score in (("clarity", 0.6, clarity), ("depth", 0.4, depth)):
            rows.append(["m-a", "t1", s, m, "", attr, w, score, "A", 1, 1])
            rows.append(["m-a", "t1", s, m, "", attr, w, min(score + 1, 5), "A", 2, 1])
            rows.append(["m-a", "t1", s, m, "", attr, w, 5, "B", 1, 0])
        mean = {"c": (clarity + min(clarity + 1, 5)) / 2, "d": (depth + min(depth + 1, 5)) / 2}
        results.append(["m-a", "openai", "t1", s, m, "", 0.6 * mean["c"] + 0.4 * mean["d"], 1, 0, 0, 10, 5, 0])
    folder.mkdir(parents=True)
    write_csv(folder / "results.csv", HEADER, results)
    write_csv(folder / "attributes.csv", [*ATTR_HEADER, "judge", "repeat", "in_pref_align"], rows)
    return folder


def test_a_further_judge_is_reported_beside_pref_align_never_inside_it(tmp_path):
    from prefdisco.analysis.validity.human_ratings import criterion_scores
    from prefdisco.analysis.validity.variance import variance_parts

    data = load_results(run_with_a_further_judge(tmp_path / "run"))
    report = build_report(data, n_boot=0, figures=False)
    # the attribute table reads A only: clarity in baseline is 1, 2, 3 -> A's repeat-means 1.5, 2.5, 3.5 -> 2.5
    # (with B's 5 mixed in it would be 3.75)
    scores = report.attribute_scores.set_index(["mode", "attribute"])
    assert scores.loc[("baseline", "clarity"), "mean_score"] == pytest.approx(2.5)
    assert scores.loc[("baseline", "clarity"), "n"] == 3
    # discovery depth: FIRST depth 2, 4, 1 (1 + (2i + 1) % 5) -> A 2.5, 4.5, 1.5 -> 17/6; the worst attributes agree
    assert scores.loc[("discovery", "depth"), "mean_score"] == pytest.approx(17 / 6)
    worst = report.worst_attributes.set_index("attribute")
    assert worst.loc["depth", "mean_score"] == pytest.approx(17 / 6)
    # calibration's items: the panel score of A alone; (s1, baseline, clarity): A 1 and 2 -> 1.5
    items = criterion_scores(data, "run").set_index(["scenario_id", "mode", "attribute"])["score"]
    assert items[("s1", "baseline", "clarity")] == pytest.approx(1.5)
    # the judge part of the variance: A's repeats only. Baseline: repeat PrefAligns (0.6 c + 0.4 d) differ by
    # 1, 1 and 0.6 (s3's depth 5 is capped) -> sample variances 1/2, 1/2, 0.18 -> mean 0.39333, / R = 2
    parts = variance_parts(data.results, data.attributes).set_index("mode")
    assert parts.loc["baseline", "judge"] == pytest.approx((0.5 + 0.5 + 0.18) / 3 / 2)
    assert parts.loc["baseline", "repeats"] == 2
    # agreement reads every judge
    assert report.part("judges").agreement.iloc[0]["n_judges"] == 2
    # B has a PrefAlign column of its own beside the run's: 5 everywhere; the run's is results.csv's mean
    further = report.part("further_judges").set_index("mode")
    base = [0.6 * 1.5 + 0.4 * 1.5, 0.6 * 2.5 + 0.4 * 3.5, 0.6 * 3.5 + 0.4 * 5]  # A's PrefAlign of s1..s3
    assert further.loc["baseline", "pref_align"] == pytest.approx(sum(base) / 3)
    assert further.loc["baseline", "pref_align[B]"] == pytest.approx(5.0)
    assert further.loc["baseline", "n[B]"] == 3
    assert report.summary["pref_align_by_judge"]["m-a"]["t1"]["baseline"] == {
        "run": pytest.approx(sum(base) / 3),
        "B": pytest.approx(5.0),
    }
    assert "table_pref_align_by_judge.csv" in report.tables
    from prefdisco.analysis.report.render import render_html, render_markdown

    line = next(x for x in render_markdown(report).splitlines() if x.startswith("| m-a | t1 | baseline |"))
    assert line == f"| m-a | t1 | baseline | {sum(base) / 3:.3f} (n=3) | 5.000 (n=3) |"
    assert "<h3>PrefAlign by judge</h3>" in render_html(report)


def test_length_bias_is_one_point_per_response_within_each_condition(tmp_path):
    # two criteria per response; baseline responses of 10 / 20 / 30 characters score (1, 1) (3, 1) (3, 3): means
    # 1, 2, 3 -> rho 1; oracle responses of 100 / 200 / 300 score (5, 5) (4, 4) (3, 4): means 5, 4, 3.5 -> rho -1.
    # Pooled, the oracle's long, high-scored responses would make length look rewarded.
    plan = {
        ("s1", "baseline"): (10, (1, 1)), ("s2", "baseline"): (20, (3, 1)), ("s3", "baseline"): (30, (3, 3)),
        ("s1", "oracle"): (100, (5, 5)), ("s2", "oracle"): (200, (4, 4)), ("s3", "oracle"): (300, (3, 4)),
    }  # fmt: skip
    folder = tmp_path / "run"
    folder.mkdir()
    results = [["m-a", "openai", "t1", s, m, "", 3, 1, 0, 0, 1, 1, 0] for s, m in plan]
    rows = [
        ["m-a", "t1", s, m, "", attr, 0.5, score, "A", 1]
        for (s, m), (_, scores) in plan.items()
        for attr, score in zip(("clarity", "depth"), scores, strict=True)
    ]
    write_csv(folder / "results.csv", HEADER, results)
    write_csv(folder / "attributes.csv", [*ATTR_HEADER, "judge", "repeat"], rows)
    with (folder / "transcripts.jsonl").open("w") as fh:
        for (s, m), (n, _) in plan.items():
            key = {"model": "m-a", "task": "t1", "scenario_id": s, "mode": m, "fixed_k": None, "epoch": 1}
            fh.write(json.dumps({**key, "final_response": "z" * n}) + "\n")
    summary = build_report(load_results(folder / "results.csv"), n_boot=0, figures=False).summary["length_bias"]
    assert set(summary) == {"A"} and set(summary["A"]) == {"baseline", "oracle"}
    assert summary["A"]["baseline"]["n"] == 3 and summary["A"]["baseline"]["spearman"] == pytest.approx(1.0)
    assert summary["A"]["oracle"]["n"] == 3 and summary["A"]["oracle"]["spearman"] == pytest.approx(-1.0)


def score_alone(folder: Path, respond) -> dict:
    """The results row of one baseline sample of ``make_scenario()`` scored by ``prefdisco_scorer`` with a judge
    replying ``respond(call)`` (a bare task: the scorer and the results reader, nothing of the run's settings)."""
    from inspect_ai import Task
    from inspect_ai.solver import generate

    from prefdisco.dialogue.scenario import scenario_sample
    from prefdisco.results.logs import results_from_logs
    from prefdisco.scoring.scorer import prefdisco_scorer

    task = Task(
        dataset=[scenario_sample(make_scenario())],
        solver=generate(),
        scorer=prefdisco_scorer(audit=False, quality=False),
        metadata={"prefdisco_mode": "baseline"},
    )
    grader = named_judge("judge-c", respond, [])
    [log] = inspect_eval(task, model=Scripted(constant("B")).model, model_roles={"grader": grader},
                         log_dir=str(folder), display="none")  # fmt: skip
    assert log.status == "success", log.error
    [row] = results_from_logs(folder).results.to_dict("records")
    return row


def test_a_response_judged_on_less_than_half_its_weight_is_unscored(tmp_path):
    # only the vocabulary criterion (weight 0.2) gets a valid score: coverage 0.2, never a PrefAlign of 5
    row = score_alone(tmp_path / "light", lambda c: json.dumps({"score": 5}) if criterion_of(c) == VOCAB else "?")
    assert row["pref_align"] is None and row["pref_align_coverage"] == pytest.approx(0.2)
    assert row["pref_align_reason"] == "judge coverage" and row["failed"] == 0 and row["judge_invalid"] == 2
    # depth (0.5) alone is half the weight: scored, and its score is the PrefAlign
    row = score_alone(tmp_path / "half", lambda c: json.dumps({"score": 4}) if criterion_of(c) == DEPTH else "?")
    assert row["pref_align"] == pytest.approx(4.0) and row["pref_align_coverage"] == pytest.approx(0.5)
    assert row["pref_align_reason"] is None
