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

.PHONY: demo test test-fast install lint clean check-shared chromium verifiers-env trl-extra

install: $(STAMP)

# The install prints a line at least every 8 seconds (the first one compiles llama.cpp for minutes, silently under
# --quiet), so output sent to a file never goes 10 s without a line.
$(STAMP): pyproject.toml
	@echo "install: creating $(VENV) and installing prefdisco (the first time compiles llama.cpp: about 8 minutes)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@( while sleep 8; do echo "install: still installing ($$(date +%H:%M:%S))"; done ) & beat=$$!; \
	  trap 'kill $$beat 2>/dev/null' EXIT; \
	  $(BIN)/python -m pip install --quiet --upgrade pip && \
	  $(BIN)/python -m pip install --quiet -e '.[dev,ray,scout,verifiers,openenv,publish]'
	@echo "install: done"
	touch $(STAMP)

# The second environment the verifiers 0.4 test runs in (tests/test_env_verifiers04.py): verifiers 0.4 pins openai below
# 3 while inspect's OpenAI provider needs 3.4 or later, so verifiers 0.4 cannot live in .venv. It holds verifiers 0.4
# and PrefDisco's thin client (client/: no PrefDisco, no inspect, no provider SDK of PrefDisco's), which plays the
# episode against `prefdisco env serve` running in .venv. One to three minutes from PyPI (docs/testing.md).
VF_VENV := .venv-verifiers
VF_STAMP := $(VF_VENV)/.prefdisco-client-installed

verifiers-env: $(VF_STAMP)

$(VF_STAMP): client/pyproject.toml
	@echo "install: creating $(VF_VENV) with verifiers 0.4 and the thin client (one to three minutes)"
	test -x $(VF_VENV)/bin/python || $(PYTHON) -m venv $(VF_VENV)
	$(VF_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VF_VENV)/bin/python -m pip install --quiet -e './client[verifiers]'
	touch $(VF_STAMP)

# The trl extra (torch, transformers, TRL: about 0.9 GB, 25 s from this machine's CPU build of torch 2.13.0) for the
# training tests (tests/test_env_trl.py; docs/training.md): `make test` installs it, `make demo` does not, so the
# demo's install stays as light as before.
TRL_STAMP := $(VENV)/.prefdisco-trl-installed

trl-extra: $(TRL_STAMP)

$(TRL_STAMP): $(STAMP)
	@echo "install: the trl extra (torch, transformers, TRL) for the training tests"
	$(BIN)/python -m pip install --quiet -e '.[trl]'
	touch $(TRL_STAMP)

demo: install
	$(BIN)/prefdisco demo

# The whole suite on both cores (pytest-xdist; the embedded-model, browser and Ray tests each keep to one worker, see
# tests/conftest.py) with its 25 slowest tests listed; test-fast leaves those and the `slow` tests out for the edit
# loop. Python may cache bytecode here (pytest keeps its rewritten test modules that way) even where the environment
# turns it off. docs/testing.md: what the suite costs and how to keep it there.
XDIST := -n 2 --dist loadgroup
FAST := not embedded and not browser and not ray and not slow

# The tests read real benchmark files, personas and people's answers from the shared data folder beside the
# repository (or PREFDISCO_SHARED): without it `make test` stops here, in one line, before installing anything.
SHARED ?= $(if $(PREFDISCO_SHARED),$(PREFDISCO_SHARED),../shared)

check-shared:
	@test -d "$(SHARED)/data" || { echo "make test: the tests need the shared data folder, not found at $(SHARED)/data: put the shared folder beside the repository or set PREFDISCO_SHARED" >&2; exit 2; }

# The browser tests drive Debian's Chromium (Playwright with its executable_path, never a browser download). `make test`
# installs the package where it is missing and it may (as root, or through sudo that asks no password: apt-get, about
# 350 MB, under a minute to three); otherwise it stops here, before the tests, in one line saying what to run.
# CHROMIUM=PATH names another Chromium (the tests read it as PREFDISCO_CHROMIUM). APT_GET, SUDO and USER_ID are there
# so a test can stand in for the system's own.
CHROMIUM ?= /usr/bin/chromium
APT_GET ?= apt-get
SUDO ?= sudo
USER_ID ?= $(shell id -u)
export PREFDISCO_CHROMIUM := $(CHROMIUM)
CHROMIUM_HINT := run 'sudo apt-get install -y chromium' (Debian/Ubuntu), or set CHROMIUM=PATH to a Chromium, then make test again

chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$(USER_ID)" = 0 ]; then as=""; \
	  elif $(SUDO) -n true 2>/dev/null; then as="$(SUDO) -n"; \
	  else echo "make test: the browser tests need Chromium, not found at $(CHROMIUM), and installing it needs root: $(CHROMIUM_HINT)" >&2; exit 2; fi; \
	  command -v $(APT_GET) >/dev/null 2>&1 || { echo "make test: the browser tests need Chromium, not found at $(CHROMIUM), and there is no $(APT_GET) to install it with: $(CHROMIUM_HINT)" >&2; exit 2; }; \
	  echo "make test: installing Debian's chromium for the browser tests ($(APT_GET) install chromium, about 350 MB)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$as $(APT_GET) update -qq >/dev/null && $$as $(APT_GET) install -y -qq chromium >/dev/null || \
	    { echo "make test: '$(APT_GET) install chromium' failed (see above): $(CHROMIUM_HINT)" >&2; exit 2; }; \
	  test -x "$(CHROMIUM)" || { echo "make test: chromium was installed but $(CHROMIUM) is still missing: $(CHROMIUM_HINT)" >&2; exit 2; }; \
	fi

test: check-shared chromium install trl-extra verifiers-env
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest $(XDIST) --durations=25

test-fast: check-shared install
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest $(XDIST) -m "$(FAST)"

# ruff (lint + format) and mypy (types, with the pydantic plugin) over src/; CI runs it beside the tests
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(VF_VENV) prefdisco-demo .pytest_cache
