"""``docs/architecture.md``'s map of the stages matches the folders: every module its table names exists, and every
module of a mapped stage is named (issue 46: "docs/architecture.md's map matches the folders").

The table ``| stage | module | owns |`` names files in backticks; a name ending in ``/`` is a folder that the names
after it in the same cell live in (```settings/`: `config.py`, `checks.py```), or the whole folder when no name
follows it (```correctness/`, `extract/```), and a stage cell left empty continues
the stage above. Read from the files alone: nothing is imported.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "prefdisco"
DOC = ROOT / "docs" / "architecture.md"


def mapped() -> dict[str, set[str]]:
    """Stage → the paths (relative to the stage's folder) its rows name."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| stage | module | owns |") :]
    found: dict[str, set[str]] = {}
    stage = ""
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        stage = cells[0] or stage
        if "outside" in stage:
            continue
        folder, named = "", found.setdefault(stage, set())
        names = re.findall(r"`([^`]+)`", cells[1])
        for name, after in zip(names, [*names[1:], "/"], strict=True):
            if not name.endswith("/"):
                named.add(folder + name)
            elif after.endswith("/"):
                named.add(name)  # a folder no file name follows: the whole folder
            folder = name if name.endswith("/") else folder
    return found


def test_every_module_the_map_names_exists_and_every_module_of_a_stage_is_named():
    stages = mapped()
    assert {"evaluation", "analysis", "simfidelity", "dialogue", "scoring", "results"} <= set(stages)
    missing, unnamed = [], []
    for stage, names in stages.items():
        missing += [f"{stage}/{n}" for n in sorted(names) if not (PACKAGE / stage / n).exists()]
        for path in sorted((PACKAGE / stage).rglob("*.py")):
            relative = path.relative_to(PACKAGE / stage).as_posix()
            whole = any(n.endswith("/") and relative.startswith(n) for n in names)
            if path.name != "__init__.py" and not whole and relative not in names:
                unnamed.append(f"{stage}/{relative}")
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
    assert not unnamed, f"modules docs/architecture.md's map does not name: {unnamed}"


def test_every_stage_folder_is_on_a_floor_of_the_import_rule():
    text = DOC.read_text(encoding="utf-8")
    floors = text[text.index("| floor | modules |") : text.index("## Stages and their modules")]
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert [f for f in folders if f"`{f}/`" not in floors] == []
