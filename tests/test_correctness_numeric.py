"""MaScQA numeric-range correctness and number reading, on real rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import benchmark_rows
from prefdisco.answer_spec import IntegerAnswer, NotJudgeable, RangeAnswer
from prefdisco.benchmarks import load_generic
from prefdisco.errors import UserError
from prefdisco.schema import Problem
from prefdisco.scoring.correctness import check_correct_offline
from prefdisco.scoring.extract.numbers import final_number, find_numbers


@pytest.fixture(scope="module")
def mascqa_num(shared_benchmarks: Path) -> list[Problem]:
    return benchmark_rows.mascqa_num(shared_benchmarks)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.2e-3", 1.2e-3),
        ("1.2E+03 J", 1200.0),
        ("1.2 × 10^-3 m", 1.2e-3),
        ("1.2 \\times 10^{-3}", 1.2e-3),
        ("1.2 x 10⁻³", 1.2e-3),
        ("12,345.6 J/mol", 12345.6),
        ("6\\,850 Å", 6850.0),
        ("−0.92", -0.92),
    ],
)
def test_number_reading(text: str, value: float) -> None:
    nums = find_numbers(text)
    assert len(nums) == 1 and nums[0][0] == pytest.approx(value), nums


def test_final_number_skips_unit_exponents() -> None:
    assert final_number("so the strain rate is 3.5 × 10^-4 s^{-1}")[0] == pytest.approx(3.5e-4)  # type: ignore[index]
    assert final_number("The area is 25 m^2")[0] == 25  # type: ignore[index]
    assert final_number("The answer is 0.87 μm (within 0.85–0.89).")[0] == 0.87  # type: ignore[index]


def gold_ranges(p: Problem) -> list[tuple[float, float, bool]] | None:
    """The problem's accepted ranges as (lo, hi, single) from its answer spec; None when not judgeable."""
    if isinstance(p.answer_spec, NotJudgeable):
        return None
    assert isinstance(p.answer_spec, RangeAnswer), p.answer_spec
    return [(r.lo, r.hi, r.single) for r in p.answer_spec.ranges]


def test_mascqa_gold_quirks(mascqa_num: list[Problem]) -> None:
    golds = {p.metadata["gold_raw"]: gold_ranges(p) for p in mascqa_num}
    assert golds["0.85 to 0.89"] == [(0.85, 0.89, False)]
    assert golds["6850 : 6950"] == [(6850, 6950, False)]
    assert golds["48O TO 494"] == [(480, 494, False)]
    assert golds["350 T0 350"] == [(350, 350, False)]
    assert golds["0.90 TO 0.94 OR -0.94 TO -0.90"] == [(0.9, 0.94, False), (-0.94, -0.9, False)]
    assert golds["840000"] == [(840000, 840000, True)]
    assert golds["Marks to all"] is None
    assert all(v is None or len(v) >= 1 for v in golds.values())  # every NUM gold parses
    singles = [p for p in mascqa_num if (g := gold_ranges(p)) and any(single for _, _, single in g)]
    assert len(singles) == 23  # the single-number golds that keep their 1 % tolerance


def test_mascqa_ranges_inside_boundary_outside(mascqa_num: list[Problem]) -> None:
    checked = 0
    for p in mascqa_num:
        ranges = gold_ranges(p)
        if ranges is None or ranges[0][2]:
            continue
        lo, hi, _ = ranges[0]
        mid = (lo + hi) / 2
        width = max(hi - lo, abs(hi) * 0.05, 1e-6)
        for value in (lo, hi, mid):
            result = check_correct_offline(p, f"Working through the numbers, the answer is {value:.10g} units.")
            assert result.correct is True, (p.answer, value, result)
        for value in (hi + width, lo - width):
            if len(ranges) > 1 and any(a <= value <= b for a, b, _ in ranges):
                continue
            result = check_correct_offline(p, f"The final answer is {value:.10g}.")
            assert result.correct is False, (p.answer, value, result)
        sci = f"{mid:.6e}".replace("e", " × 10^")
        assert check_correct_offline(p, f"So x ≈ {sci} (rounded)").correct is True, (p.answer, sci)
        checked += 1
    assert checked >= 150


def test_mascqa_scientific_notation_and_separators() -> None:
    p = Problem(id="n", benchmark="mascqa", question="q", answer="0.0011 to 0.0013", answer_type="numeric_range")
    assert check_correct_offline(p, "The answer is 1.2e-3 mol").correct is True
    assert check_correct_offline(p, "The answer is 1.2 × 10^-3 mol").correct is True
    assert check_correct_offline(p, "The answer is 1.2 \\times 10^{-3}").correct is True
    assert check_correct_offline(p, "The answer is 1.2 × 10^-2 mol").correct is False
    big = Problem(id="b", benchmark="mascqa", question="q", answer="9600 to 9800", answer_type="numeric_range")
    assert check_correct_offline(big, "≈ 9,700 J").correct is True
    assert check_correct_offline(big, "≈ 9,900 J").correct is False


def test_mascqa_single_value_gold_uses_one_percent(mascqa_num: list[Problem]) -> None:
    p = next(p for p in mascqa_num if p.metadata["gold_raw"] == "840000")
    assert check_correct_offline(p, "The answer is 8.45 × 10^5").correct is True  # 0.6% off
    assert check_correct_offline(p, "The answer is 850000").correct is False  # 1.2% off


def test_mascqa_voided_rows_are_not_judged(mascqa_num: list[Problem]) -> None:
    voided = [p for p in mascqa_num if gold_ranges(p) is None]
    assert len(voided) == 2
    for p in voided:
        result = check_correct_offline(p, "The answer is 3.")
        assert result.correct is None and "voided" in result.detail


def test_golds_with_thousands_separators_load_as_one_number(tmp_path: Path) -> None:
    """A mapped dataset (``--map``) whose golds group thousands with commas, through the real loader."""

    def write(name: str, *golds: str) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"q": "How many?", "a": g}) + "\n" for g in golds), encoding="utf-8")
        return path

    (integer,) = load_generic(write("int.jsonl", "1,000"), "question=q,answer=a,answer_type=integer")
    assert integer.answer_spec == IntegerAnswer(accepted=[1000])  # was [1, 0]: "1" and "0" accepted
    assert [check_correct_offline(integer, r).correct for r in ("\\boxed{1,000}", "\\boxed{1}", "0")] == [
        True, False, False,
    ]  # fmt: skip
    wide, single = load_generic(
        write("num.jsonl", "1,000 to 2,000", "58,500"), "question=q,answer=a,answer_type=numeric_range"
    )
    # 1000..2000 (widened by 1e-6 only); 58500 ± 1 % = 57915..59085
    assert [check_correct_offline(wide, f"It is {v}.").correct for v in ("1,500", "1000", "2,000", "2,001", "999")] == [
        True, True, True, False, False,
    ]  # fmt: skip
    assert [check_correct_offline(single, f"m = {v} kg").correct for v in ("58,500", "59,000", "59,100", "57,900")] == [
        True, True, False, False,
    ]  # fmt: skip
    # a comma list is not one integer, and the loader says so for an integer column
    with pytest.raises(UserError, match="gold '12, 5' in field 'a' is not an integer"):
        load_generic(write("list.jsonl", "12, 5"), "question=q,answer=a,answer_type=integer")
