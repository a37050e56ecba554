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

don't know 1/6; bare 2 of the 5 others = 0.4; opens yes/no 2 of the 3 full answers; discloses 3 of the 3 full
answers = 1.0 (fitted as the user applies it: of the full answers; over all six it is 3/6 = 0.5); the word counts of
the full answers 4, 4, 7: their 5th percentile 4, median 4, 95th 6.7 → 7.
"""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from inspect_ai.model import get_model
from typer.testing import CliRunner

from prefdisco.dialogue.humanlike import DONT_KNOW_REPLIES, Behaviour, Manner, manner, packaged_behaviour, shaped
from prefdisco.dialogue.user import HumanlikeUser, build_user
from prefdisco.dialogue.user_reply import redraw
from prefdisco.evaluation.protocol.protocols import protocol_id
from prefdisco.evaluation.settings.config import RunConfig
from prefdisco.seeds import call_seed, seed_scope, seeded_model
from prefdisco.simfidelity.answer_behaviour import fit_behaviour, measure, measured, party_statistics
from prefdisco.simfidelity.rows import in_split, read_reference
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
    assert fitted["discloses"] == pytest.approx(1.0)  # of the full answers, as it is applied
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
    assert manner(behaviour, 7, "s1", 1) == manner(behaviour, 7, "s1", 1)
    draws = [manner(behaviour, None, f"s{i}", 1) for i in range(400)]
    assert 0.01 < sum(d.dont_know for d in draws) / 400 < 0.08  # the packaged 0.037


NEED, QUESTION = "cheap flights to Paris", "Are you looking for hotels?"
HALF_UNSURE = Behaviour(source="test", dont_know=0.5, bare=0, opens_yes_no=0, discloses=0, words=[30])


def asked(messages) -> str:
    """A user model that follows the manner's note: a bare yes or no when asked for one, the need when asked to say
    what it is looking for, else a reply that tells nothing of it."""
    note = messages[-1].text
    if "answer with only yes or no" in note:
        return "No."
    return NEED if "say in your own words" in note else "Something else entirely."


SCRIPTS["asked-user"] = asked


class HalfUnsure(HumanlikeUser):
    behaviour = HALF_UNSURE


def first_replies(seed: int, epoch: int, n: int = 40) -> list[str]:
    """The first reply of the human-like user of scenarios hl-0..hl-(n-1), each built as a run builds it: its model
    sending the trial's user call seed (``seeds.call_seed`` of ``--seed``, the scenario, the condition, the trial)."""
    model = get_model("scripted/asked-user", memoize=False)

    async def one(i: int) -> str:
        sid = f"hl-{i}"
        seeded = seeded_model(model, call_seed(seed_scope(seed), sid, "discovery", epoch, "user"))
        return (await HalfUnsure(seeded, make_scenario(sid)).reply(QUESTION)).text

    async def every() -> list[str]:
        return list(await asyncio.gather(*(one(i) for i in range(n))))

    return asyncio.run(every())


def test_the_manner_is_drawn_from_the_call_seeds_so_seed_and_trial_draw_anew():
    """Half the turns a don't-know (``HALF_UNSURE``): the first turns of 40 scenarios under ``--seed 0`` trial 1, the
    same again (a rerun: the same draws), trial 2 and ``--seed 1`` (other draws: with 40 fair coins, the chance two
    patterns agree is 2**-40). A redraw of a flagged reply (its model sending another seed) keeps the turn's
    manner: the seed is the one the user was built with."""
    trials = ((0, 1), (0, 2), (1, 1))
    unsure = [[text in DONT_KNOW_REPLIES for text in first_replies(seed, epoch)] for seed, epoch in trials]
    assert [text in DONT_KNOW_REPLIES for text in first_replies(0, 1)] == unsure[0]
    assert unsure[0] != unsure[1] and unsure[0] != unsure[2]
    assert all(5 < sum(u) < 35 for u in unsure)  # about half each time
    model = get_model("scripted/asked-user", memoize=False)
    [sid] = [f"hl-{i}" for i, u in enumerate(unsure[0]) if not u][:1]
    user = HalfUnsure(seeded_model(model, call_seed(seed_scope(0), sid, "discovery", 1, "user")), make_scenario(sid))
    first = asyncio.run(user.reply(QUESTION))
    again = asyncio.run(redraw(user, QUESTION, 1, []))
    assert again is not None and (first.text, again.text) == ("Something else entirely.", "Something else entirely.")


def test_a_dont_know_reply_is_counted_as_a_dont_know_not_a_no():
    """Every fixed don't-know reply of the user is a don't-know under the measure and no "no": "No idea." and "Not
    sure, sorry." open with a no-word ("no", "not") but are no answer of no; "No." and "No, I don't know." still
    start with no."""
    for reply in DONT_KNOW_REPLIES:
        measures = measure(reply, NEED, QUESTION)
        assert measures["dont_know"] and not measures["starts_no"] and not measures["bare_yes_no"], reply
        assert measures["polarity"] is None, reply
    assert measure("No.", NEED, QUESTION)["starts_no"] and measure("No, I don't know.", NEED, QUESTION)["starts_no"]


def test_disclosure_is_fitted_as_it_is_applied_so_the_user_discloses_as_often_as_the_people():
    """The six people of the module docstring disclose in 3 of 6 answers. Fitted on them, the user says it does not
    know in 1/6 of its turns, answers bare in 0.4 of the rest, and in the full answers left (5/6 · 0.6 = 1/2 of its
    turns) discloses with probability 1.0: over all its turns 1/6 · 0 + 5/6 · (0.4 · 0 + 0.6 · 1.0) = 0.5, the
    people's 3/6. (Fitted over all six answers, 0.5, and applied to full answers only, it disclosed in 0.25.) With a
    user model that says the need exactly when asked to, 600 scenarios' first turns: 0.5 ± 0.06 (4 standard
    errors)."""
    people = measured(ANSWERS, [NEED] * 6, [QUESTION] * 6)
    assert party_statistics(people)["discloses_any"] == pytest.approx(0.5)
    fitted = Behaviour.model_validate(fit_behaviour(people, "six answers"))

    class Fitted(HumanlikeUser):
        behaviour = fitted

    model = get_model("scripted/asked-user", memoize=False)

    async def every() -> list[str]:
        users = [Fitted(model, make_scenario(f"hl-{i}")) for i in range(600)]
        return [r.text for r in await asyncio.gather(*(u.reply(QUESTION) for u in users))]

    replies = asyncio.run(every())
    told = party_statistics(measured(replies, [NEED] * len(replies), [QUESTION] * len(replies)))
    assert told["discloses_any"] == pytest.approx(0.5, abs=0.06), told
    assert told["dont_know"] == pytest.approx(1 / 6, abs=0.06)


def test_the_behaviour_is_in_the_protocol():
    assert protocol_id(RunConfig(user_type="humanlike")) != protocol_id(RunConfig(user_type="passive"))
    assert packaged_behaviour().source.startswith("Qulac") and "fit half" in packaged_behaviour().source


def test_the_packaged_behaviour_is_the_fit_of_the_fit_half_and_no_flag_writes_an_unread_profile(tmp_path, shared_dir):
    """The packaged behaviour is ``fit_behaviour`` of the people of Qulac's fit topics (the real file through the
    real reader), so its provenance is checked, not asserted. ``--fit-humanlike FILE`` is gone: it wrote a profile
    that no command read (a run's humanlike user is the packaged one, in its protocol's prompt hash)."""
    import prefdisco.cli as cli

    cli._register()
    qulac = shared_dir / "data/human/qulac/qulac.json"
    rows = read_reference("qulac", qulac).rows
    fit, held = ({r.topic for r in in_split(rows, s)} for s in ("fit", "heldout"))
    assert fit and held and not fit & held and len(fit) + len(held) == 198  # the two halves of the 198 topics
    half = in_split(rows, "fit")
    fitted = fit_behaviour(measured([r.answer for r in half], [r.need for r in half], [r.question for r in half]), "")
    assert {k: v for k, v in fitted.items() if k != "source"} == {
        k: v for k, v in packaged_behaviour().model_dump().items() if k != "source"
    }
    assert packaged_behaviour().source.endswith("fit half of its topics (CRC-32 of the topic id even): 4982 answers "
                                                "of 96 topics")  # fmt: skip
    args = ["simfidelity", "--reference", "qulac", str(qulac), "--out", str(tmp_path / "unused")]
    gone = CliRunner().invoke(cli.app, [*args, "--topics", "fit", "--fit-humanlike", str(tmp_path / "b.json")])
    assert gone.exit_code == 2 and "No such option" in gone.output and not (tmp_path / "b.json").exists()


PLANTED_WORDS = [f"item{i}" for i in range(20)]
PLANTED = [
    (f"t{i}", f"topic {i}", "inf", f"information about {w} prices", "are you looking for its history",
     f"no i want the {w} prices" if i % 2 == 0 else f"yes the {w} prices please")
    for i, w in enumerate(PLANTED_WORDS)
]  # fmt: skip
"""20 people: the ten even rows answer "no i want the <w> prices" (6 words), the ten odd "yes the <w> prices
please" (5 words); each discloses its whole need beyond the question (<w>, price)."""
PEOPLE = {row[3]: row[5] for row in PLANTED}


def _person(messages) -> str:
    """The person's answer of the row whose need the user's system prompt holds."""
    return next(answer for need, answer in PEOPLE.items() if need in messages[0].text)


SCRIPTS["echo4"] = lambda messages: " ".join([_person(messages)] * 4)
SCRIPTS["never-no"] = lambda messages: _person(messages).replace("no i want", "well i want", 1)


def test_closer_to_people_is_read_per_statistic_never_from_the_composite(tmp_path):
    """Issue 45, defect 8c: two planted simulators, each off the people on a planted statistic, through
    ``prefdisco simfidelity --reference``. ``echo4`` says each person's answer four times (every statistic as the
    people's but the words: ×4), ``never-no`` says it with "no" turned into "well" (every statistic as the people's
    but the no-openings). By hand, people: mean words (10·6 + 10·5)/20 = 5.5, starts no 0.5, starts yes 0.5,
    disclosure 1.

    * echo4: distance of the mean words 1 − 5.5/22 = 0.75 in every resample (each reply four times its person's),
      every other distance 0: reference fidelity 1 − 0.75/8 = 0.90625.
    * never-no: starts no 0 (distance 0.5: in a resample, the share s of its rows that are even ones), polarity
      agreement 1 − s (distance s), every other distance 0: reference fidelity 1 − (0.5 + 0.5)/8 = 0.875.

    The composite ranks echo4 first; per statistic, never-no is closer on the mean words (difference +0.75 in every
    resample), echo4 on starts no and polarity agreement (difference −s < 0 unless a resample draws no even row:
    2**-20), and the other five are not told apart (0 in every resample). The composites' difference 0.09375 − s/4
    changes sign at s = 0.375, inside s's interval (about [0.3, 0.7] for 20 fair rows): not told apart either."""
    import prefdisco.cli as cli
    from test_reference import write_qulac

    cli._register()
    write_qulac(tmp_path / "q.json", PLANTED, facet_record=False)
    out = tmp_path / "out"
    run = ["simfidelity", "--reference", "qulac", str(tmp_path / "q.json"), "--out", str(out), "--bootstrap", "500"]
    run += ["--user-type", "passive", "--user-model", "scripted/echo4"]
    run += ["--user-type", "passive", "--user-model", "scripted/never-no"]
    result = CliRunner().invoke(cli.app, run)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "reference.csv").set_index("simulator")
    echo, never = table.loc["passive@scripted/echo4"], table.loc["passive@scripted/never-no"]
    assert table.loc["people", ["mean_words", "starts_no", "starts_yes", "disclosure"]].tolist() == [5.5, 0.5, 0.5, 1]
    assert echo["reference_fidelity"] == pytest.approx(0.90625) and never["reference_fidelity"] == pytest.approx(0.875)
    assert (echo["rank"], never["rank"]) == (1, 2)  # the composite's order
    assert (echo["distance_mean_words"], echo["distance_mean_words_low"]) == pytest.approx((0.75, 0.75))
    assert (never["distance_starts_no"], never["distance_polarity_agreement"]) == pytest.approx((0.5, 0.5))
    assert 0 < never["distance_starts_no_low"] < 0.5 < never["distance_starts_no_high"] < 1
    pairs = pd.read_csv(out / "reference_pairs.csv").set_index("statistic")
    assert set(pairs["simulator"]) == {"passive@scripted/echo4"} and set(pairs["other"]) == {
        "passive@scripted/never-no"
    }
    verdict = pairs["closer"].to_dict()
    assert verdict == {
        "mean_words": "passive@scripted/never-no",
        "starts_no": "passive@scripted/echo4",
        "starts_yes": "not told apart",
        "bare_yes_no": "not told apart",
        "dont_know": "not told apart",
        "disclosure": "not told apart",
        "discloses_any": "not told apart",
        "polarity_agreement": "passive@scripted/echo4",
        "reference_fidelity": "not told apart",
    }
    assert (pairs.loc["mean_words", "difference_low"], pairs.loc["mean_words", "difference_high"]) == pytest.approx(
        (0.75, 0.75)
    )
    assert pairs.loc["reference_fidelity", "difference"] == pytest.approx(0.875 - 0.90625)  # distances: 1 − each
    said = " ".join(result.output.split())
    assert (
        "passive@scripted/echo4 vs passive@scripted/never-no: closer to people per statistic: passive@scripted/echo4 "
        "on starts no, polarity agreement; passive@scripted/never-no on mean words; not told apart on starts yes, "
        "bare yes/no, don't know, disclosure, discloses any (composite: not told apart)"
    ) in said


def test_on_held_out_topics_the_humanlike_users_gain_over_passive_is_read_per_statistic(tmp_path, shared_dir):
    """The packaged behaviour was fitted on the fit topics; on held-out topics, with one easy-mode model in the seat
    (every reply the same 37 words, no yes or no: ``VERBOSE``), the human-like user is closer to the people than
    the passive one on the mean words (its cap: at most 15 words against 37, people about 8) and on nothing that
    the model itself does not do: neither user ever opens with yes or no (the verbose reply opens "Well", the
    don't-know replies are don't-knows, not noes), so on starts no, starts yes, bare yes/no and polarity agreement
    their distances are equal in every resample and they are not told apart."""
    import prefdisco.cli as cli

    cli._register()
    qulac = shared_dir / "data/human/qulac/qulac.json"
    held = {r.topic for r in in_split(read_reference("qulac", qulac).rows, "heldout")}
    out = tmp_path / "held"
    run = ["simfidelity", "--reference", "qulac", str(qulac), "--topics", "heldout", "--limit", "60", "--out", str(out)]
    run += ["--user-type", "passive", "--user-type", "humanlike", "--user-model", "scripted/verbose-user"]
    run += ["--bootstrap", "200"]
    result = CliRunner().invoke(cli.app, run)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "reference.csv").set_index("simulator")
    passive, humanlike = (table.loc[f"{k}@scripted/verbose-user"] for k in ("passive", "humanlike"))
    assert set(pd.read_csv(out / "answers.csv")["topic"]) <= held  # rows it was not fitted on
    assert passive["mean_words"] == pytest.approx(37.0) and humanlike["mean_words"] <= 15
    assert (passive["starts_no"], humanlike["starts_no"], humanlike["bare_yes_no"]) == (0, 0, 0)
    pairs = pd.read_csv(out / "reference_pairs.csv").set_index("statistic")
    assert pairs.loc["mean_words", "closer"] == "humanlike@scripted/verbose-user"
    for name in ("starts_no", "starts_yes", "bare_yes_no", "polarity_agreement"):
        assert pairs.loc[name, "closer"] == "not told apart", name
        assert (pairs.loc[name, "difference_low"], pairs.loc[name, "difference_high"]) == (0, 0), name
