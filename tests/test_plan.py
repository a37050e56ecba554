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
    settings = PlanSettings(preset="paper", protocol="text", max_questions=3, pushback=2, user_retry=1)
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
    tools = rules_for("discovery", PlanSettings(protocol="tools"))
    assert tools.protocol == "tools" and tools.style != preset_named("default").style
    with pytest.raises(ValueError, match="fixed_k mode needs k >= 1"):
        rules_for("fixed_k", settings)
    with pytest.raises(ValueError, match="constrain_protocol needs protocol 'text'"):
        rules_for("discovery", PlanSettings(protocol="tools", constrain_protocol=True))


def test_whether_a_dialogue_needs_a_user_is_one_rule():
    """Asking conditions talk to the person; a single-turn one only when the person pushes back (the solvers, the
    model loop and the dry run read ``DialogueRules.needs_user``, three copies of it before)."""
    quiet, pushed = PlanSettings(), PlanSettings(pushback=1)
    assert not rules_for("oracle", quiet).needs_user and rules_for("oracle", pushed).needs_user
    assert rules_for("discovery", quiet).needs_user and rules_for("fixed_k", quiet, 1).needs_user
    assert rules_for("discovery", PlanSettings(max_questions=0)).needs_user  # may not ask, still a dialogue
    source = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    assert "not rules.single_turn" not in source and "not plan.rules.single_turn or" not in source
