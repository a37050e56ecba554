"""The human-like simulated user (issue 33 part 5): its manner each turn — don't know, a bare yes or no, opening with
yes or no, disclosing its need, a word cap — drawn from how real people answered, and measured against people on
topics it was not fitted on.

By hand, the behaviour of six people's answers to "Are you looking for hotels?" whose need is "cheap flights to
Paris" (content words beyond the question: cheap, flights, paris):

| answer | words | don't know | bare | opens yes/no | discloses |
|---|---|---|---|---|---|
| I don't know. | 3 | yes | | | no |
| No. | 1 | | yes | | no |
| Yes please | 2 | | yes | | no |
| No, I want cheap flights to Paris | 7 | | | yes | yes |
| Looking for cheap flights | 4 | | | no | yes |
| yes the paris ones | 4 | | | yes | yes |

don't know 1/6; bare 2 of the 5 others = 0.4; opens yes/no 2 of the 3 full answers; discloses 3/6 = 0.5; the word
counts of the full answers 4, 4, 7: their 5th percentile 4, median 4, 95th 6.7 → 7.
"""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest
from inspect_ai.model import get_model
from typer.testing import CliRunner

from prefdisco.analysis.answer_behaviour import fit_behaviour, measured
from prefdisco.dialogue.humanlike import DONT_KNOW_REPLIES, Behaviour, Manner, manner, packaged_behaviour, shaped
from prefdisco.dialogue.user import HumanlikeUser, build_user
from prefdisco.evaluation.config import RunConfig
from prefdisco.evaluation.protocols import protocol_id
from prefdisco.reference.rows import in_split, read_reference
from scripted import make_scenario
from transfer_world import SCRIPTS

ANSWERS = [
    "I don't know.",
    "No.",
    "Yes please",
    "No, I want cheap flights to Paris",
    "Looking for cheap flights",
    "yes the paris ones",
]
VERBOSE = (
    "Well, to be honest, I would really like to find out a lot more about this whole topic and everything around "
    "it, if you could help me with all of the details that matter to me here."
)
"""An easy-mode simulator's reply: 37 words, no yes or no, nothing of the need."""
SCRIPTS["verbose-user"] = lambda messages: VERBOSE


def test_the_behaviour_fitted_from_people_is_the_hand_count():
    people = measured(ANSWERS, ["cheap flights to Paris"] * 6, ["Are you looking for hotels?"] * 6)
    fitted = fit_behaviour(people, "six answers")
    assert fitted["dont_know"] == pytest.approx(1 / 6)
    assert fitted["bare"] == pytest.approx(0.4) and fitted["opens_yes_no"] == pytest.approx(2 / 3)
    assert fitted["discloses"] == pytest.approx(0.5)
    assert (fitted["words"][0], fitted["words"][9], fitted["words"][-1], len(fitted["words"])) == (4, 4, 7, 19)
    Behaviour.model_validate(fitted)  # the shape the user reads


def test_a_reply_is_cut_to_its_manner():
    turn = Manner(dont_know=False, bare=True, opens_yes_no=False, discloses=False, words=20)
    assert shaped("No, I would like the cheap ones please.", turn) == "No."
    assert shaped("nope, not really", turn) == "Nope."
    assert shaped("I would like the cheap ones.", turn) == "I would like the cheap ones."  # no yes or no to keep
    capped = Manner(dont_know=False, bare=False, opens_yes_no=False, discloses=True, words=5)
    assert shaped("Yes I do. I want more of the long detail", capped) == "Yes I do."  # the last sentence end within
    assert shaped("one two three four five six seven", capped) == "one two three four five"
    assert shaped("I want the history. Also dates", capped) == "I want the history."  # 6 words: cut at the end
    assert shaped("I want the history. Also", capped) == "I want the history. Also"  # 5: within the cap


def test_the_user_answers_in_its_drawn_manner_and_keeps_the_manner_out_of_its_history():
    scenario = make_scenario("hl-1")
    model = get_model("scripted/verbose-user", memoize=False)
    always_unsure = Behaviour(source="test", dont_know=1, bare=0, opens_yes_no=0, discloses=0, words=[3])
    short = Behaviour(source="test", dont_know=0, bare=0, opens_yes_no=0, discloses=0, words=[3])

    class Unsure(HumanlikeUser):
        behaviour = always_unsure

    class Short(HumanlikeUser):
        behaviour = short

    unsure = Unsure(model, scenario)
    reply = asyncio.run(unsure.reply("How detailed should I be?"))
    assert reply.text in DONT_KNOW_REPLIES and reply.output is None  # no model call
    terse = Short(model, scenario)
    first = asyncio.run(terse.reply("How detailed should I be?"))
    assert first.text == "Well, to be" and first.output is not None  # capped at 3 words
    sent = terse.messages_for("next")
    assert [m.text for m in sent[1:3]] == ["How detailed should I be?", "Well, to be"]  # no manner in the history
    assert isinstance(build_user("humanlike", model, scenario), HumanlikeUser)
    # the draw is the scenario's and the turn's: the same on a rerun, another on the next turn
    behaviour = packaged_behaviour()
    assert manner(behaviour, "s1", 1) == manner(behaviour, "s1", 1)
    draws = [manner(behaviour, f"s{i}", 1) for i in range(400)]
    assert 0.01 < sum(d.dont_know for d in draws) / 400 < 0.08  # the packaged 0.037


def test_the_behaviour_is_in_the_protocol():
    assert protocol_id(RunConfig(user_type="humanlike")) != protocol_id(RunConfig(user_type="passive"))
    assert packaged_behaviour().source.startswith("Qulac") and "fit half" in packaged_behaviour().source


def test_fitted_on_one_half_of_qulac_closer_to_people_than_passive_on_the_other(tmp_path, shared_dir):
    """The packaged behaviour was fitted on the fit topics; on held-out topics, with the same easy-mode model in the
    seat, the human-like user is closer to the people than the passive one: in words, don't know and fidelity."""
    import prefdisco.cli as cli

    cli._register()
    qulac = shared_dir / "data/human/qulac/qulac.json"
    rows = read_reference("qulac", qulac).rows
    fit, held = ({r.topic for r in in_split(rows, s)} for s in ("fit", "heldout"))
    assert fit and held and not fit & held and len(fit) + len(held) == 198  # the two halves of the 198 topics

    refit = tmp_path / "behaviour.json"
    args = ["simfidelity", "--reference", "qulac", str(qulac), "--out", str(tmp_path / "unused")]
    made = CliRunner().invoke(cli.app, [*args, "--topics", "fit", "--fit-humanlike", str(refit)])
    assert made.exit_code == 0, made.output
    assert {k: v for k, v in json.loads(refit.read_text()).items() if k != "source"} == {
        k: v for k, v in packaged_behaviour().model_dump().items() if k != "source"
    }  # the packaged behaviour is the fit half's, as the command makes it
    again = CliRunner().invoke(cli.app, [*args, "--topics", "heldout", "--fit-humanlike", str(refit)])
    assert again.exit_code == 2 and "--fit-humanlike" in again.output and "--overwrite" in again.output
    assert json.loads(refit.read_text())["source"].endswith("fit topics: 4982 answers of 96 topics")  # kept

    out = tmp_path / "held"
    run = ["simfidelity", "--reference", "qulac", str(qulac), "--topics", "heldout", "--limit", "60", "--out", str(out)]
    run += ["--user-type", "passive", "--user-type", "humanlike", "--user-model", "scripted/verbose-user"]
    result = CliRunner().invoke(cli.app, run)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "reference.csv").set_index("simulator")
    people, passive, humanlike = (table.loc[k] for k in ("people", "passive@scripted/verbose-user",
                                                          "humanlike@scripted/verbose-user"))  # fmt: skip
    answers = pd.read_csv(out / "answers.csv")
    assert set(answers["topic"]) <= held and not set(answers["topic"]) & fit  # rows it was not fitted on
    assert abs(humanlike["mean_words"] - people["mean_words"]) < abs(passive["mean_words"] - people["mean_words"])
    assert abs(humanlike["dont_know"] - people["dont_know"]) <= abs(passive["dont_know"] - people["dont_know"])
    assert humanlike["fidelity"] > passive["fidelity"]
    assert passive["mean_words"] == pytest.approx(37.0)  # the easy mode: every reply the 37-word one
