"""What pins the code and the files a published folder names: the project's commit (else its version) and sha256.

The task file is ``prefdisco/evaluation/running/task.py`` of the installed package. Its commit is ``git rev-parse HEAD``
of the checkout the package is imported from, where it is one (an editable install); an installed wheel has no
checkout, and the pin is then the package version (``pinned_by`` says which). The file's own sha256 is pinned
either way, so a changed working tree is seen even under the same commit.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from prefdisco.version import __version__

TASK_NAME = "prefdisco/prefdisco"
TASK_FILE = "src/prefdisco/evaluation/running/task.py"
"""The task file's path in the project's repository."""


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class TaskPin:
    path: str
    commit: str | None
    version: str
    sha256: str

    @property
    def pinned_by(self) -> str:
        return "commit" if self.commit else "version"


def _commit(folder: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def task_pin() -> TaskPin:
    """The task file's pin: its path, the project's commit (None outside a checkout), the version and its sha256."""
    package = Path(__file__).resolve().parents[1]  # src/prefdisco
    return TaskPin(
        path=TASK_FILE,
        commit=_commit(package),
        version=__version__,
        sha256=sha256((package / "evaluation" / "running" / "task.py").read_bytes()),
    )
