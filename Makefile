# countersign: `make run` starts the bot, `make test` runs the whole suite, `make check` lints and type-checks.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# The MCP clients and reference servers the gateway tests run (tests/package-lock.json).
NODE_STAMP := tests/node_modules/.package-lock.json
# -qq: only errors; "compat" keeps the packages importable by mypy and subprocesses alike.
PIP_INSTALL := $(BIN)/python -m pip install -qq --config-settings editable_mode=compat

.PHONY: run test check install clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# `make run` installs what running needs; `make test` and `make check` add the dev extras.
$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP_INSTALL) -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP_INSTALL) -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

$(NODE_STAMP): tests/package.json tests/package-lock.json
	cd tests && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

install: $(DEV_STAMP) $(NODE_STAMP)

run: $(RUN_STAMP)
	$(BIN)/python -m bot

test: $(DEV_STAMP) $(NODE_STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

check: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
