PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CONSTRAINTS := constraints.txt

.PHONY: test soak check demo bench lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml $(CONSTRAINTS) | $(BIN)/python
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[test]'
	touch $(STAMP)

# Static checks: style, declared dependencies (deptry), import contracts (.importlinter), types (mypy, the
# strict flags on every package), and the wire types in console/client/wire.py against the core-2 schemas.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/deptry .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	$(BIN)/python scripts/wire_types.py --check

test: check
	$(BIN)/pytest

# Long variants (crash loops, big fuzz runs, large seeds); CI does not run them.
soak: $(STAMP)
	$(BIN)/pytest -m soak -n 0

demo: $(STAMP)
	$(BIN)/apc demo

# The benches compare with SpiffWorkflow too: the bench-only extra, installed here and never by `make test`.
$(VENV)/.bench-installed: $(STAMP)
	$(BIN)/pip install --quiet -c $(CONSTRAINTS) -e '.[test,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done

# Refresh the pinned versions with pip's own resolver: a fresh venv, the ranges of pyproject.toml, freeze.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet --upgrade pip
	.lock-venv/bin/pip install --quiet -e '.[test]'
	.lock-venv/bin/pip freeze --exclude-editable | grep -v '^-e ' > $(CONSTRAINTS)
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
