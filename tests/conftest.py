from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PREFDISCO_SHARED", REPO.parent / "shared"))

# Tests never reach the network: Hugging Face and inspect stay offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_DISPLAY", "none")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "data").is_dir():
        raise RuntimeError(f"tests need the shared data folder at {SHARED} (set PREFDISCO_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def shared_benchmarks(shared_dir: Path) -> Path:
    return shared_dir / "data" / "benchmarks"
