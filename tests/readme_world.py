"""The README's offline commands, run once per test session as written from an empty folder (``readme_demo``):
``prefdisco --help`` and the quickest demo, ``prefdisco demo --limit 1`` (one scenario through the four conditions on
the embedded model, its report and logs). ``tests/test_readme_runs.py`` checks what they print and write;
``tests/test_embedded.py`` resumes the demo's run in place from a benchmark folder, without a call (the tables
written again, unchanged). Each further scenario
would cost about 30 s of llama.cpp.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OFFLINE = (".venv/bin/prefdisco --help", ".venv/bin/prefdisco demo --limit 1")
"""The README's commands that need nothing but the install, in the order they are run."""
DEMO_FOLDER = "prefdisco-demo-1"
"""The quick demo's own folder, as the README says."""


def build(folder: Path) -> Path:
    """Run ``OFFLINE`` in ``folder`` (empty), each with its output to a file; ``runs.json`` keeps each command's exit
    status and output, for the tests to assert on (a failed command is the test's failure, not the world's)."""
    runs = []
    for i, command in enumerate(OFFLINE):
        argv = shlex.split(command)
        argv[0] = str(REPO / argv[0])  # the clone's own install, from another folder
        log = folder / f"out-{i}.txt"
        with log.open("w") as fh:
            done = subprocess.run(argv, cwd=folder, stdout=fh, stderr=subprocess.STDOUT, timeout=600, check=False)
        runs.append({"command": command, "returncode": done.returncode, "output": log.read_text()})
    (folder / "runs.json").write_text(json.dumps(runs))
    return folder
