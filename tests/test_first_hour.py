"""A researcher's first hour (issue 26): nothing overwritten, failure is not success, never silent, files others can
read, and the small things a first hour trips on. Every test here failed before its fix."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prefdisco.cli as cli
from prefdisco.atomic import atomic_open, atomic_write
from prefdisco.benchio import write_bench
from prefdisco.demo import demo_scenarios


@pytest.fixture(scope="module")
def app():
    cli._register()
    return cli.app


def invoke(app, *args: str):
    return CliRunner().invoke(app, list(args))


def one_error(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


# ---- item 7: files others can read ----------------------------------------------------------------------------


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_respect_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "a.json", "{}")
        atomic_open(tmp_path / "b.csv", lambda f: f.write("x\n"))
        write_bench(tmp_path / "bench", demo_scenarios()[:1], [demo_scenarios()[0].persona], [])
    finally:
        os.umask(old)
    written = [tmp_path / "a.json", tmp_path / "b.csv", *sorted((tmp_path / "bench").iterdir())]
    assert len(written) == 6
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {mode}


# ---- item 8: a malformed line's error points at its column -----------------------------------------------------


def test_a_malformed_line_names_its_real_column(app, tmp_path: Path) -> None:
    # '{"type": "metadata"' ends after 19 characters: the missing ',' or '}' is expected at column 20
    release = tmp_path / "r.jsonl"
    release.write_text('{"type": "metadata"\n', encoding="utf-8")
    result = invoke(app, "validate", str(release))
    assert f"{release}:1: invalid JSON: Expecting ',' delimiter at column 20" in result.output

    # json's own message ends in "at": no "at at"; the string starts at column 9
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"id": 1}\n{"id": "abc\n', encoding="utf-8")
    result = invoke(app, "validate", str(bad))
    assert f"{bad}:2: invalid JSON: Unterminated string starting at column 8" in result.output
    assert "at at" not in result.output

    # eval names the column too
    line = demo_scenarios()[0].model_dump_json()
    scenarios = tmp_path / "e.jsonl"
    scenarios.write_text(line + "\n" + '{"id": oops}\n', encoding="utf-8")
    result = invoke(app, "eval", str(scenarios), "--model", "mockllm/model", "--log-dir", str(tmp_path / "run"))
    assert one_error(result) == f"error: {scenarios}:2: invalid JSON: Expecting value at column 8"


# ---- item 8: --version, counted nouns --------------------------------------------------------------------------


def test_version(app) -> None:
    from prefdisco import __version__

    result = invoke(app, "--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"prefdisco {__version__}"


def test_one_scenario_is_not_one_scenarios(app, tmp_path: Path, shared_dir: Path) -> None:
    release = shared_dir / "data" / "prefdisco_release" / "example_record.jsonl"
    result = invoke(app, "import-release", str(release), "--out", str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'b'}: 1 scenario, 1 problem, 1 persona, " in result.stdout
    result = invoke(app, "validate", str(tmp_path / "b"))
    assert "1 scenarios" not in result.output and "1 problems" not in result.output, result.output
