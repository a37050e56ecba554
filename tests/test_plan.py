"""One owner of a condition's rules (``dialogue/plan.py``, issue 31, defect 4): every driver takes its
``DialogueRules`` from ``rules_for``; what each condition gets, by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prefdisco.dialogue.plan import PlanSettings, rules_for
from prefdisco.dialogue.presets import preset_named
from prefdisco.schema import MODES

SRC = Path(__file__).resolve().parents[1] / "src" / "prefdisco"


def test_rules_are_made_in_the_plan_only():
    makers = sorted(
        p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if re.search(r"\bDialogueRules\(", p.read_text())
    )
    assert makers == ["dialogue/dialogue_state.py", "dialogue/plan.py"]


def test_each_condition_gets_its_rules_and_every_setting_reaches_it():
    settings = PlanSettings(preset="paper", ask="text", max_questions=3, pushback=2, user_retry=1)
    got = {m: rules_for(m, settings, 2 if m == "fixed_k" else None) for m in MODES}
    for m in ("baseline", "oracle", "wrong_persona", "oracle_distractor"):
        r = got[m]
        assert (r.single_turn, r.limit, r.pushback, r.condition) == (True, 0, 2, m)
        assert r.style == preset_named("paper").style
    for m in ("discovery", "stated_belief", "carry_transcript", "carry_notes"):
        r = got[m]
        assert (r.single_turn, r.limit, r.forced, r.pushback, r.user_retry) == (False, 3, False, 2, 1), m
    k = got["fixed_k"]
    assert (k.condition, k.limit, k.forced, k.pushback, k.user_retry) == ("fixed_k2", 2, True, 2, 1)
    tools = rules_for("discovery", PlanSettings(ask="tools"))
    assert tools.ask == "tools" and tools.style != preset_named("default").style
    with pytest.raises(ValueError, match="fixed_k mode needs k >= 1"):
        rules_for("fixed_k", settings)
    with pytest.raises(ValueError, match="constrain_ask needs ask 'text'"):
        rules_for("discovery", PlanSettings(ask="tools", constrain_ask=True))


def test_whether_a_dialogue_needs_a_user_is_one_rule():
    """Asking conditions talk to the person; a single-turn one only when the person pushes back (the solvers, the
    model loop and the dry run read ``DialogueRules.needs_user``, three copies of it before)."""
    quiet, pushed = PlanSettings(), PlanSettings(pushback=1)
    assert not rules_for("oracle", quiet).needs_user and rules_for("oracle", pushed).needs_user
    assert rules_for("discovery", quiet).needs_user and rules_for("fixed_k", quiet, 1).needs_user
    assert rules_for("discovery", PlanSettings(max_questions=0)).needs_user  # may not ask, still a dialogue
    source = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    assert "not rules.single_turn" not in source and "not plan.rules.single_turn or" not in source


def test_a_conditions_opening_is_made_from_the_scenario_and_the_samples_metadata():
    """The solvers and the dry run take a condition's opening from ``opening_for``: the decoy, the distractors and
    the stated wrong answer come from the sample's metadata (as the run writes it), never from a copy."""
    from prefdisco.dialogue.decoys import DECOY_KEY, Decoy
    from prefdisco.dialogue.distractors import DISTRACTOR_KEY
    from prefdisco.dialogue.plan import opening_for
    from prefdisco.dialogue.wrong_answers import WRONG_ANSWER_KEY
    from prefdisco.schema import PreferenceItem
    from scripted import make_scenario

    scenario = make_scenario("s1", values=("deep", "analogy", "jargon"))
    decoy = make_scenario("s2", values=("terse", "plain", "simple"))
    quiet = PlanSettings(max_questions=2)

    def text(condition, metadata=None, k=None):
        rules = rules_for(condition, quiet, k)
        return "\n".join(m.text for m in opening_for(condition, rules, scenario, metadata or {}))

    assert "deep" in text("oracle") and "deep" not in text("baseline")
    shown = text("wrong_persona", {DECOY_KEY: Decoy.of(decoy).model_dump(mode="json")})
    assert "terse" in shown and "deep" not in shown
    with pytest.raises(ValueError, match="wrong_persona needs a decoy"):
        text("wrong_persona")
    extra = PreferenceItem(attribute="Humor", value="dry jokes", weight=0.0)
    assert "dry jokes" in text("oracle_distractor", {DISTRACTOR_KEY: [extra.model_dump(mode="json")]})
    assert "I'm fairly sure the answer is 42" in text("stated_belief", {WRONG_ANSWER_KEY: "42"})
    assert "2" in text("discovery") and text("fixed_k", k=1) != text("discovery")
