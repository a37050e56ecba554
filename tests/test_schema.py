from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from prefdisco.analysis.stats.normalign import norm_align
from prefdisco.schema import AttributeJudgement, PreferenceItem, PreferenceProfile, Problem, RubricCriterion
from prefdisco.scoring.alignment import pref_align
from scripted import make_scenario


def test_profile_weights_must_sum_to_one():
    with pytest.raises(ValidationError, match=r"weights must sum to 1, got 0\.7"):
        make_scenario(weights=(0.4, 0.2, 0.1))


def test_negative_weight_rejected():
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        PreferenceItem(attribute="a", value="v", weight=-0.1)


def test_a_profile_attribute_of_weight_0_is_refused():
    """It would add nothing to PrefAlign = Σ w·g and still be judged (and paid for) in every condition."""
    items = [PreferenceItem(attribute="a", value="v", weight=1.0), PreferenceItem(attribute="b", value="v", weight=0.0)]
    with pytest.raises(ValidationError, match="profile attribute\\(s\\) of weight 0: b "):
        PreferenceProfile(items=items)
    with pytest.raises(ValueError, match="of weight 0: b "):
        PreferenceProfile.normalized(items, weights=[3, 0])


def test_duplicate_profile_attribute_rejected():
    items = [PreferenceItem(attribute="a", value="v", weight=0.5)] * 2
    with pytest.raises(ValidationError, match="more than once: a"):
        PreferenceProfile(items=items)


def test_normalized_profile_sums_exactly_to_one_and_leaves_input_alone():
    items = [PreferenceItem(attribute=n, value="v", weight=0.0) for n in "abc"]
    profile = PreferenceProfile.normalized(items, weights=[5, 2, 4])
    assert math.fsum(i.weight for i in profile.items) == pytest.approx(1.0, abs=1e-15)
    assert profile.weight_of("a") == pytest.approx(5 / 11)
    assert [i.weight for i in items] == [0.0, 0.0, 0.0]
    thirds = PreferenceProfile.normalized([i.model_copy(update={"weight": 0.1}) for i in items])
    assert [i.weight for i in thirds.items] == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="sum to 0"):
        PreferenceProfile.normalized(items)


def test_rubric_needs_every_level():
    with pytest.raises(ValidationError, match=r"missing \[4\]"):
        RubricCriterion(attribute="a", preferred_value="v", description="d", levels={1: "x", 2: "x", 3: "x", 5: "x"})
    with pytest.raises(ValidationError, match=r"unexpected \[6\]"):
        RubricCriterion(attribute="a", preferred_value="v", description="d", levels={i: "x" for i in range(1, 7)})


def test_rubric_must_match_profile():
    scenario = make_scenario()
    data = scenario.model_dump()
    data["rubric"] = data["rubric"][:2]
    with pytest.raises(ValidationError, match="no criterion for profile attribute"):
        type(scenario).model_validate(data)


def test_letter_answer_must_be_an_option():
    with pytest.raises(ValidationError, match="not one of the option letters"):
        Problem(id="x", benchmark="b", question="q", choices=["1", "2", "3"], answer="D", answer_type="letter")


def test_judgement_valid_iff_scored():
    with pytest.raises(ValidationError):
        AttributeJudgement(attribute="a", weight=0.5, score=None, valid=True)
    with pytest.raises(ValidationError):
        AttributeJudgement(attribute="a", weight=0.5, score=3, valid=False)


def judgement(w, s):
    return AttributeJudgement(attribute=f"a{w}{s}", weight=w, score=s, valid=s is not None)


def test_pref_align_is_weighted_sum():
    assert pref_align([judgement(0.5, 4), judgement(0.3, 2), judgement(0.2, 5)]) == pytest.approx(
        0.5 * 4 + 0.3 * 2 + 0.2 * 5
    )


def test_invalid_judgement_is_excluded_not_zeroed():
    # 0.5*4 + 0.2*5 over the valid weight 0.7
    assert pref_align([judgement(0.5, 4), judgement(0.3, None), judgement(0.2, 5)]) == pytest.approx(3.0 / 0.7)
    assert pref_align([judgement(1.0, None)]) is None


def test_norm_align():
    assert norm_align(2.0, 3.0, 4.0) == (50.0, "")
    assert norm_align(2.0, 1.5, 4.0)[0] == pytest.approx(-25.0)
    value, reason = norm_align(3.0, 3.5, 3.0)
    assert value is None and "denominator 0" in reason
    value, reason = norm_align(None, 3.5, 3.0)
    assert value is None and "baseline" in reason


def test_the_answer_spec_is_read_on_load_and_never_written() -> None:
    from prefdisco.answer_spec import NotJudgeable, RangeAnswer
    from prefdisco.schema import Problem

    p = Problem(id="p", benchmark="mascqa", question="q", answer="0.85 to 0.89", answer_type="numeric_range")
    assert isinstance(p.answer_spec, RangeAnswer) and "answer_spec" not in p.model_dump()
    back = Problem.model_validate_json(p.model_dump_json())
    assert back.answer_spec == p.answer_spec
    blank = Problem(id="b", benchmark="csqa", question="q", choices=["a", "b"], answer=" ", answer_type="letter")
    assert isinstance(blank.answer_spec, NotJudgeable)
    with pytest.raises(ValidationError, match="not one of the option letters"):
        Problem(id="z", benchmark="csqa", question="q", choices=["a", "b"], answer="Z", answer_type="letter")
