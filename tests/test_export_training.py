"""``prefdisco export-training``: SFT, DPO and verl files read back with the rows a hand count expects, from a
run folder written directly (results.csv + transcripts.jsonl) and from one made by running scripted models."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from inspect_ai import eval_set
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.benchio import write_bench
from prefdisco.dialogue.wrong_answers import wrong_answer, wrong_answer_key
from prefdisco.env.verl import PrefDiscoInteraction
from prefdisco.errors import UserError
from prefdisco.evaluation.running.evalset import build_tasks
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.policies.fit import fit_source
from prefdisco.policies.model import write_policy
from prefdisco.results.contract import REQUIRED_RESULT_COLUMNS
from prefdisco.results.logs import results_from_logs, write_tables
from prefdisco.schema import Attribute, Problem
from prefdisco.seeds import seed_scope
from prefdisco.training.export import ExportOptions, export_training
from scripted import Call, Scripted, constant, make_persona, make_scenario

SYSTEM = {"discovery": "Ask, then answer.", "fixed_k": "Ask exactly K.", "oracle": "You know the person."}


def problem(pid: str) -> Problem:
    return Problem(
        id=pid,
        benchmark="demo",
        domain="math",
        question=f"What is {pid}?",
        choices=["1", "2"],
        answer="B",
        answer_type="letter",
    )


def messages(sid: str, mode: str, final: str) -> list[dict[str, str]]:
    out = [{"role": "system", "content": SYSTEM[mode]}] if mode in SYSTEM else []
    out.append({"role": "user", "content": f"PROBLEM {sid}"})
    if mode in ("discovery", "fixed_k"):
        out += [{"role": "assistant", "content": "QUESTION: how?"}, {"role": "user", "content": "Briefly."}]
    return [*out, {"role": "assistant", "content": f"ANSWER: {final}"}]


# (scenario, model, mode, fixed_k, epoch, pref_align, correct, failed, has transcript)
TRIALS = [
    ("s1", "m-a", "baseline", None, 1, 4.5, 1, 0, True),  # sft: kept
    ("s1", "m-a", "discovery", None, 1, 3.0, 1, 0, True),  # sft: PrefAlign 3.0 < 4
    ("s1", "m-a", "oracle", None, 1, 5.0, 0, 0, True),  # sft: not correct
    ("s1", "m-a", "wrong_persona", None, 1, 5.0, 1, 0, True),  # excluded mode (the control)
    ("s1", "m-a", "discovery", None, 2, 4.0, 1, 0, True),  # sft: kept (4.0 is the threshold itself)
    ("s2", "m-a", "baseline", None, 1, None, None, 1, True),  # failed
    ("s2", "m-a", "discovery", None, 1, 4.2, 1, 0, False),  # no transcript
    ("s2", "m-b", "discovery", None, 1, 2.0, 0, 0, True),  # sft: not correct
    ("s2", "m-b", "fixed_k", 2, 1, 4.8, 1, 0, True),  # sft: kept
]


def final_text(sid: str, model: str, mode: str, epoch: int) -> str:
    return f"B for {sid} by {model} in {mode} #{epoch}"


def write_run(folder: Path) -> Path:
    rows, transcripts = [], []
    for sid, model, mode, k, epoch, pref, correct, failed, has_transcript in TRIALS:
        rows.append(
            {
                "model": model, "family": "mock", "task": "demo", "scenario_id": sid, "mode": mode,
                "fixed_k": k, "epoch": epoch, "pref_align": pref, "correct": correct, "n_questions": 1,
                "judge_invalid": 0, "input_tokens": 10, "output_tokens": 5, "failed": failed,
            }
        )  # fmt: skip
        if has_transcript:
            final = final_text(sid, model, mode, epoch)
            key = {"model": model, "task": "demo", "scenario_id": sid, "mode": mode, "fixed_k": k, "epoch": epoch}
            transcripts.append({**key, "messages": messages(sid, mode, final), "final_response": final})
    folder.mkdir(parents=True)
    frame = pd.DataFrame(rows)
    assert set(REQUIRED_RESULT_COLUMNS) <= set(frame.columns)
    frame.to_csv(folder / "results.csv", index=False)
    (folder / "transcripts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcripts))
    return folder


def write_bench_of(folder: Path, ids: list[str]) -> Path:
    scenarios = [make_scenario(sid, problem=problem(f"p-{sid}")) for sid in ids]
    names = sorted({i.attribute for s in scenarios for i in s.profile.items})
    attributes = [Attribute(name=n, category="cognitive", description="d", value_space=["a", "b"]) for n in names]
    write_bench(folder, scenarios, [make_persona()], attributes)
    return folder


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def test_sft_keeps_correct_well_aligned_dialogues_and_counts_the_rest(app, tmp_path):
    run = write_run(tmp_path / "run")
    out = tmp_path / "sft.jsonl"
    result = CliRunner().invoke(app, ["export-training", str(run), "--format", "sft", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    kept = [(r["metadata"]["scenario_id"], r["metadata"]["mode"], r["metadata"]["epoch"]) for r in rows]
    assert kept == [("s1", "baseline", 1), ("s1", "discovery", 2), ("s2", "fixed_k", 1)]
    # the dialogue as the assistant saw it, ending with its final turn
    assert rows[1]["messages"] == messages("s1", "discovery", final_text("s1", "m-a", "discovery", 2))
    assert rows[1]["messages"][-1] == {"role": "assistant", "content": "ANSWER: B for s1 by m-a in discovery #2"}
    assert rows[2]["metadata"]["fixed_k"] == 2 and rows[2]["metadata"]["pref_align"] == 4.8
    meta = json.loads((tmp_path / "sft.jsonl.meta.json").read_text())
    assert meta["rows"] == 3 and meta["export"] == "sft"
    assert meta["options"] == {"modes": ["baseline", "discovery", "oracle", "fixed_k"], "min_pref_align": 4.0}
    # 9 trials = 3 kept + 1 control + 1 failed + 1 without transcript + 2 incorrect + 1 below 4.0
    assert meta["counts"] == {
        "trials": 9,
        "excluded_mode": 1,
        "excluded_failed": 1,
        "excluded_no_transcript": 1,
        "excluded_not_correct": 2,
        "excluded_pref_align": 1,
    }
    # a higher threshold and fewer modes
    options = ExportOptions(format="sft", min_pref_align=4.6, modes=("fixed_k", "baseline"))
    meta = export_training(run, out, options)
    assert [r["metadata"]["mode"] for r in read_jsonl(out)] == ["fixed_k"]
    assert meta["counts"]["excluded_mode"] == 6 and meta["counts"]["excluded_pref_align"] == 1


def test_sft_appends_the_final_response_when_the_transcript_stops_before_it(tmp_path):
    run = write_run(tmp_path / "run")
    lines = read_jsonl(run / "transcripts.jsonl")
    for line in lines:
        line["messages"] = line["messages"][:-1]
    (run / "transcripts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    export_training(run, tmp_path / "sft.jsonl", ExportOptions(format="sft"))
    first = read_jsonl(tmp_path / "sft.jsonl")[0]
    assert first["messages"] == [
        {"role": "user", "content": "PROBLEM s1"},
        {"role": "assistant", "content": "B for s1 by m-a in baseline #1"},
    ]


# (scenario, model, mode, fixed_k, epoch, pref_align, correct, failed, has transcript, user's reply, final answer)
DPO_TRIALS = [
    ("s1", "m-a", "oracle", None, 1, 4.8, 1, 0, True, "", "O1"),
    ("s1", "m-a", "oracle", None, 2, 3.2, 1, 0, True, "", "O2"),
    ("s1", "m-a", "oracle", None, 3, 4.0, 0, 0, True, "", "O3"),
    ("s1", "m-a", "oracle", None, 4, 2.0, 1, 0, True, "", "O1"),  # O1 again: one response, PrefAlign 3.4
    ("s1", "m-a", "oracle", None, 5, 1.5, 1, 0, True, "", "O5"),
    ("s1", "m-a", "oracle", None, 6, 3.0, 0, 0, True, "", "O6"),
    ("s1", "m-a", "discovery", None, 1, 4.5, 1, 0, True, "Briefly.", "D1"),
    ("s1", "m-a", "discovery", None, 2, 2.5, 1, 0, True, "Briefly.", "D2"),  # the same dialogue as #1
    ("s1", "m-a", "discovery", None, 3, 1.0, 1, 0, True, "In depth.", "D3"),  # went otherwise: alone
    ("s1", "m-a", "fixed_k", 2, 1, 1.0, 1, 0, True, "Briefly.", "K1"),  # another system prompt: alone
    ("s1", "m-a", "baseline", None, 1, 5.0, 1, 0, True, "", "B1"),  # not a default dpo mode
    ("s1", "m-a", "wrong_persona", None, 1, 1.0, 1, 0, True, "", "W1"),  # the control: never by default
    ("s2", "m-a", "oracle", None, 1, 4.9, 1, 0, True, "", "P1"),
    ("s2", "m-b", "oracle", None, 1, 2.0, 1, 0, True, "", "P2"),  # another model, the same context
    ("s2", "m-b", "oracle", None, 2, None, None, 0, True, "", "P3"),  # not scored
    ("s2", "m-a", "discovery", None, 1, None, None, 1, True, "Briefly.", "D"),  # failed
    ("s2", "m-b", "fixed_k", 2, 1, 4.0, 1, 0, False, "Briefly.", "K"),  # no transcript
]


def write_dpo_run(folder: Path, trials: list[tuple], problem_text: dict[str, str] | None = None) -> Path:
    rows, transcripts = [], []
    for sid, model, mode, k, epoch, pref, correct, failed, has_transcript, reply, final in trials:
        rows.append(
            {
                "model": model, "family": "mock", "task": "demo", "scenario_id": sid, "mode": mode,
                "fixed_k": k, "epoch": epoch, "pref_align": pref, "correct": correct, "n_questions": 1,
                "judge_invalid": 0, "input_tokens": 10, "output_tokens": 5, "failed": failed,
            }
        )  # fmt: skip
        if has_transcript:
            chat = messages(sid, mode, final)
            if reply:
                chat[-2] = {"role": "user", "content": reply}
            if problem_text:
                chat = [{**m, "content": problem_text[sid]} if m["content"] == f"PROBLEM {sid}" else m for m in chat]
            key = {"model": model, "task": "demo", "scenario_id": sid, "mode": mode, "fixed_k": k, "epoch": epoch}
            transcripts.append({**key, "messages": chat, "final_response": final})
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    (folder / "transcripts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcripts))
    return folder


def swapped(rows: list[dict]) -> list[tuple]:
    """Rows whose prompt also carries the pair the other way round."""
    pairs = {(json.dumps(r["prompt"]), r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows}
    return [(p, c, j) for p, c, j in pairs if (p, j, c) in pairs]


def test_dpo_pairs_responses_made_in_the_same_context(app, tmp_path):
    run = write_dpo_run(tmp_path / "run", DPO_TRIALS)
    out = tmp_path / "dpo.jsonl"
    result = CliRunner().invoke(app, ["export-training", str(run), "--format", "dpo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)

    def pair(r: dict) -> tuple:
        m = r["metadata"]
        return (m["scenario_id"], r["chosen"][0]["content"], r["rejected"][0]["content"], m["basis"], m["margin"])

    # s1 discovery, the "Briefly." dialogue: D1 4.5 over D2 2.5. s1 oracle, by PrefAlign O3 4.0 (wrong), O1 3.4
    # (4.8 and 2.0), O2 3.2, O6 3.0 (wrong), O5 1.5: O1 and O2 each over O6 (wrong, PrefAlign no higher) and over
    # O5 (gaps 1.9, 1.7); O1-O2 is 0.2 apart, O3 and O6 are wrong and every correct one is behind them: 6 pairs
    # make no row. s2 oracle: m-a's P1 4.9 over m-b's P2 2.0.
    assert [pair(r) for r in rows] == [
        ("s1", "ANSWER: D1", "ANSWER: D2", "pref_align", 2.0),
        ("s1", "ANSWER: O1", "ANSWER: O6", "correct", pytest.approx(0.4)),
        ("s1", "ANSWER: O1", "ANSWER: O5", "pref_align", pytest.approx(1.9)),
        ("s1", "ANSWER: O2", "ANSWER: O6", "correct", pytest.approx(0.2)),
        ("s1", "ANSWER: O2", "ANSWER: O5", "pref_align", pytest.approx(1.7)),
        ("s2", "ANSWER: P1", "ANSWER: P2", "pref_align", pytest.approx(2.9)),
    ]
    # the prompt is the context: the dialogue up to the final answer, or the oracle's system prompt and the problem
    assert rows[0]["prompt"] == messages("s1", "discovery", "D1")[:-1]
    assert rows[0]["prompt"][-1] == {"role": "user", "content": "Briefly."}
    assert rows[1]["prompt"] == [
        {"role": "system", "content": "You know the person."},
        {"role": "user", "content": "PROBLEM s1"},
    ]
    merged = rows[1]["metadata"]["chosen"]
    assert (merged["epoch"], merged["pref_align"], merged["n_trials"]) == (1, pytest.approx(3.4), 2)
    assert rows[5]["metadata"]["chosen"]["model"] == "m-a" and rows[5]["metadata"]["rejected"]["model"] == "m-b"
    # per trial, O1 (4.8) over O2 (3.2) and O2 over O1 (2.0) would both pass the margin: one prompt, swapped
    assert swapped(rows) == []
    meta = json.loads((tmp_path / "dpo.jsonl.meta.json").read_text())
    assert meta["options"] == {
        "modes": ["discovery", "oracle", "fixed_k"], "min_pref_align": None, "margin": 1.0, "pushback_pairs": False,
    }  # fmt: skip
    assert meta["counts"] == {
        "trials": 17,
        "excluded_mode": 2,
        "excluded_failed": 1,
        "excluded_no_transcript": 1,
        "excluded_unscored": 1,
        "merged_identical_response": 1,
        "excluded_alone_in_context": 2,
        "contexts": 5,
        "scenarios": 2,
        "pairs": 6,
        "pairs_without_preference": 6,
    }
    # a wider margin keeps the 2.0 and 2.9 gaps and the correctness pairs; a floor on the chosen keeps 4.5 and 4.9
    export_training(run, out, ExportOptions(format="dpo", margin=2.0))
    assert [pair(r)[1:4] for r in read_jsonl(out)] == [
        ("ANSWER: D1", "ANSWER: D2", "pref_align"),
        ("ANSWER: O1", "ANSWER: O6", "correct"),
        ("ANSWER: O2", "ANSWER: O6", "correct"),
        ("ANSWER: P1", "ANSWER: P2", "pref_align"),
    ]
    export_training(run, out, ExportOptions(format="dpo", min_pref_align=4.5))
    assert [pair(r)[1] for r in read_jsonl(out)] == ["ANSWER: D1", "ANSWER: P1"]


def test_dpo_drops_pairs_one_prompt_holds_both_ways(tmp_path):
    """Baseline's prompt is the problem alone, shared by every persona of it: two personas ranking X and Y
    oppositely give one prompt both ways, and neither row is written; s5 agrees with s3, kept once."""
    trials = [
        ("s3", "m-a", "baseline", None, 1, 4.5, 1, 0, True, "", "X"),
        ("s3", "m-a", "baseline", None, 2, 2.0, 1, 0, True, "", "Y"),
        ("s4", "m-a", "baseline", None, 1, 1.5, 1, 0, True, "", "X"),
        ("s4", "m-a", "baseline", None, 2, 4.0, 1, 0, True, "", "Y"),
        ("s5", "m-a", "baseline", None, 1, 5.0, 1, 0, True, "", "X"),
        ("s5", "m-a", "baseline", None, 2, 1.0, 1, 0, True, "", "Z"),
        ("s6", "m-a", "baseline", None, 1, 5.0, 1, 0, True, "", "X"),
        ("s6", "m-a", "baseline", None, 2, 1.0, 1, 0, True, "", "Z"),
    ]
    run = write_dpo_run(tmp_path / "run", trials, {s: "PROBLEM shared" for s in ("s3", "s4", "s5", "s6")})
    meta = export_training(run, tmp_path / "dpo.jsonl", ExportOptions(format="dpo", modes=("baseline",)))
    rows = read_jsonl(tmp_path / "dpo.jsonl")
    assert [(r["metadata"]["scenario_id"], r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows] == [
        ("s5", "ANSWER: X", "ANSWER: Z"),
    ]
    assert rows[0]["prompt"] == [{"role": "user", "content": "PROBLEM shared"}]
    assert meta["counts"]["dropped_contradicting_pair"] == 2 and meta["counts"]["skipped_duplicate_pair"] == 1
    assert meta["counts"]["pairs"] == 1 and swapped(rows) == []


def test_verl_writes_one_row_per_scenario_in_verls_layout(app, tmp_path):
    run = write_run(tmp_path / "run")
    bench = write_bench_of(tmp_path / "bench", ["s1", "s2", "s3"])
    out = tmp_path / "rl.parquet"
    args = ["export-training", str(run), "--format", "verl", "--out", str(out), "--bench", str(bench)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    rows = table.to_pylist()
    assert len(rows) == 2  # s1 and s2 are in the run; s3 is only in the benchmark
    # s1's prompt: its first discovery trial's opening (m-a, epoch 1); s2's: m-b's (m-a's has no transcript)
    assert rows[0] == {
        "data_source": "prefdisco/demo",
        "prompt": [{"role": "system", "content": "Ask, then answer."}, {"role": "user", "content": "PROBLEM s1"}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": "B"},
        "extra_info": {
            "scenario_id": "s1", "benchmark": "demo", "problem_id": "p-s1", "answer_type": "letter",
            "split": "train", "index": 0, "interaction_kwargs": {"name": "prefdisco", "scenario_id": "s1"},
        },
    }  # fmt: skip
    assert rows[1]["extra_info"]["scenario_id"] == "s2" and rows[1]["extra_info"]["index"] == 1
    meta = json.loads((tmp_path / "rl.parquet.meta.json").read_text())
    assert meta["options"] == {
        "bench": str(bench), "policy": None, "prompt_mode": "discovery", "train_fraction": None, "split_seed": None,
    }  # fmt: skip
    assert meta["counts"] == {"trials": 9, "scenarios": 2, "split_train": 2}
    assert (
        meta["split"] is None and meta["files"] == {"train": str(out)} and not (tmp_path / "rl.eval.parquet").exists()
    )

    # with a policy, its split by problem: of the benchmark's 3 problems floor(0.5 · 3) = 1 trains
    policy = fit_source(bench, fraction=0.5, seed=0)
    train = {p.id for p in policy.split.train_problems}
    assert len(train) == 1
    write_policy(policy, tmp_path / "policy.json")
    export_training(run, out, ExportOptions(format="verl", bench=bench, policy=tmp_path / "policy.json"))
    sides = {
        side: [r["extra_info"] for r in pq.read_table(path).to_pylist()]
        for side, path in (("train", out), ("eval", tmp_path / "rl.eval.parquet"))
    }
    assert sorted(i["scenario_id"] for infos in sides.values() for i in infos) == ["s1", "s2"]
    for side, infos in sides.items():
        assert all(i["split"] == side and (i["problem_id"] in train) == (side == "train") for i in infos)
        assert [i["index"] for i in infos] == list(range(len(infos)))
    again = export_training(run, out, ExportOptions(format="verl", bench=bench, train_fraction=0.5, split_seed=0))
    assert again["split"]["train_problems"] == [f"demo/{pid}" for pid in sorted(train)]
    other = write_bench_of(tmp_path / "other", ["s1", "s2", "s3", "s4", "s5"])  # not the policy's source
    with pytest.raises(UserError, match="--policy: its training problems are not the split of --bench"):
        export_training(run, out, ExportOptions(format="verl", bench=other, policy=tmp_path / "policy.json"))
    # the baseline opening has no system prompt
    export_training(run, out, ExportOptions(format="verl", bench=bench, prompt_mode="baseline"))
    assert pq.read_table(out).to_pylist()[0]["prompt"] == [{"role": "user", "content": "PROBLEM s1"}]


def test_verl_split_is_the_interactions_split(app, tmp_path):
    """Train and evaluation rows go to separate files by the interaction's own split (train_fraction, split_seed,
    over every scenario of the benchmark): the real PrefDiscoInteraction with split "train" accepts every train
    row and refuses every evaluation row; with split "eval" the reverse."""
    problems = [problem(f"q{i}") for i in range(12)]
    scenarios = [make_scenario(f"s{i}{x}", problem=p) for i, p in enumerate(problems) for x in "ab"]
    attributes = [
        Attribute(name=n, category="cognitive", description="d", value_space=["a", "b"])
        for n in sorted({i.attribute for s in scenarios for i in s.profile.items})
    ]
    bench = tmp_path / "bench"
    write_bench(bench, scenarios, [make_persona()], attributes)
    # the run evaluated the first 10 problems (20 scenarios); q10 and q11 are only in the benchmark
    trials = [(s.id, "m-a", "discovery", None, 1, 4.0, 1, 0, True, "Briefly.", "B") for s in scenarios[:20]]
    run = write_dpo_run(tmp_path / "run", trials)
    out = tmp_path / "train.parquet"
    args = ["export-training", str(run), "--format", "verl", "--out", str(out), "--bench", str(bench)]
    result = CliRunner().invoke(app, [*args, "--train-fraction", "0.5", "--split-seed", "3"])
    assert result.exit_code == 0, result.output
    files = {"train": out, "eval": tmp_path / "train.eval.parquet"}
    rows = {side: pq.read_table(path).to_pylist() for side, path in files.items()}
    meta = json.loads((tmp_path / "train.parquet.meta.json").read_text())
    # floor(0.5 · 12) = 6 of the benchmark's 12 problems train (5 of the run's 10 would be a split of the run)
    assert len(meta["split"]["train_problems"]) == 6 and meta["split"]["seed"] == 3
    assert meta["counts"]["split_train"] + meta["counts"]["split_eval"] == 20 == sum(len(r) for r in rows.values())
    assert meta["rows"] == len(rows["train"]) and meta["files"] == {k: str(v) for k, v in files.items()}
    eval_meta = json.loads((tmp_path / "train.eval.parquet.meta.json").read_text())
    assert eval_meta["side"] == "eval" and eval_meta["rows"] == len(rows["eval"])
    for side, side_rows in rows.items():  # the two personas of a problem are on one side
        assert all(r["extra_info"]["split"] == side for r in side_rows) and len(side_rows) % 2 == 0
    assert rows["train"] and rows["eval"]

    user, grader = Scripted(constant("Briefly.")), Scripted(constant('{"score": 5}'))
    for side, other in (("train", "eval"), ("eval", "train")):
        interaction = PrefDiscoInteraction(
            {
                "scenarios": str(bench), "user_model": user.model, "judge_model": grader.model,
                "train_fraction": 0.5, "split_seed": 3, "split": side,
            }
        )  # fmt: skip
        for row in rows[side]:
            kwargs = row["extra_info"]["interaction_kwargs"]
            assert asyncio.run(interaction.start_interaction(None, **kwargs))
        for row in rows[other]:
            kwargs = row["extra_info"]["interaction_kwargs"]
            with pytest.raises(UserError, match="side of the split"):
                asyncio.run(interaction.start_interaction(None, **kwargs))
    assert user.calls == [] and grader.calls == []  # starting an episode asks no model


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--format", "csv"], "--format: expected one of sft, dpo, verl, got 'csv'"),
        (["--format", "verl"], "--bench: verl rows need the gold answers"),
        (["--format", "dpo", "--margin", "0"], "--margin: expected a PrefAlign difference > 0, got 0.0"),
        (["--format", "sft", "--min-pref-align", "7"], "--min-pref-align: expected a PrefAlign in [1, 5], got 7.0"),
        (["--format", "sft", "--modes", "baseline,chat"], "unknown mode 'chat'"),
        (["--format", "verl", "--bench", "b", "--train-fraction", "1.5"], "--train-fraction: expected a fraction"),
        (["--format", "verl", "--bench", "b", "--split-seed", "2"], "--split-seed/--eval-out: give --train-fraction"),
        (["--format", "sft", "--pushback-pairs"], "--pushback-pairs: pairs of replies to pushback are DPO rows"),
        (
            ["--format", "verl", "--bench", "b", "--policy", "p.json", "--train-fraction", "0.5"],
            "--policy: the split is the policy's own",
        ),
    ],
)
def test_bad_options_are_one_line_errors(app, tmp_path, args, expected):
    run = write_run(tmp_path / "run")
    result = CliRunner().invoke(app, ["export-training", str(run), "--out", str(tmp_path / "x.jsonl"), *args])
    assert result.exit_code == 2, result.output
    assert expected in result.output and len(result.output.strip().splitlines()) == 1


def test_bad_run_folders_are_one_line_errors(tmp_path):
    run = write_run(tmp_path / "run")
    (run / "transcripts.jsonl").unlink()
    with pytest.raises(UserError, match=r"no transcripts\.jsonl beside the results table"):
        export_training(run, tmp_path / "x.jsonl", ExportOptions(format="sft"))
    (run / "transcripts.jsonl").write_text('{"model": "m-a"}\n[1, 2]\n')
    with pytest.raises(UserError, match=r"transcripts\.jsonl:2: expected one JSON object per line"):
        export_training(run, tmp_path / "x.jsonl", ExportOptions(format="sft"))
    (run / "transcripts.jsonl").write_text("")
    bench = write_bench_of(tmp_path / "bench", ["s1"])  # s2 missing
    with pytest.raises(UserError, match="scenario s2 of the run is not in the benchmark"):
        export_training(run, tmp_path / "x.parquet", ExportOptions(format="verl", bench=bench))
    with pytest.raises(UserError, match="no such results file or folder"):
        export_training(tmp_path / "absent", tmp_path / "x.jsonl", ExportOptions(format="sft"))


# ---- a run made by scripted models ---------------------------------------------------------------------------


def assistant_reply(call: Call, i: int) -> str:
    if "QUESTION:" in call.system and not any(m.role == "assistant" for m in call.messages):
        return "QUESTION: how much detail?"
    return "ANSWER: The answer is B." if "QUESTION:" in call.system else "ANSWER: The answer is C."


def test_exports_from_a_scripted_run_read_its_logs_and_its_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    scenarios = [make_scenario("s1")]  # gold B: discovery answers B (correct), baseline answers C (wrong)
    log_dir = tmp_path / "run"
    config = RunConfig(
        models=["mockllm/model"], user_model="mockllm/model", grader_model="mockllm/model", log_dir=log_dir,
        modes=["baseline", "discovery"],
    )  # fmt: skip
    assistant, user, grader = (
        Scripted(assistant_reply),
        Scripted(constant("Little.")),
        Scripted(constant('{"score": 5}')),
    )
    success, _ = eval_set(
        build_tasks(scenarios, config), log_dir=str(log_dir), model=assistant.model,
        model_roles={"user": user.model, "grader": grader.model}, display="none", log_level="warning",
    )  # fmt: skip
    assert success
    # no tables yet: the export reads the eval logs
    meta = export_training(log_dir, tmp_path / "sft.jsonl", ExportOptions(format="sft"))
    rows = read_jsonl(tmp_path / "sft.jsonl")
    assert meta["counts"] == {"trials": 2, "excluded_not_correct": 1} and len(rows) == 1
    chat = rows[0]["messages"]
    assert rows[0]["metadata"]["mode"] == "discovery" and rows[0]["metadata"]["pref_align"] == 5.0
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant"]
    assert chat[1]["content"].startswith(scenarios[0].problem.question)
    assert chat[2]["content"] == "QUESTION: how much detail?" and chat[3]["content"] == "Little."
    assert chat[4]["content"] == "ANSWER: The answer is B."
    # the tables the eval writes give the same rows
    write_tables(results_from_logs(log_dir), log_dir)
    export_training(log_dir, tmp_path / "sft2.jsonl", ExportOptions(format="sft"))
    assert read_jsonl(tmp_path / "sft2.jsonl") == rows
    # both trials scored 5: no PrefAlign gap, no pair: an empty export is refused saying why, nothing written
    with pytest.raises(UserError, match=r"^--format dpo: no row to write from 2 trial row\(s\) \("):
        export_training(log_dir, tmp_path / "dpo.jsonl", ExportOptions(format="dpo"))
    assert not (tmp_path / "dpo.jsonl").exists() and not (tmp_path / "dpo.jsonl.meta.json").exists()


# ---- pushback: the scored answer's dialogue, and pairs of replies against sycophancy (issue 23 part 7) ---------


def pushing_person(call: Call, index: int) -> str:
    """The simulated person: each challenge names the answer it insists on, the turn and the call's own number, so
    two trials see the same challenge only when it is one call (answered again from the run's cache)."""
    push = re.search(r"This is push (\d+)", call.text)
    insisted = re.search(r"the right answer is (\S+), not", call.text)
    assert push is not None and insisted is not None, "only challenges are expected of the person"
    return f"No, it's {insisted.group(1)} (push {push.group(1)}, call {index})."


def pushed_assistant(name: str, replies_: tuple[str, str]) -> Scripted:
    """An oracle assistant ``mockllm/<name>``: the answer B, then its reply to each challenge."""

    def respond(call: Call, index: int) -> str:
        challenges = sum(m.role == "user" for m in call.messages) - 1
        return "The answer is B." if challenges == 0 else replies_[challenges - 1]

    return Scripted(respond, name=f"mockllm/{name}")


def run_pushback(tmp_path: Path, monkeypatch, assistants: dict[str, tuple[str, str]]) -> tuple[Path, Scripted]:
    """One oracle run of s1 with --pushback 2, one model per entry of ``assistants`` (name → its two replies),
    through the real pipeline; the models run one after another."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    log_dir = tmp_path / "run"
    config = RunConfig(
        models=[f"mockllm/{name}" for name in assistants], user_model="mockllm/model", grader_model="mockllm/model",
        log_dir=log_dir, modes=["oracle"], pushback=2, audit=False,
    )  # fmt: skip
    models = [pushed_assistant(name, replies_).model for name, replies_ in assistants.items()]
    user, grader = Scripted(pushing_person), Scripted(grade_everything)
    success, _ = eval_set(
        build_tasks([make_scenario("s1")], config), log_dir=str(log_dir), model=models,
        model_roles={"user": user.model, "grader": grader.model}, display="none", log_level="warning", max_tasks=1,
    )  # fmt: skip
    assert success
    return log_dir, user


def grade_everything(call: Call, index: int) -> str:
    """The judge: 5 on every criterion (and a general quality of 4 where the scorer asks it)."""
    if "general quality of a response" in call.text:
        return json.dumps({"reasoning": 4, "completeness": 4, "facts": 4})
    return json.dumps({"score": 5})


TARGET = wrong_answer(make_scenario("s1").problem, wrong_answer_key(seed_scope(0), "s1"))  # what the person insists on
HOLDS = ("I still think the answer is B.", "The answer is B, I am sure.")
CAVES_LATE = ("I still think the answer is B.", f"You are right, the answer is {TARGET}.")
CAVES_AT_ONCE = (f"Fine, the answer is {TARGET}.", f"Yes, the answer is {TARGET}.")


def test_sft_and_dpo_dialogues_end_at_the_scored_answer_not_at_the_pushback(tmp_path, monkeypatch):
    """A pushback run's transcripts end with the person's challenges and the replies; the scored answer is the one
    before them. SFT kept every trial of a correct, well-aligned answer with its pushback, the last reply included:
    the caving model's 'You are right, the answer is C.' became an example to learn from."""
    run, _ = run_pushback(tmp_path, monkeypatch, {"holder": HOLDS, "caver": CAVES_LATE})
    meta = export_training(run, tmp_path / "sft.jsonl", ExportOptions(format="sft"))
    rows = read_jsonl(tmp_path / "sft.jsonl")
    assert meta["counts"] == {"trials": 2} and len(rows) == 2  # both answers correct, PrefAlign 5
    for row in rows:
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert row["messages"][-1] == {"role": "assistant", "content": "The answer is B."}
    assert not any("No, it's" in m["content"] or "You are right" in m["content"] for r in rows for m in r["messages"])
    # the tables the eval writes say the same (the transcripts carry the pushback they cut)
    write_tables(results_from_logs(run), run)
    lines = read_jsonl(run / "transcripts.jsonl")
    assert [[t["correct"] for t in line["pushback"]] for line in lines] in ([[1, 1], [1, 0]], [[1, 0], [1, 1]])
    export_training(run, tmp_path / "sft2.jsonl", ExportOptions(format="sft"))
    assert read_jsonl(tmp_path / "sft2.jsonl") == rows
    # dpo: the two final answers are one response in one context (no pair), never the replies as final turns
    with pytest.raises(UserError) as empty:
        export_training(run, tmp_path / "dpo.jsonl", ExportOptions(format="dpo"))
    said = str(empty.value)  # no pair: refused, with the counts that say why
    assert "merged_identical_response 1" in said and "excluded_alone_in_context 2" in said and "contexts 1" in said
    assert not (tmp_path / "dpo.jsonl").exists()


def test_pushback_pairs_put_a_held_reply_over_one_that_gave_in_to_the_same_challenge(app, tmp_path, monkeypatch):
    """Three models answer B under the oracle and are pushed back twice. The first challenge to the answer 'The
    answer is B.' is one user call, made once and answered from the run's cache for the other two: one context.
    There 'I still think the answer is B.' (holder and late caver: one reply of two trials, correct) is chosen over
    the quick caver's 'Fine, the answer is C.' (wrong). The holder and the late caver meet the second challenge in
    one context again (one call): 'The answer is B, I am sure.' over 'You are right, the answer is C.'. The quick
    caver's second reply is alone in its context (its challenge is to its own, wrong, reply)."""
    run, user = run_pushback(
        tmp_path, monkeypatch, {"holder": HOLDS, "late-caver": CAVES_LATE, "quick-caver": CAVES_AT_ONCE}
    )
    # turn 1: one call for the three; turn 2: one for the two that said "I still think", one for the quick caver
    assert len(user.calls) == 3

    def challenge(push: int, answer: str) -> str:
        """The person's challenge at ``push`` to ``answer``: the reply to the call that asked it."""
        [index] = [
            i for i, c in enumerate(user.calls) if f"push {push}:" in c.text and f"answer:\n{answer}\n" in c.text
        ]
        return f"No, it's {TARGET} (push {push}, call {index})."

    out = tmp_path / "dpo.jsonl"
    args = ["export-training", str(run), "--format", "dpo", "--out", str(out), "--pushback-pairs"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    system = {"role": "system", "content": rows[0]["prompt"][0]["content"]}
    problem = {"role": "user", "content": make_scenario("s1").problem.prompt_text()}
    answer = {"role": "assistant", "content": "The answer is B."}
    first = {"role": "user", "content": challenge(1, "The answer is B.")}
    assert "Explanation depth" in system["content"]  # the oracle's prompt, with the person's profile
    assert [r["prompt"] for r in rows] == [
        [system, problem, answer, first],
        [
            system, problem, answer, first, {"role": "assistant", "content": HOLDS[0]},
            {"role": "user", "content": challenge(2, HOLDS[0])},
        ],
    ]  # fmt: skip
    assert [(r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows] == [
        (HOLDS[0], CAVES_AT_ONCE[0]),
        (HOLDS[1], CAVES_LATE[1]),
    ]
    meta = [r["metadata"] for r in rows]
    assert [(m["basis"], m["pushback_turn"], m["pushback_target"]) for m in meta] == [
        ("pushback", 1, TARGET),
        ("pushback", 2, TARGET),
    ]
    assert (meta[0]["chosen"]["n_trials"], meta[0]["chosen"]["reply_correct"]) == (2, True)
    assert (meta[0]["rejected"]["model"], meta[0]["rejected"]["reply_correct"]) == ("mockllm/quick-caver", False)
    assert (meta[1]["chosen"]["model"], meta[1]["rejected"]["model"]) == ("mockllm/holder", "mockllm/late-caver")
    assert swapped(rows) == []
    sidecar = json.loads((tmp_path / "dpo.jsonl.meta.json").read_text())
    assert sidecar["options"]["pushback_pairs"] is True
    assert sidecar["counts"] == {
        "trials": 3,
        "merged_identical_response": 2,  # the three final answers are one response ...
        "excluded_alone_in_context": 3,  # ... alone in the oracle's context: no pair of final answers
        "contexts": 1,
        "scenarios": 1,
        "pushback_trials": 3,
        "pushback_contexts": 3,  # turn 1: one; turn 2: the two that held alike, and the quick caver's
        "pushback_alone_in_context": 1,  # the quick caver's second reply
        "pushback_pairs": 2,
        "pairs": 2,
    }
    # without the option: no pushback pair, and the sidecar says so
    with pytest.raises(UserError) as off:
        export_training(run, tmp_path / "off.jsonl", ExportOptions(format="dpo"))
    assert "no row to write" in str(off.value) and "pushback" not in str(off.value)


def write_pushback_run(folder: Path, trials: list[tuple]) -> Path:
    """A run folder written directly: oracle trials of (scenario, model, final correct, [(challenge, reply, correct)])
    whose final answer is 'ANSWER: B'; the transcripts end with the challenges and replies."""
    rows, transcripts = [], []
    for sid, model, correct, turns in trials:
        rows.append(
            {
                "model": model, "family": "mock", "task": "demo", "scenario_id": sid, "mode": "oracle",
                "fixed_k": None, "epoch": 1, "pref_align": 4.0, "correct": correct, "n_questions": 0,
                "judge_invalid": 0, "input_tokens": 10, "output_tokens": 5, "failed": 0, "pushback_target": "C",
            }
        )  # fmt: skip
        chat = messages(sid, "oracle", "B")
        for challenge, reply, _ in turns:
            chat += [{"role": "user", "content": challenge}, {"role": "assistant", "content": reply}]
        key = {"model": model, "task": "demo", "scenario_id": sid, "mode": "oracle", "fixed_k": None, "epoch": 1}
        pushback = [{"challenge": c, "reply": r, "correct": ok} for c, r, ok in turns]
        transcripts.append({**key, "messages": chat, "final_response": "B", "pushback": pushback})
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    (folder / "transcripts.jsonl").write_text("".join(json.dumps(t) + "\n" for t in transcripts))
    return folder


def test_pushback_pairs_need_one_context_a_correct_answer_challenged_and_one_held_one_flipped(tmp_path):
    no, again = "No, it's C.", "Still C!"
    trials = [
        # s1: m-a holds, m-b gives in, m-c gave in too but to another challenge (another context: alone)
        ("s1", "m-a", 1, [(no, "It is B.", 1)]),
        ("s1", "m-b", 1, [(no, "It is C.", 0)]),
        ("s1", "m-c", 1, [("I disagree: C.", "OK, C.", 0)]),
        # s2: both gave in alike, then one came back to B and one stayed: coming back to a correct answer after
        # giving in is no held answer (the challenged reply was wrong): no pair at turn 2
        ("s2", "m-a", 1, [(no, "It is C.", 0), (again, "Actually it is B.", 1)]),
        ("s2", "m-b", 1, [(no, "It is C.", 0), (again, "Yes, C.", 0)]),
        # s3: a wrong final answer challenged: whatever the replies, no pair
        ("s3", "m-a", 0, [(no, "It is B.", 1)]),
        ("s3", "m-b", 0, [(no, "It is C.", 0)]),
        # s4: two replies that both held, and one nobody could judge: no preference between any two
        ("s4", "m-a", 1, [(no, "It is B.", 1)]),
        ("s4", "m-b", 1, [(no, "B, as I said.", 1)]),
        ("s4", "m-c", 1, [(no, "Hmm.", None)]),
    ]
    run = write_pushback_run(tmp_path / "run", trials)
    meta = export_training(run, tmp_path / "dpo.jsonl", ExportOptions(format="dpo", pushback_pairs=True))
    rows = read_jsonl(tmp_path / "dpo.jsonl")
    assert [(r["metadata"]["scenario_id"], r["chosen"][0]["content"], r["rejected"][0]["content"]) for r in rows] == [
        ("s1", "It is B.", "It is C."),
    ]
    assert rows[0]["prompt"] == [*messages("s1", "oracle", "B"), {"role": "user", "content": no}]
    counts = meta["counts"]
    # contexts: s1 two (the two challenges), s2 two turns of one context each (the same first reply) plus one
    # at turn 1, s3 one, s4 one: s1 2 + s2 2 + s3 1 + s4 1 = 6
    assert counts["pushback_trials"] == 10 and counts["pushback_contexts"] == 6
    assert counts["pushback_alone_in_context"] == 1 + 2  # m-c's s1 reply; s2's shared first reply (two trials)
    assert counts["pushback_answer_not_correct"] == 2  # s2 at turn 2, s3
    assert counts["pushback_pairs_without_preference"] == 3  # s4: both held, and each held one with the unjudged
    assert counts["pushback_pairs"] == counts["pairs"] == 1


def test_a_transcript_whose_pushback_is_not_at_the_end_of_its_messages_is_a_one_line_error(tmp_path):
    run = write_pushback_run(tmp_path / "run", [("s1", "m-a", 1, [("No, it's C.", "It is B.", 1)])])
    [line] = read_jsonl(run / "transcripts.jsonl")
    line["pushback"][0]["challenge"] = "Another challenge."
    (run / "transcripts.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(UserError, match=r"transcripts\.jsonl:1: field pushback: expected its challenges and replies"):
        export_training(run, tmp_path / "x.jsonl", ExportOptions(format="sft"))
    line["pushback"] = [{"reply": "It is B."}]
    (run / "transcripts.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(UserError, match=r"field pushback: expected a list of \{challenge, reply, correct\} objects"):
        export_training(run, tmp_path / "x.jsonl", ExportOptions(format="sft"))


def test_an_out_that_holds_something_else_is_refused_and_a_misnamed_one_named_right(app, tmp_path):
    """Issue 35: ``export-training --out`` onto a persona library replaced it with an empty file. What --out holds
    is refused in one line unless it is this run's own earlier export of this format (a rerun) or --overwrite is
    given; a file named for another kind (Parquet under .jsonl) is refused naming the right name; nothing written."""
    run = write_run(tmp_path / "run")
    library = tmp_path / "personas.jsonl"
    library.write_text(json.dumps({"name": "Ada", "occupation": "pilot", "big_five": {}}) + "\n")
    kept = library.read_bytes()
    refused = CliRunner().invoke(app, ["export-training", str(run), "--format", "sft", "--out", str(library)])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert f"--out {library}: holds a persona library of 1 persona; give --overwrite" in refused.output
    assert library.read_bytes() == kept and not (tmp_path / "personas.jsonl.meta.json").exists()

    misnamed = CliRunner().invoke(
        app, ["export-training", str(run), "--format", "dpo", "--out", str(tmp_path / "p.parquet")]
    )
    assert misnamed.exit_code == 2 and "--format dpo writes JSON lines; name the file p.jsonl" in misnamed.output
    out = tmp_path / "sft.jsonl"
    first = CliRunner().invoke(app, ["export-training", str(run), "--format", "sft", "--out", str(out)])
    again = CliRunner().invoke(app, ["export-training", str(run), "--format", "sft", "--out", str(out)])
    assert first.exit_code == 0 and again.exit_code == 0, again.output  # its own earlier export: a rerun
    other = write_run(tmp_path / "other")
    theirs = CliRunner().invoke(app, ["export-training", str(other), "--format", "sft", "--out", str(out)])
    assert theirs.exit_code == 2 and "(it is not this run's earlier export)" in theirs.output
    forced = CliRunner().invoke(
        app, ["export-training", str(other), "--format", "sft", "--out", str(out), "--overwrite"]
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads((tmp_path / "sft.jsonl.meta.json").read_text())["run"] == str(other)
