"""How ``inspect view`` shows a PrefDisco log: the task's viewer configuration (``Task(viewer=…)``).

inspect's log viewer lists a task's samples with its own default columns. A PrefDisco task names the ones a
reader of a PrefDisco log looks for, in order: the scenario, the trial, PrefAlign (1-5, coloured from red to
green on that fixed range), correctness, the questions asked, the simulated user's flagged replies (``user_flags``,
0 green, more red), the general quality, and the tokens; the answer and the input are kept, hidden. Samples are
sorted by PrefAlign, lowest first, so the worst personalized answers are on top. A ``--judge later`` log, whose
samples are not judged yet, shows what its pending score holds (the questions, the flags).
"""

from __future__ import annotations

from inspect_ai.viewer import ScoreColorScale, TaskSamplesColumn, TaskSamplesSort, TaskSamplesView, ViewerConfig

from prefdisco.scoring.deferred import JUDGED_SCORE, PENDING_SCORE

JUDGED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("pref_align", "PrefAlign"),
    ("correct", "Correct"),
    ("n_questions", "Questions"),
    ("user_flags", "Flagged user turns"),
    ("quality", "Quality"),
)
PENDING_COLUMNS: tuple[tuple[str, str], ...] = (("n_questions", "Questions"), ("user_flags", "Flagged user turns"))


def viewer_config(judged: bool) -> ViewerConfig:
    """The sample list of a task whose samples are scored by ``prefdisco_scorer`` (``judged``) or wait for their
    judging under ``prefdisco_dialogue``."""
    scorer, shown = (JUDGED_SCORE, JUDGED_COLUMNS) if judged else (PENDING_SCORE, PENDING_COLUMNS)
    columns = [
        TaskSamplesColumn(id="sampleId"),
        TaskSamplesColumn(id="epoch"),
        *(TaskSamplesColumn.score(scorer, name) for name, _ in shown),
        TaskSamplesColumn(id="answer", visible=False),
        TaskSamplesColumn(id="input", visible=False),
        TaskSamplesColumn(id="tokens"),
        TaskSamplesColumn(id="error"),
    ]
    scales: dict[str, ScoreColorScale] = {"user_flags": ScoreColorScale(palette="good-low", min=0)}
    if judged:
        scales |= {
            "pref_align": ScoreColorScale(palette="good-high", min=1, max=5),
            "quality": ScoreColorScale(palette="good-high", min=1, max=5),
        }
    return ViewerConfig(
        task_samples_view=TaskSamplesView(
            name="PrefDisco",
            columns=columns,
            sort=[TaskSamplesSort.score(scorer, "pref_align")] if judged else None,
            multiline=False,
            score_labels=dict(shown),
            score_color_scales=scales,
            color_scales_enabled=True,
        )
    )
