"""The README's two set-up commands on a fresh machine (issue 49, finding 1): what the tests need comes from
``make test`` itself, not from CI. Before, ``.ci/run`` installed Debian's chromium and ``make test`` did not, so the
README's own command failed its 7 browser tests on every machine without Chromium while CI was green.

The Makefile's ``chromium`` step runs with stand-ins for the system's ``apt-get``, ``sudo`` and user id (its
``APT_GET``, ``SUDO`` and ``USER_ID`` variables) and a ``CHROMIUM`` path of the test's own, so each branch runs here
without touching the machine's packages.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fake_apt(tmp_path: Path, chromium: Path) -> tuple[Path, Path]:
    """An ``apt-get`` that logs its arguments and, on ``install``, puts an executable at ``chromium``."""
    log = tmp_path / "apt.log"
    script = tmp_path / "bin" / "apt-get"
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        f'case "$1" in install) printf "#!/bin/sh\\n" > {chromium}; chmod +x {chromium};; esac\n'
    )
    script.chmod(0o755)
    return script, log


def make_chromium(chromium: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    args = ["make", "-s", "chromium", f"CHROMIUM={chromium}", *(f"{k}={v}" for k, v in variables.items())]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)


def ours(stderr: str) -> list[str]:
    """stderr's lines less make's own closing ``make: *** [Makefile:N: chromium] Error 2``."""
    return [line for line in stderr.splitlines() if not line.startswith("make: *** ")]


def test_a_chromium_already_there_is_left_alone(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    apt, log = fake_apt(tmp_path, chromium)
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    made = make_chromium(chromium, APT_GET=apt, USER_ID="0")
    assert (made.returncode, made.stdout, made.stderr) == (0, "", "")
    assert not log.exists()  # apt-get never ran


def test_a_missing_chromium_is_installed_by_make_test_as_root(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    apt, log = fake_apt(tmp_path, chromium)
    made = make_chromium(chromium, APT_GET=apt, USER_ID="0", SUDO="false")
    assert made.returncode == 0, made.stderr
    assert "installing Debian's chromium for the browser tests" in made.stdout
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]
    assert os.access(chromium, os.X_OK)


def test_a_missing_chromium_is_installed_through_sudo_that_asks_no_password(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    apt, log = fake_apt(tmp_path, chromium)
    sudo = tmp_path / "bin" / "sudo"
    sudo_log = tmp_path / "sudo.log"
    sudo.write_text(f'#!/bin/sh\necho "$*" >> {sudo_log}\n[ "$1" = -n ] && shift\nexec "$@"\n')
    sudo.chmod(0o755)
    made = make_chromium(chromium, APT_GET=apt, USER_ID="1000", SUDO=sudo)
    assert made.returncode == 0, made.stderr
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]
    # sudo asked first whether it needs a password (-n true), then ran both apt-get calls
    assert sudo_log.read_text().splitlines() == ["-n true", f"-n {apt} update -qq", f"-n {apt} install -y -qq chromium"]


def test_without_root_or_sudo_make_test_stops_in_one_line_saying_what_to_run(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    apt, log = fake_apt(tmp_path, chromium)
    made = make_chromium(chromium, APT_GET=apt, USER_ID="1000", SUDO="false")
    assert made.returncode == 2 and made.stdout == ""
    lines = ours(made.stderr)
    assert len(lines) == 1, made.stderr
    assert lines[0].startswith(f"make test: the browser tests need Chromium, not found at {chromium}")
    assert "run 'sudo apt-get install -y chromium'" in lines[0] and "CHROMIUM=PATH" in lines[0]
    assert not log.exists() and not chromium.exists()


def test_without_apt_get_make_test_stops_in_one_line(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    made = make_chromium(chromium, APT_GET=tmp_path / "no-apt-get", USER_ID="0")
    assert made.returncode == 2 and made.stdout == ""
    (line,) = ours(made.stderr)
    assert "there is no " in line and "install -y chromium" in line


def test_make_test_gets_chromium_before_any_test_and_ci_runs_only_the_readme_commands() -> None:
    """``make test`` checks the shared folder, then Chromium, then installs and runs pytest (``make -n`` prints the
    recipe without running it); ``.ci/run`` installs nothing: its commands are the README's ``make test`` and
    ``make lint``, so CI passing means the README's command passes on a machine like CI's (which has no Chromium)."""
    planned = subprocess.run(
        ["make", "-n", "test", "CHROMIUM=/nonexistent/chromium", "USER_ID=1000", "SUDO=false"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    steps = planned.stdout
    assert steps.index("shared data folder") < steps.index("browser tests need Chromium") < steps.index("-m pytest")
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    commands = [line.strip() for line in ci[1:] if line.strip() and not line.lstrip().startswith("#")]
    assert commands == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', "make test", "make lint"]
    readme = (REPO / "README.md").read_text()
    assert "make test" in readme and "chromium" in readme.lower()


def test_make_test_creates_the_verifiers_04_environment_before_the_tests() -> None:
    """The verifiers 0.4 test (tests/test_env_verifiers04.py) runs in a second environment that ``make test`` brings:
    ``.venv-verifiers``, verifiers 0.4 and the thin client (``client/``), installed before pytest starts (``-W``
    plans it as if the client's pyproject had changed, so a machine that already has it still shows the step)."""
    planned = subprocess.run(
        ["make", "-n", "-W", "client/pyproject.toml", "test", "CHROMIUM=/bin/sh"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    steps = planned.stdout
    assert "-m venv .venv-verifiers" in steps
    assert steps.index(".venv-verifiers/bin/python -m pip install --quiet -e './client[verifiers]'") < steps.index(
        "-m pytest"
    )


def test_make_test_installs_the_trl_extra_and_make_demo_does_not() -> None:
    """The training tests need torch, transformers and TRL (the ``trl`` extra): ``make test`` installs it before
    pytest starts; ``make demo`` never does, so the demo's install stays as light as it was (issue 47, item 5).
    ``-W pyproject.toml`` plans both as if the project had changed, so a machine that has them still shows the step."""

    def planned(target: str) -> str:
        run = ["make", "-n", "-W", "pyproject.toml", target, "CHROMIUM=/bin/sh"]
        return subprocess.run(run, cwd=REPO, capture_output=True, text=True, timeout=60).stdout

    test, demo = planned("test"), planned("demo")
    trl = "-m pip install --quiet -e '.[trl]'"
    assert trl in test and test.index(trl) < test.index("-m pytest")
    assert "prefdisco demo" in demo and "trl" not in demo
