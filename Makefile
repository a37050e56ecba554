# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create (or reuse) the project-local virtual environment .venv and install the package into it.
# The first install compiles llama.cpp for llama-cpp-python (about 8 minutes on 2 cores); the portable build
# flags below let pip's wheel cache reuse the result, so later installs take seconds.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.prefdisco-installed
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1

.PHONY: demo test install lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

demo: install
	$(BIN)/prefdisco demo

test: install
	$(BIN)/python -m pytest

# ruff (lint + format) and mypy (types, with the pydantic plugin) over src/; CI runs it beside the tests
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) prefdisco-demo .pytest_cache
