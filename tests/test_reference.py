"""Simulated users against real people (issue 33): the reference reader on the real Qulac file, and ``prefdisco
simfidelity --reference`` on a planted reference whose every figure is worked out here by hand.

The planted reference: four answers in Qulac's layout (and one facet record, no question and no answer, which is
left out), each need, question and person's answer below. Content words (answer_behaviour.py): three letters or
more, outside the stop words, a final "s" dropped from four letters on.

| row | need (content not in the question) | person's answer | words | starts | bare | don't know | disclosure |
|---|---|---|---|---|---|---|---|
| 0 | time, photo, essay, family, tree | "yes i want the time photo essay" | 7 | yes | no | no | 3/5 |
| 1 | office, hold | "no i want to know what offices he held" | 9 | no | no | no | 1/2 ("held" ≠ "hold") |
| 2 | buy | "no" | 1 | no | yes | no | 0/1 |
| 3 | vegan | "i don't know" | 3 | — | no | yes | 0/1 |

The people: mean words 5, median 5; starts no 2/4, yes 1/4; bare 1/4; don't know 1/4; disclosure
(0.6 + 0.5 + 0 + 0) / 4 = 0.275; discloses any 2/4.

Simulator A (``scripted/ref-a``) answers "No, I want the photo essay." (6 words, no, 2/5), "No." (1, no, bare, 0/2),
"I don't know." (3, —, don't know, 0/1), "Yes, vegan cookies please." (4, yes, 1/1): mean words 3.5, starts no 2/4,
yes 1/4, bare 1/4, don't know 1/4, disclosure (0.4 + 0 + 0 + 1) / 4 = 0.35, discloses any 2/4; polarity agreement
over the rows where the person starts yes/no (0, 1, 2): row 1 only, 1/3. Fidelity = the mean of 3.5/5 = 0.7, 1, 1,
1, 1, 1 − 0.075 = 0.925, 1 and 1/3 = 6.958333/8 = 0.869792.
Simulator B (``scripted/ref-b``) answers as the people did: every closeness 1, polarity agreement 3/3, fidelity 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.model import ChatMessage
from markupsafe import escape
from typer.testing import CliRunner

from prefdisco.errors import UserError
from prefdisco.simfidelity.answer_behaviour import measured, party_statistics
from prefdisco.simfidelity.reference_replay import draw_rows
from prefdisco.simfidelity.rows import read_reference
from transfer_world import SCRIPTS

ROWS = [
    ("t1", "obama family tree", "inf", "Find the TIME photo essay about Obama's family tree",
     "are you interested in obama's ancestors", "yes i want the time photo essay"),
    ("t2", "ralph brewster", "inf", "What offices did Ralph Brewster hold?", "how old is ralph brewster",
     "no i want to know what offices he held"),
    ("t3", "piano", "nav", "Where can I buy a used piano?", "do you want to learn piano", "no"),
    ("t4", "vegan cookies", "inf", "Find recipes for vegan cookies", "are you looking for cookie recipes",
     "i don't know"),
]  # fmt: skip
SIM_A = {
    ROWS[0][4]: "No, I want the photo essay.",
    ROWS[1][4]: "No.",
    ROWS[2][4]: "I don't know.",
    ROWS[3][4]: "Yes, vegan cookies please.",
}
CALLS: list[str] = []
DOCS = Path(__file__).resolve().parents[1] / "docs" / "evaluation.md"


def answering(replies: dict[str, str], name: str):
    def reply(messages: list[ChatMessage]) -> str:
        CALLS.append(name)
        return replies[messages[-1].text]

    return reply


SCRIPTS |= {"ref-a": answering(SIM_A, "a"), "ref-b": answering({r[4]: r[5] for r in ROWS}, "b")}


def write_qulac(path: Path, rows=ROWS, facet_record: bool = True) -> Path:
    """``rows`` in Qulac's layout (one JSON object of columns), with one facet record (no question, no answer)."""
    records = [
        {"topic_id": t, "facet_id": f"{t}-1", "topic": topic, "facet_type": kind, "facet_desc": need}
        | {"question": question, "answer": answer}
        for t, topic, kind, need, question, answer in rows
    ]
    if facet_record:
        records.append(records[0] | {"question": "", "answer": ""})
    columns = {name: {str(i): r[name] for i, r in enumerate(records)} for name in records[0]}
    path.write_text(json.dumps(columns))
    return path


def simfidelity(tmp_path: Path, *more: str):
    import prefdisco.cli as cli

    cli._register()
    args = ["simfidelity", "--reference", "qulac", str(tmp_path / "qulac.json"), "--out", str(tmp_path / "out")]
    args += ["--user-type", "passive", "--user-model", "scripted/ref-a", "--user-type", "passive"]
    args += ["--user-model", "scripted/ref-b", "--bootstrap", "200", *more]
    return CliRunner().invoke(cli.app, args)


def test_the_real_qulac_file_reads_every_answer_through_the_reader(shared_dir):
    reference = read_reference("qulac", shared_dir / "data/human/qulac/qulac.json")
    assert (reference.total, reference.facet_records, len(reference.rows)) == (11_039, 762, 10_277)
    assert all(r.need and r.question and r.answer for r in reference.rows)
    assert len({r.topic_id for r in reference.rows}) == 198
    assert {r.facet_type for r in reference.rows} == {"inf", "nav", "inv"}
    first = reference.rows[0]
    assert (first.topic, first.answer) == ("obama family tree", "yes am interested in obamas family")
    # the people's statistics docs/evaluation.md records ("The people of Qulac, measured"), row "all"
    rows = reference.rows
    people = party_statistics(measured([r.answer for r in rows], [r.need for r in rows], [r.question for r in rows]))
    documented = {"mean_words": 8.21, "median_words": 8, "starts_no": 0.546, "starts_yes": 0.196}
    documented |= {"bare_yes_no": 0.122, "dont_know": 0.043, "disclosure": 0.445, "discloses_any": 0.682}
    assert {k: round(people[k], 2 if k == "mean_words" else 3) for k in documented} == documented
    assert "| all | 10,277 | 8.21 | 8 | 0.546 | 0.196 | 0.122 | 0.043 | 0.445 | 0.682 |" in DOCS.read_text()


def test_the_planted_reference_gives_the_hand_figures_and_a_rerun_makes_no_call(tmp_path):
    write_qulac(tmp_path / "qulac.json")
    CALLS.clear()
    dry = simfidelity(tmp_path, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert dry.output.splitlines()[0] == "8 model calls" and CALLS == [] and not (tmp_path / "out").exists()

    made = simfidelity(tmp_path)
    assert made.exit_code == 0, made.output
    assert sorted(CALLS) == ["a"] * 4 + ["b"] * 4
    table = pd.read_csv(tmp_path / "out" / "reference.csv").set_index("simulator")
    people, a, b = (table.loc[k] for k in ("people", "passive@scripted/ref-a", "passive@scripted/ref-b"))
    assert people[["n", "mean_words", "median_words"]].tolist() == [4, 5.0, 5.0]
    assert people[["starts_no", "starts_yes", "bare_yes_no", "dont_know"]].tolist() == [0.5, 0.25, 0.25, 0.25]
    assert people[["disclosure", "discloses_any"]].tolist() == pytest.approx([0.275, 0.5])
    assert pd.isna(people["polarity_agreement"]) and pd.isna(people["reference_fidelity"])
    assert a[["mean_words", "median_words", "starts_no", "starts_yes"]].tolist() == [3.5, 3.5, 0.5, 0.25]
    assert a[["bare_yes_no", "dont_know", "discloses_any"]].tolist() == [0.25, 0.25, 0.5]
    assert a["disclosure"] == pytest.approx(0.35) and a["polarity_agreement"] == pytest.approx(1 / 3)
    assert a["reference_fidelity"] == pytest.approx((0.7 + 1 + 1 + 1 + 1 + 0.925 + 1 + 1 / 3) / 8)
    assert b["reference_fidelity"] == pytest.approx(1.0) and b["polarity_agreement"] == 1.0
    assert (b["reference_fidelity_low"], b["reference_fidelity_high"]) == (1.0, 1.0)  # every resample: the same
    assert a["reference_fidelity_low"] <= a["reference_fidelity"] <= a["reference_fidelity_high"] < 1
    assert (b["rank"], a["rank"]) == (1, 2)
    assert "fidelity" not in table.columns  # named apart from the replay fidelity (issue 45, defect 8b)
    assert "1. passive@scripted/ref-b: reference fidelity 1.000" in made.output
    assert "2. passive@scripted/ref-a: reference fidelity 0.870" in made.output

    answers = pd.read_csv(tmp_path / "out" / "answers.csv")
    assert len(answers) == 8 and set(answers["simulator"]) == {"passive@scripted/ref-a", "passive@scripted/ref-b"}
    row0 = answers[(answers["simulator"] == "passive@scripted/ref-a") & (answers["reference_row"] == 0)].iloc[0]
    assert (row0["human_answer"], row0["simulated_answer"]) == (ROWS[0][5], SIM_A[ROWS[0][4]])
    assert (row0["human_words"], row0["simulated_words"]) == (7, 6)
    assert (row0["human_disclosure"], row0["simulated_disclosure"]) == pytest.approx((0.6, 0.4))
    by_facet = pd.read_csv(tmp_path / "out" / "reference_by_facet.csv")
    assert set(by_facet["facet_type"]) == {"inf", "nav"}
    nav = by_facet[(by_facet["facet_type"] == "nav") & (by_facet["simulator"] == "people")].iloc[0]
    assert (nav["n"], nav["mean_words"], nav["bare_yes_no"]) == (1, 1.0, 1.0)  # row 2 alone
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["file_rows"], summary["facet_records_left_out"], summary["rows"]) == (5, 1, 4)
    page = (tmp_path / "out" / "reference.html").read_text()  # self-contained: the figure inline, no file beside
    assert page.count("data:image/png;base64,") == 1 and "<script" not in page and 'src="http' not in page
    assert "<td>0.870</td>" in page and "<td>0.275</td>" in page  # simulator A's fidelity, the people's disclosure
    for *_, need, question, answer in ROWS:  # the rows side by side (the first ten: here all four)
        assert all(str(escape(text)) in page for text in (need, question, answer, SIM_A[question]))
    assert "proves the plumbing" not in page  # no embedded model here (its note is the caveats test's)

    CALLS.clear()
    first_table = (tmp_path / "out" / "reference.csv").read_bytes()
    again = simfidelity(tmp_path)
    assert again.exit_code == 0, again.output
    assert CALLS == [] and "0 answered now, 8 from" in " ".join(again.output.split())
    assert (tmp_path / "out" / "reference.csv").read_bytes() == first_table  # the same figures from the same answers

    other = simfidelity(tmp_path, "--limit", "2")
    assert other.exit_code == 2 and "holds another reference run" in other.output and CALLS == []
    replaced = simfidelity(tmp_path, "--limit", "2", "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert len(CALLS) == 4 and len(pd.read_csv(tmp_path / "out" / "answers.csv")) == 4


def test_a_limit_draws_a_seeded_sample_stratified_by_topic(tmp_path):
    rows = [*ROWS, *(("t1", "obama family tree", "inf", ROWS[0][3], f"question {i}", f"answer {i}") for i in range(5))]
    reference = read_reference("qulac", write_qulac(tmp_path / "q.json", rows, facet_record=False))
    drawn = draw_rows(reference.rows, 4, seed=3)
    assert sorted(r.topic_id for r in drawn) == ["t1", "t2", "t3", "t4"]  # one per topic before a second of any
    assert [r.row for r in drawn] == sorted((r.row for r in drawn), key=int)  # in file order
    assert draw_rows(reference.rows, 4, seed=3) == drawn
    assert len(draw_rows(reference.rows, 6, seed=3)) == 6 and draw_rows(reference.rows, None, seed=3) == reference.rows


def test_the_clariq_layout_reads_its_columns(tmp_path):
    tsv = tmp_path / "clariq.tsv"
    tsv.write_text(
        "topic_id\tinitial_request\tfacet_desc\tquestion\tanswer\n"
        "8\tdinosaur\tinformation about dinosaur fossils\tare you a student\tno i want to see fossils\n"
    )
    [row] = read_reference("clariq", tsv).rows
    assert (row.row, row.topic, row.topic_id, row.need, row.answer) == (
        "1",
        "dinosaur",
        "8",
        "information about dinosaur fossils",
        "no i want to see fossils",
    )


def test_bad_input_is_one_line(tmp_path):
    with pytest.raises(UserError, match=r"^--reference qulac .*nope.json: no such file$"):
        read_reference("qulac", tmp_path / "nope.json")
    with pytest.raises(UserError, match=r"^--reference: unknown layout 'trec'; expected one of qulac, clariq$"):
        read_reference("trec", tmp_path / "nope.json")
    (tmp_path / "bad.tsv").write_text("question\tfacet_desc\nwhy\tneed\n")
    with pytest.raises(UserError, match=r"the header has no answer column"):
        read_reference("clariq", tmp_path / "bad.tsv")
    unanswered = [*ROWS[:1], (*ROWS[1][:5], "")]
    with pytest.raises(
        UserError, match=r"q.json: row 1 has no answer \(every row needs facet_desc, question, answer\)"
    ):
        read_reference("qulac", write_qulac(tmp_path / "q.json", unanswered, facet_record=False))
    (tmp_path / "clariq.json").write_text("[1, 2]")
    with pytest.raises(UserError, match=r"expected one JSON object of columns"):
        read_reference("qulac", tmp_path / "clariq.json")
    import prefdisco.cli as cli

    cli._register()
    write_qulac(tmp_path / "qulac.json")
    base = ["simfidelity", "--reference", "qulac", str(tmp_path / "qulac.json"), "--out", str(tmp_path / "out")]
    for extra, said in (
        (("--user-type", "psychic", "--user-model", "scripted/ref-a"), "--user-type: unknown 'psychic'"),
        (("--user-type", "passive"), "--user-model: name the simulated users' model"),
        (("--user-type", "passive", "--user-type", "cooperative", "--user-type", "targeted", "--user-model", "m/a",
          "--user-model", "m/b"), "--user-model: 2 given for 3 --user-type"),
        (("--user-type", "targeted", "--user-model", "scripted/ref-a"), "--user-type targeted maps each question"),
        (("--user-model", "scripted/ref-a", "--human", str(tmp_path)), "--reference: measures simulated users"),
    ):  # fmt: skip
        result = CliRunner().invoke(cli.app, [*base, *extra])
        assert result.exit_code == 2 and said in result.output, result.output
        assert not (tmp_path / "out").exists()  # refused before anything is written
    alone = CliRunner().invoke(cli.app, ["simfidelity", "--out", str(tmp_path / "o"), "--limit", "3"])
    assert alone.exit_code == 2 and "--limit: only with --reference" in alone.output


def by_temperature(messages: list[ChatMessage], config) -> str:
    """One model whose temperature changes how it answers: at 0.2 as the people did (simulator B), else simulator
    A's answers."""
    CALLS.append("t")
    replies = {r[4]: r[5] for r in ROWS} if config.temperature == 0.2 else SIM_A
    return replies[messages[-1].text]


SCRIPTS["ref-t"] = by_temperature
COLD, WARM = "passive@scripted/ref-t (user_temperature 0.2)", "passive@scripted/ref-t (user_temperature 0.7)"


def test_a_report_matches_its_simulator_by_the_whole_user_protocol(tmp_path):
    """Issue 45, defect 8a. One reference run measures one user type and model at two user temperatures (labelled
    apart): at 0.2 it answers as the people (reference fidelity 1), at 0.7 as simulator A (0.870 by hand, above). A
    run's reading is the simulator whose whole user protocol its ``protocol.json`` records (type, model, temperature,
    limits, redraws, the user's prompt hash): the run at 0.2 gets 1.000, the one at 0.7 gets 0.870 (matched by
    ``USER_TYPE@USER_MODEL`` alone, both would be the first); a run at 0.5, or at 0.7 with ``--user-retry 1``, or
    whose record keeps no hash of its user's prompts, matches none and gets no fidelity, the reading saying why."""
    import prefdisco.cli as cli
    from prefdisco.evaluation.protocol.protocols import record_of
    from prefdisco.evaluation.settings.config import RunConfig
    from prefdisco.results.protocol_record import write_record
    from test_report import make_run_dir

    cli._register()
    write_qulac(tmp_path / "qulac.json")
    ref = ["simfidelity", "--reference", "qulac", str(tmp_path / "qulac.json"), "--out", str(tmp_path / "out")]
    ref += ["--user-type", "passive", "--user-type", "passive", "--user-model", "scripted/ref-t"]
    ref += ["--user-temperature", "0.2", "--user-temperature", "0.7", "--bootstrap", "200"]
    measured_run = CliRunner().invoke(cli.app, ref)
    assert measured_run.exit_code == 0, measured_run.output
    table = pd.read_csv(tmp_path / "out" / "reference.csv").set_index("simulator")
    assert table.loc[COLD, "reference_fidelity"] == pytest.approx(1.0)
    assert table.loc[WARM, "reference_fidelity"] == pytest.approx(0.869792, abs=1e-6)
    run = make_run_dir(tmp_path / "run")
    args = ["report", str(run), "--out", str(tmp_path / "report"), "--bootstrap", "0", "--no-figures", "--overwrite"]

    def reading_of(**settings) -> dict:
        record = record_of(RunConfig(**settings), "scripted/ref-t", ["j"], None)
        write_record(run, record)
        made = CliRunner().invoke(cli.app, [*args, "--reference-table", str(tmp_path / "out")])
        assert made.exit_code == 0, made.output
        summary = json.loads((tmp_path / "report" / "summary.json").read_text())
        [reading] = [r for r in summary["validity"] if r["instrument"] == "Simulator against people"]
        return reading | {"matched": summary["reference"]["matched"]}

    cold = reading_of(user_temperature=0.2)
    assert cold["finding"] == "reference fidelity 1.000 [1.000, 1.000]" and cold["matched"] == [COLD]
    warm = reading_of(user_temperature=0.7)
    assert warm["finding"].startswith("reference fidelity 0.870 [") and warm["matched"] == [WARM]
    assert f"{WARM}: reference fidelity 0.870" in warm["reading"] and "rank 2 of 2" in warm["reading"]
    page = (tmp_path / "report" / "report.html").read_text()
    assert f'<tr style="font-weight: bold"><td class="l">{WARM}</td>' in page
    board = ["leaderboard", str(run), "--out", str(tmp_path / "board"), "--bootstrap", "0"]
    ranked = CliRunner().invoke(cli.app, [*board, "--reference-table", str(tmp_path / "out")])
    assert ranked.exit_code == 0, ranked.output
    box = (tmp_path / "board" / "leaderboard.html").read_text().split('id="protocol"', 1)[1].split("</div>", 1)[0]
    assert f"({WARM}: reference fidelity 0.870 [" in box and "against qulac (4 rows))" in box

    other = reading_of(user_temperature=0.5)
    assert other["finding"] == "not measured" and other["matched"] == []
    assert "passive@scripted/ref-t: measured only under another user protocol" in other["reading"]
    assert "user_temperature 0.5 here, 0.2 there" in other["reading"]
    assert "user_temperature 0.5 here, 0.7 there" in other["reading"]
    retried = reading_of(user_temperature=0.7, user_retry=1)
    assert retried["finding"] == "not measured" and "user_retry 1 here, 0 there" in retried["reading"]
    write_record(run, record_of(RunConfig(user_temperature=0.7), "scripted/ref-t", ["j"], None).model_copy(
        update={"user_prompts": None}))  # fmt: skip
    older = CliRunner().invoke(cli.app, [*args, "--reference-table", str(tmp_path / "out")])
    assert older.exit_code == 0, older.output
    [reading] = [
        r for r in json.loads((tmp_path / "report" / "summary.json").read_text())["validity"]
        if r["instrument"] == "Simulator against people"
    ]  # fmt: skip
    assert (
        reading["finding"] == "not measured" and "records no hash of its simulated user's prompts" in reading["reading"]
    )
    elsewhere = reading_of(user_temperature=0.7, user_type="cooperative")
    assert "passive" not in elsewhere["matched"] and "cooperative@scripted/ref-t not in it" in elsewhere["reading"]
    missing = CliRunner().invoke(cli.app, [*args, "--reference-table", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "give the --out of prefdisco simfidelity --reference" in missing.output


def test_an_older_reference_run_is_read_under_the_new_names_and_says_what_it_lacks(tmp_path):
    """A reference run written before issue 45: its ``reference.csv`` names the reference fidelity ``fidelity``, it
    has no per-statistic distances and no ``reference_pairs.csv``, and its ``summary.json`` records no protocol of
    its simulators. The report still reads it (the composite shown as ``reference_fidelity``: simulator A's 0.870),
    and the reading says why it cannot be this run's simulator's."""
    import prefdisco.cli as cli
    from prefdisco.evaluation.protocol.protocols import record_of
    from prefdisco.evaluation.settings.config import RunConfig
    from prefdisco.results.protocol_record import write_record
    from test_report import make_run_dir

    write_qulac(tmp_path / "qulac.json")
    assert simfidelity(tmp_path).exit_code == 0
    out = tmp_path / "out"
    table = pd.read_csv(out / "reference.csv")
    legacy = {"reference_fidelity": "fidelity", "reference_fidelity_low": "fidelity_low"}
    legacy |= {"reference_fidelity_high": "fidelity_high"}
    table = table.rename(columns=legacy).drop(columns=[c for c in table.columns if c.startswith("distance_")])
    table.to_csv(out / "reference.csv", index=False)
    (out / "reference_pairs.csv").unlink()
    summary = json.loads((out / "summary.json").read_text())
    summary["simulators"] = [{k: v for k, v in s.items() if k != "protocol"} for s in summary["simulators"]]
    (out / "summary.json").write_text(json.dumps(summary))
    run = make_run_dir(tmp_path / "run")
    write_record(run, record_of(RunConfig(), "scripted/ref-a", ["j"], None))
    args = ["report", str(run), "--out", str(tmp_path / "report"), "--bootstrap", "0", "--no-figures"]
    made = CliRunner().invoke(cli.app, [*args, "--reference-table", str(out)])
    assert made.exit_code == 0, made.output
    report = json.loads((tmp_path / "report" / "summary.json").read_text())
    [reading] = [r for r in report["validity"] if r["instrument"] == "Simulator against people"]
    assert reading["finding"] == "not measured" and "records no protocol of its simulators" in reading["reading"]
    shown = {r["simulator"]: r["reference_fidelity"] for r in report["reference"]["table"]}
    assert shown["passive@scripted/ref-a"] == pytest.approx(0.869792, abs=1e-6)


def test_an_empty_reply_is_no_answer_in_any_statistic():
    """A simulator that returned nothing (``(no reply)``) on row 1 of the planted rows: that reply is counted as
    empty and is in no statistic. Its other three answers are simulator A's rows 0, 2 and 3: mean words
    (6 + 3 + 4) / 3, starts no 1/3 (row 0), polarity agreement over the person's polar rows it answered (0, 2): row 0
    says no where the person said yes, row 2 has no polarity where the person said no: 0/2."""
    rows = [ROWS[i] for i in range(4)]
    replies = [SIM_A[ROWS[0][4]], "(no reply)", SIM_A[ROWS[2][4]], SIM_A[ROWS[3][4]]]
    needs, questions = [r[3] for r in rows], [r[4] for r in rows]
    person = measured([r[5] for r in rows], needs, questions)
    stats = party_statistics(measured(replies, needs, questions), person)
    assert (stats["n"], stats["empty"]) == (3, 1)
    assert stats["mean_words"] == pytest.approx(13 / 3) and stats["starts_no"] == pytest.approx(1 / 3)
    assert stats["dont_know"] == pytest.approx(1 / 3) and stats["polarity_agreement"] == 0.0


def documented_fidelity(simulator: dict, people: dict, shares: tuple[str, ...]) -> float | None:
    """docs/evaluation.md's definition, written out from two parties' statistics: the mean of the closenesses
    defined — min/max of the mean words, 1 − |difference| of each share, mean disclosure and discloses-any, and the
    polarity agreement itself; None when none is."""
    values = []
    a, b = simulator["mean_words"], people["mean_words"]
    if a is not None and b is not None:
        values.append(1.0 if max(a, b) == 0 else min(a, b) / max(a, b))
    for name in (*shares, "disclosure", "discloses_any"):
        if simulator[name] is not None and people[name] is not None:
            values.append(1.0 - abs(simulator[name] - people[name]))
    if simulator["polarity_agreement"] is not None:
        values.append(simulator["polarity_agreement"])
    return sum(values) / len(values) if values else None


def test_the_resampled_fidelity_is_each_resamples_own_fidelity(shared_dir):
    """The fidelity is computed on arrays, every resample at once (``resampled_fidelity``); each resample's value
    must be the documented definition (``documented_fidelity``, from ``party_statistics`` of that resample's rows).
    Person: 200 real Qulac answers; simulator: each row answered with the next row's answer and every seventh left
    empty, so every closeness differs from 1. The small case (the four planted rows, 200 resamples) also draws
    resamples with no polar row or no answer at all, where a closeness is undefined."""
    import numpy as np

    from prefdisco.analysis.validity.reference import SHARES
    from prefdisco.simfidelity.answer_behaviour import resampled_reference_fidelity

    rows = read_reference("qulac", shared_dir / "data/human/qulac/qulac.json").rows[:200]
    needs, questions = [r.need for r in rows], [r.question for r in rows]
    replies = [("(no reply)" if i % 7 == 0 else rows[(i + 1) % len(rows)].answer) for i in range(len(rows))]
    small = [ROWS[i] for i in range(4)]
    cases = [
        (measured([r.answer for r in rows], needs, questions), measured(replies, needs, questions), 40),
        (
            measured([r[5] for r in small], [r[3] for r in small], [r[4] for r in small]),
            measured(
                ["(no reply)", "(no reply)", *[SIM_A[r[4]] for r in small[2:]]],
                [r[3] for r in small],
                [r[4] for r in small],
            ),
            200,
        ),
    ]
    undefined, means = 0, []
    for person, simulator, n in cases:
        draws = np.random.default_rng(5).integers(0, len(person), size=(n, len(person)))
        fast = resampled_reference_fidelity(person, simulator, draws)
        for value, drawn in zip(fast, draws, strict=True):
            p, s = person.iloc[drawn].reset_index(drop=True), simulator.iloc[drawn].reset_index(drop=True)
            expected = documented_fidelity(party_statistics(s, p), party_statistics(p), SHARES)
            if expected is None:
                undefined += 1
                assert np.isnan(value)
            else:
                assert value == pytest.approx(expected, abs=1e-12)
        means.append(float(np.nanmean(fast)))
    assert 0.5 < means[0] < 0.99 and undefined > 0, (means, undefined)  # the real case is neither equal nor unrelated
