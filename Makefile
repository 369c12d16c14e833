# Every target sets up .venv from nothing: a fresh machine needs only python3 (3.10+) and pip.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every distribution in the tree: the core, each capability pack, the example plugin.
PACKS := $(sort $(dir $(wildcard reyn_builtin_tools/*/pyproject.toml)))
EXAMPLE := $(dir $(wildcard reyn_plugin_example/pyproject.toml))
DEMO := $(dir $(wildcard reyn_demo/pyproject.toml))
DEPS := pyproject.toml $(wildcard reyn_builtin_tools/*/pyproject.toml) $(wildcard reyn_plugin_example/pyproject.toml) $(wildcard reyn_demo/pyproject.toml)

.PHONY: venv demo test lint typecheck docs bench clean

venv: $(STAMP)

$(STAMP): $(DEPS)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[llm,dev]' $(foreach p,$(PACKS) $(EXAMPLE) $(DEMO),-e ./$(p))
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/reyn-demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy reyn_core

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy reyn_core
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache
