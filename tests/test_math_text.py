"""The pages people read draw the problems' LaTeX (issue 35, class 7): math segments become MathML, the text around
them stays escaped text, "$5 and $10" stays money, a segment the converter cannot read is shown as written, and no
markup smuggled through LaTeX (``\\text{<script>}``) reaches the page as markup."""

from __future__ import annotations

import re

from inspect_ai.model import get_model

from play_world import JUDGE, MODEL
from prefdisco.annotate.auth import Tokens
from prefdisco.annotate.math_text import math_html
from prefdisco.annotate.play_app import create_play_app
from prefdisco.schema import Problem
from scripted import make_scenario
from test_annotate_play import logged_in, study_db


def test_math_segments_become_mathml_and_the_rest_stays_text():
    page = str(math_html(r"Find $\frac{3}{4} + x^2$ when \(x = 2\); then $$\int_0^1 t\,dt$$ and \[a^2 + b^2\] <b>."))
    assert page.count("<math ") == 4
    assert page.count('display="inline"') == 2 and page.count('display="block"') == 2
    assert "<mfrac><mrow><mn>3</mn></mrow><mrow><mn>4</mn></mrow></mfrac>" in page
    assert "<msup><mi>x</mi><mn>2</mn></msup>" in page
    assert page.endswith(" and &lt;b&gt;.") or "&lt;b&gt;." in page  # the text around stays escaped
    assert "$" not in page and "\\frac" not in page


def test_money_text_and_unreadable_math_stay_as_written():
    assert str(math_html("It costs $5 and $10 a day.")) == "It costs $5 and $10 a day."
    assert str(math_html(r"Bad $\frac{1}{$ here")) == r"Bad $\frac{1}{$ here"
    assert str(math_html("a < b & c")) == "a &lt; b &amp; c"
    assert str(math_html(None)) == "" and str(math_html("")) == ""


def test_no_markup_passes_through_latex():
    page = str(math_html(r"$\text{<script>alert(1)</script>}$ and $\text{<img src=x onerror=alert(2)>}$"))
    assert "<script" not in page and "<img" not in page  # the second is no XML: shown as written, escaped
    tags = set(re.findall(r"<([a-z]+)", page))
    assert tags <= {"math", "mrow", "mtext", "mi", "mo", "mn"}, tags


def test_the_play_page_draws_the_problems_latex(tmp_path):
    base = make_scenario("play-1")
    problem = Problem.model_validate(
        {**base.problem.model_dump(), "question": r"What is $\frac{12}{4}$ rounded up, given $x^2 = 9$?"}
    )
    db = study_db(tmp_path, scenarios=[base.model_copy(update={"problem": problem})])
    page = logged_in(create_play_app(db, get_model(MODEL), get_model(JUDGE), Tokens()), "alice").get("/play/1").text
    task = page[page.index('id="task-text"') :].split("</div>", 1)[0]
    assert "<mfrac><mrow><mn>12</mn></mrow><mrow><mn>4</mn></mrow></mfrac>" in task and "\\frac" not in task
