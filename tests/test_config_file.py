"""A run's whole configuration as one file (issue 25, part 1): ``prefdisco eval --config FILE`` takes every setting
a flag takes, flags override it, every run writes its resolved settings to ``config.toml`` and ``prefdisco config
RUN`` prints them; a run made from the file equals the run made from flags (same run.json, same scores)."""

from __future__ import annotations

import json
import tomllib

import pandas as pd
from typer.testing import CliRunner

from mock_openai import MockOpenAI, tagged_scenarios, write_scenarios
from prefdisco.evaluation.cli import eval_command
from prefdisco.evaluation.settings.config_file import NOT_SETTINGS
from test_reliability import app, mock_env  # noqa: F401  (app is a fixture)

SCORES = ["pref_align", "correct", "n_questions", "user_flags"]


def invoke(app, *args: str):  # noqa: F811
    return CliRunner().invoke(app, list(args))


def test_a_run_from_its_config_file_equals_the_run_from_flags(app, tmp_path, monkeypatch):  # noqa: F811
    """Run A from flags; run B from A's config.toml with only --log-dir changed: the same run.json, the same scores,
    and A's file rerun in A's folder resumes without a call."""
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(2))
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        model = f"openai-api/mock/m{mock.port}"
        flags = ["--modes", "baseline,discovery", "--user-retry", "1", "--seed", "7", "--epochs", "2"]
        flags += ["--user-type", "targeted", "--no-quality", "--display", "none"]
        a = invoke(app, "eval", str(bench), "--model", model, "--log-dir", str(tmp_path / "a"), *flags)
        assert a.exit_code == 0, a.output
        written = tomllib.loads((tmp_path / "a" / "config.toml").read_text())
        assert written["bench"] == "../scenarios.jsonl" and written["model"] == [model]  # beside the run folder
        assert (written["modes"], written["user-retry"], written["seed"], written["epochs"]) == (
            "baseline,discovery",
            1,
            7,
            2,
        )
        assert written["user-type"] == "targeted" and written["quality"] is False
        assert "dry-run" not in written and "config" not in written

        shown = invoke(app, "config", str(tmp_path / "a"))
        assert shown.exit_code == 0 and tomllib.loads(shown.output) == written

        calls = mock.stats()["completions"]
        again = invoke(app, "eval", "--config", str(tmp_path / "a" / "config.toml"))  # the same folder: resumes
        assert again.exit_code == 0, again.output
        assert mock.stats()["completions"] == calls

        b = invoke(app, "eval", "--config", str(tmp_path / "a" / "config.toml"), "--log-dir", str(tmp_path / "b"))
        assert b.exit_code == 0, b.output
        assert mock.stats()["completions"] > calls  # a new folder: it ran again

    run_a, run_b = (json.loads((tmp_path / n / "run.json").read_text()) for n in "ab")
    assert run_a.pop("run_id") != run_b.pop("run_id")  # two runs (a new folder replays no call of the other)
    assert run_a == run_b
    key = ["scenario_id", "mode", "epoch"]
    results = [pd.read_csv(tmp_path / n / "results.csv").sort_values(key).reset_index(drop=True) for n in "ab"]
    assert len(results[0]) == 2 * 2 * 2
    pd.testing.assert_frame_equal(results[0][key + SCORES], results[1][key + SCORES])
    assert tomllib.loads((tmp_path / "b" / "config.toml").read_text())["log-dir"] == "."


def test_flags_override_the_file_and_lists_and_tables_read_as_the_flags_take_them(app, tmp_path, monkeypatch):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(1))
    file = tmp_path / "run.toml"
    file.write_text(
        f'bench = "{bench}"\nmodel = "mockllm/model"\nlog_dir = "{tmp_path / "x"}"\n'
        'modes = ["baseline", "oracle"]\nfixed-k = [1, 2]\nepochs = 3\njudge-temperature = 0.5\n'
        "model-arg = {n_ctx = 4096}\n"
    )
    dry = invoke(app, "eval", "--config", str(file), "--epochs", "2", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert not (tmp_path / "x").exists()  # the dry run writes nothing, config.toml included
    # the plan: 1 scenario x 2 epochs (the flag's, not the file's 3) in baseline, oracle and fixed-K 1 and 2 (the
    # file's lists); a fixed-K dialogue is K + 1 assistant turns
    rows = {
        (c[0], c[1]): int(c[3])
        for c in (line.split() for line in dry.output.splitlines()[2:])
        if len(c) > 3 and c[3].isdigit()
    }
    assistant = {part: n for (role, part), n in rows.items() if role == "assistant"}
    assert assistant == {"baseline": 2, "oracle": 2, "fixed_k=1": 2 * 2, "fixed_k=2": 2 * 3}


def test_every_setting_of_prefdisco_eval_has_a_key(app):  # noqa: F811
    """The keys are made from the command's own parameters, so a new flag is a key without anything else."""
    import inspect

    from prefdisco.evaluation.settings.config_file import settings_of

    names = [n for n in inspect.signature(eval_command).parameters if n not in NOT_SETTINGS]
    import typer.main

    command = typer.main.get_command(app).commands["eval"]  # type: ignore[attr-defined]
    assert sorted(settings_of(command)) == sorted(n.replace("_", "-") for n in names)


def test_a_bad_file_is_one_line_naming_the_file_and_the_key(app, tmp_path):  # noqa: F811
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(1))
    cases = {
        "unknown": ('modez = "baseline"\n', "unknown setting 'modez'; expected one of"),
        "type": ('epochs = "many"\n', "epochs: Input should be a valid integer"),
        "flag": ('audit = "yes"\n', "audit: expected true or false, got 'yes'"),
        "toml": ("epochs = \n", "not valid TOML"),
        "single": ("seed = [1, 2]\n", "seed: expected a single value, got list"),
        "bounds": ("user-retry = 5\n", "user-retry: Input should be less than or equal to 3"),
    }
    for name, (text, said) in cases.items():
        file = tmp_path / f"{name}.toml"
        file.write_text(text)
        out = invoke(
            app,
            "eval",
            str(bench),
            "--model",
            "mockllm/model",
            "--log-dir",
            str(tmp_path / name),
            "--config",
            str(file),
        )
        assert out.exit_code == 2, (name, out.output)
        assert said in out.output and str(file) in out.output, (name, out.output)
        assert not (tmp_path / name).exists()
    missing = invoke(app, "eval", "--config", str(tmp_path / "nope.toml"))
    assert missing.exit_code == 2 and "no such file" in missing.output
    none = invoke(app, "config", str(tmp_path))
    assert none.exit_code == 2 and "no config.toml" in none.output


def test_the_question_budget_is_a_flag_and_the_documented_key(app, tmp_path):  # noqa: F811
    """Issue 31, defect 8: ``max-questions`` (the documented key) was refused as an unknown setting and ``eval`` had
    no flag for the question budget, a protocol setting. The dry run plans a discovery dialogue as the budget's
    questions and the answer; the paper preset fixes the budget at 5."""
    bench = write_scenarios(tmp_path / "scenarios.jsonl", tagged_scenarios(1))

    def discovery_turns(*args: str) -> int:
        out = invoke(app, "eval", *args, "--dry-run")
        assert out.exit_code == 0, out.output
        lines = (ln.split() for ln in out.output.splitlines()[2:])
        rows = {(c[0], c[1]): int(c[3]) for c in lines if len(c) > 3 and c[3].isdigit()}
        return rows[("assistant", "discovery")]

    flags = [str(bench), "--model", "mockllm/model", "--modes", "discovery", "--log-dir", str(tmp_path / "run")]
    file = tmp_path / "run.toml"
    file.write_text(f'bench = "{bench}"\nmodel = "mockllm/model"\nmodes = "discovery"\nmax-questions = 2\n')
    assert discovery_turns(*flags) == 5 + 1
    assert discovery_turns(*flags, "--max-questions", "2") == 2 + 1
    assert discovery_turns("--config", str(file), "--log-dir", str(tmp_path / "run")) == 2 + 1
    assert discovery_turns("--config", str(file), "--log-dir", str(tmp_path / "run"), "--max-questions", "0") == 1
    paper = invoke(app, "eval", *flags, "--preset", "paper", "--max-questions", "3")
    assert paper.exit_code == 2
    assert "--max-questions 3 contradicts --preset paper, which fixes it to 5" in paper.output
    over = invoke(app, "eval", *flags, "--max-questions", "6")
    assert over.exit_code == 2 and "max-questions" in over.output
    assert not (tmp_path / "run").exists()


def test_paths_in_a_config_file_are_relative_to_the_file_and_written_relative_to_the_run(app, tmp_path, monkeypatch):  # noqa: F811
    """Issue 31, defect 8: config.toml stored a path as given, relative to where the run was started, so the same
    file rerun from another directory named another benchmark and another run folder. A relative path in a file is
    relative to the file's folder; a written config.toml holds paths relative to its run folder (issue 49: no
    absolute path of the machine); and every path setting of the command is known as one."""
    project = tmp_path / "project"
    write_scenarios(project / "bench" / "scenarios.jsonl", tagged_scenarios(1))
    (project / "run.toml").write_text(
        'bench = "bench/scenarios.jsonl"\nmodel = "mockllm/model"\nlog-dir = "runs/a"\nmodes = "baseline"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with MockOpenAI() as mock:
        mock_env(monkeypatch, mock, tmp_path)
        monkeypatch.chdir(elsewhere)
        dry = invoke(app, "eval", "--config", "../project/run.toml", "--dry-run")
        assert dry.exit_code == 0, dry.output  # the benchmark was found beside the file, not under elsewhere/

        monkeypatch.chdir(project)
        model = f"openai-api/mock/m{mock.port}"
        args = ["bench/scenarios.jsonl", "--model", model, "--log-dir", "runs/b", "--modes", "baseline"]
        made = invoke(app, "eval", *args, "--display", "none")
        assert made.exit_code == 0, made.output
        written = tomllib.loads((project / "runs" / "b" / "config.toml").read_text())
        assert (written["bench"], written["log-dir"]) == ("../../bench/scenarios.jsonl", ".")
        calls = mock.stats()["completions"]
        monkeypatch.chdir(elsewhere)  # the written file resumes the same run from anywhere: no call, same run.json
        run_json = (project / "runs" / "b" / "run.json").read_text()
        again = invoke(app, "eval", "--config", str(project / "runs" / "b" / "config.toml"))
        assert again.exit_code == 0, again.output
        assert mock.stats()["completions"] == calls
    assert (project / "runs" / "b" / "run.json").read_text() == run_json
    assert not (elsewhere / "runs").exists()

    import inspect

    from prefdisco.evaluation.settings.config_file import PATH_SETTINGS

    names = {n for n, p in inspect.signature(eval_command).parameters.items() if "Path" in str(p.annotation)}
    assert names - {"config_file"} == set(PATH_SETTINGS)
