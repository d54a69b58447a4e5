# countersign: `make run` starts the bot, `make test` runs the whole suite, `make check` lints and
# type-checks; `make test-fast` is the inner loop. Each installs into .venv first, from uv.lock
# (scripts/install.sh: uv from PyPI, else pip from requirements/*.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
LOCKED := pyproject.toml uv.lock
# Parallel test workers (pytest-xdist) for the tests that run in the test process alone.
JOBS ?= auto
# The tests that start no process nor browser and share nothing: these run in parallel.
PARALLEL := not processes and not browser and not chaos and not serial
# make test-fast: those, but the slow ones (1,937 tests, about 1.5 min).
FAST := $(PARALLEL) and not slow
# The tests that start processes (bots, workers, servers) but share nothing: two workers.
PROCESSES := processes and not browser and not chaos and not serial
PROCESS_JOBS ?= 2
# What runs alone: the chaos seeds, the browser, and what touches what other tests share.
ALONE := browser or chaos or serial
# pytest's exit 5 ("no tests ran") is no failure when PYTEST_ARGS selects none of a phase's.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider
OK_IF_NONE := || [ $$? -eq 5 ]
# Our own modules compiled ahead (a no-op when nothing changed): where PYTHONDONTWRITEBYTECODE is
# set, every process the tests start would otherwise compile them again.
COMPILE := $(BIN)/python -m compileall -q -j 0 -x node_modules agents bot storage tools bench tests quickstart.py
# The MCP clients and reference servers the gateway tests run (tests/package-lock.json).
NODE_STAMP := tests/node_modules/.package-lock.json

.PHONY: run test test-fast check install lock upgrade clean

# `make run` installs only what running needs; `make test` and `make check` add the dev extras.
$(RUN_STAMP): $(LOCKED)
	PYTHON=$(PYTHON) scripts/install.sh run
	rm -f $(DEV_STAMP)
	touch $(RUN_STAMP)

$(DEV_STAMP): $(LOCKED)
	PYTHON=$(PYTHON) scripts/install.sh dev
	touch $(DEV_STAMP) $(RUN_STAMP)

$(NODE_STAMP): tests/package.json tests/package-lock.json
	cd tests && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

install: $(DEV_STAMP) $(NODE_STAMP)

run: $(RUN_STAMP)
	@$(COMPILE)
	$(BIN)/python -m bot

# The whole suite (CI runs it), in three phases: the tests that run in the test process alone,
# in parallel; the ones that start processes, two at a time (more workers of bots on two cores
# starved each other's start); then the chaos seeds, the browser and what shares the databases,
# one at a time. About 2 + 3.5 + 2 minutes on two cores.
test: $(DEV_STAMP) $(NODE_STAMP)
	@$(COMPILE)
	$(PYTEST) -n $(JOBS) -m "$(PARALLEL)" $(PYTEST_ARGS) $(OK_IF_NONE)
	$(PYTEST) -n $(PROCESS_JOBS) -m "$(PROCESSES)" $(PYTEST_ARGS) $(OK_IF_NONE)
	$(PYTEST) -m "$(ALONE)" $(PYTEST_ARGS) $(OK_IF_NONE)

test-fast: $(DEV_STAMP)
	@$(COMPILE)
	$(PYTEST) -n $(JOBS) -m "$(FAST)" $(PYTEST_ARGS)

check: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# After editing the dependencies in pyproject.toml: pin what is new, keep the rest.
lock:
	PYTHON=$(PYTHON) scripts/install.sh lock

# Every dependency on its newest release the floors allow.
upgrade:
	PYTHON=$(PYTHON) scripts/install.sh upgrade

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
