# countersign: `make run` starts the bot, `make test` runs the whole suite, `make check` lints and
# type-checks; `make test-fast` is the inner loop. Each installs into .venv first, from uv.lock
# (scripts/install.sh: uv from PyPI, else pip from requirements/*.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
LOCKED := pyproject.toml uv.lock
# Parallel test workers (pytest-xdist); the tests wait on I/O more than they compute.
JOBS ?= 4
# The tests that start no process nor browser, share nothing and are quick: `make test-fast`.
FAST := not processes and not browser and not chaos and not serial and not slow
# pytest's exit 5 ("no tests ran") is no failure when PYTEST_ARGS selects none of a phase's.
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider
OK_IF_NONE := || [ $$? -eq 5 ]

.PHONY: run test test-fast check install lock upgrade clean

# `make run` installs only what running needs; `make test` and `make check` add the dev extras.
$(RUN_STAMP): $(LOCKED)
	PYTHON=$(PYTHON) scripts/install.sh run
	rm -f $(DEV_STAMP)
	touch $(RUN_STAMP)

$(DEV_STAMP): $(LOCKED)
	PYTHON=$(PYTHON) scripts/install.sh dev
	touch $(DEV_STAMP) $(RUN_STAMP)

install: $(DEV_STAMP)

run: $(RUN_STAMP)
	$(BIN)/python -m bot

# The whole suite (CI runs it): everything that may share the machine in parallel, then the
# `serial` tests alone.
test: $(DEV_STAMP)
	$(PYTEST) -n $(JOBS) -m "not serial" $(PYTEST_ARGS) $(OK_IF_NONE)
	$(PYTEST) -m serial $(PYTEST_ARGS) $(OK_IF_NONE)

test-fast: $(DEV_STAMP)
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
