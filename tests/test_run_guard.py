"""``run.json``: a run folder resumes only the run it holds — every setting that changes results is compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefdisco.errors import UserError
from prefdisco.evaluation.running.guard import RUN_FILE, guard_run
from prefdisco.evaluation.settings.config import UNCOMPARED_SETTINGS, RunConfig


def fingerprint(tmp_path: Path, **changes: object) -> dict:
    config = RunConfig(models=["m/a"], user_model="m/u", grader_model="m/g", log_dir=tmp_path)
    for key, value in changes.items():
        setattr(config, key, value)
    return config.fingerprint("set-1", 3)


def test_every_result_setting_is_recorded(tmp_path: Path) -> None:
    recorded = fingerprint(tmp_path)
    for key in ("models", "user_model", "grader_model", "temperature", "user_temperature", "judge", "user_type"):
        assert key in recorded
    for key in ("max_questions", "constrain_ask", "model_args", "prompt_templates", "logprobs", "audit"):
        assert key in recorded


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("temperature", 0.2),
        ("user_temperature", 0.0),
        ("judge", "structured"),
        ("user_type", "cooperative"),
        ("max_questions", 3),
        ("constrain_ask", True),
        ("model_args", {"n_ctx": "4096"}),
        ("grader_model", "m/other"),
        ("fixed_k", [2]),
    ],
)
def test_a_changed_setting_is_refused_by_name(tmp_path: Path, key: str, value: object) -> None:
    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    before = (tmp_path / RUN_FILE).read_text()
    with pytest.raises(UserError, match=rf"holds a run with {key} = .*new --log-dir"):
        guard_run(tmp_path, fingerprint(tmp_path, **{key: value}), UNCOMPARED_SETTINGS)
    assert (tmp_path / RUN_FILE).read_text() == before


def test_a_changed_prompt_template_is_refused(tmp_path: Path) -> None:
    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    edited = {**fingerprint(tmp_path), "prompt_templates": "0" * 16}
    with pytest.raises(UserError, match="prompt_templates"):
        guard_run(tmp_path, edited, UNCOMPARED_SETTINGS)


def test_only_the_templates_a_run_renders_are_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Editing a prompt the run uses refuses the resume; adding or editing one it never renders (a builder
    prompt, the other preset's) leaves it resumable."""
    from string import Template

    from prefdisco import prompts

    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    original = prompts.load

    def edited(target: str):
        def load(name: str) -> Template:
            return Template(original(name).template + " (edited)") if name == target else original(name)

        return load

    for unused in ("build_dedup", "assistant_oracle_paper", "user_cooperative", "judge_structured"):
        monkeypatch.setattr(prompts, "load", edited(unused))
        guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    for used in ("user_passive", "assistant_discovery", "judge_criterion", "protocol_last_question"):
        monkeypatch.setattr(prompts, "load", edited(used))
        with pytest.raises(UserError, match="prompt_templates"):
            guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)


def test_the_same_run_resumes_and_free_settings_may_change(tmp_path: Path) -> None:
    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    guard_run(tmp_path, fingerprint(tmp_path, cache=False, max_connections=3, workers=1), UNCOMPARED_SETTINGS)
    assert json.loads((tmp_path / RUN_FILE).read_text())["cache"] is False


def test_an_older_run_file_is_compared_on_what_it_recorded(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text(json.dumps({"scenario_set": "set-1", "judge": "per_criterion"}))
    guard_run(tmp_path, fingerprint(tmp_path), UNCOMPARED_SETTINGS)
    with pytest.raises(UserError, match="different scenario set"):
        guard_run(tmp_path, {**fingerprint(tmp_path), "scenario_set": "set-2"}, UNCOMPARED_SETTINGS)
