# Every target sets up .venv from nothing: a fresh machine needs only python3 (3.10+) and pip.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every distribution in the tree: the core, each capability pack, the example plugin.
PACKS := $(sort $(dir $(wildcard reyn_builtin_tools/*/pyproject.toml)))
EXAMPLE := $(dir $(wildcard reyn_plugin_example/pyproject.toml))
DEMO := $(dir $(wildcard reyn_demo/pyproject.toml))
# The kernel sandbox launcher (issue 22): a leaf distribution the shell and mcp packs start commands through.
SANDBOX := $(dir $(wildcard reyn_sandbox/pyproject.toml))
# The LLM runtime (issue 24): RouterLoop, PhaseRunner, replay, `reyn chat` / `reyn phase`, on the public API.
LOOPS := $(dir $(wildcard reyn_loops/pyproject.toml))
# The plugin author's test kit (issue 24): ToolCaller, diagnostics assertions, the pytest plugin `reyn`.
TESTKIT := $(dir $(wildcard reyn_testing/pyproject.toml))
# OpenTelemetry spans (issue 24): the tracing add-on the core reaches through its observation seam.
OTEL := $(dir $(wildcard reyn_otel/pyproject.toml))
# Isolated plugins (issues 24, 25): a plugin in a sandboxed worker, through the core's isolation extension point.
ISOLATION := $(dir $(wildcard reyn_isolation/pyproject.toml))
# The approval stores (issues 24, 26): the core ships none; SQLite (the default backend, one file) and
# PostgreSQL (for agents on several hosts), each found by the profile's [approvals] backend.
STORES := $(dir $(wildcard reyn_approvals_sqlite/pyproject.toml)) $(dir $(wildcard reyn_approvals_postgres/pyproject.toml))
DEPS := pyproject.toml $(wildcard reyn_loops/pyproject.toml) $(wildcard reyn_testing/pyproject.toml) $(wildcard reyn_otel/pyproject.toml) $(wildcard reyn_builtin_tools/*/pyproject.toml) $(wildcard reyn_plugin_example/pyproject.toml) $(wildcard reyn_demo/pyproject.toml) $(wildcard reyn_sandbox/pyproject.toml) $(wildcard reyn_isolation/pyproject.toml) $(wildcard reyn_approvals_sqlite/pyproject.toml) $(wildcard reyn_approvals_postgres/pyproject.toml)
# Optional extras the tests need, by distribution folder: the memory pack's PostgreSQL backend, the search pack's semantic ranking.
EXTRAS.reyn_builtin_tools/memory/ := [postgres]
EXTRAS.reyn_builtin_tools/search/ := [semantic]

.PHONY: venv postgres-server mcp-conformance demo test lint typecheck docs docs-codes bench dist clean

venv: $(STAMP)

# The first run installs everything (3-5 minutes on a laptop, longer on a busy machine): it says so,
# keeps pip's and setuptools' chatter in $(VENV)/install.log, and shows that log only if it fails.
$(STAMP): $(DEPS)
	@echo "Setting up $(VENV): installing reyn-core, the sandbox, isolation, the loops, the test kit, the tracing add-on, the approval stores, every pack, the example plugin and the demo"
	@echo "(editable, with their dependencies; first run only, usually 3-5 minutes; log: $(VENV)/install.log) ..."
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@start=$$(date +%s); { $(BIN)/python -m pip install -q --upgrade pip && \
		$(BIN)/python -m pip install -q -e '.[dev,bench]' $(foreach p,$(SANDBOX) $(ISOLATION) $(LOOPS) $(TESTKIT) $(OTEL) $(STORES) $(PACKS) $(EXAMPLE) $(DEMO),-e './$(p)$(EXTRAS.$(p))'); \
	} > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; echo "make: installing into $(VENV) failed (log above)"; exit 1; }; \
	echo "$(VENV) ready in $$(( $$(date +%s) - start )) s"
	@touch $(STAMP)

# The memory pack's tests and benchmark start a real PostgreSQL server: install Debian's when no
# initdb is found (CI runs as root); elsewhere say how, and those tests skip (CI=true: fail).
postgres-server:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing postgresql (apt-get) for the memory pack's tests"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	else echo "no PostgreSQL server binaries (initdb): apt-get install postgresql to run the postgres tests"; fi

# The official MCP conformance suite (issue 28), run against `reyn mcp serve` by
# tests/packs/mcp/serve/test_conformance.py. It needs node >= 22: npm installs the suite and the
# `node@22` package (a node binary) into $(CONFORMANCE), whatever node the machine has; without npm,
# Debian's nodejs and npm are installed first when running as root (CI). Elsewhere it says how, and
# the test skips (CI=true: fails).
CONFORMANCE := $(VENV)/conformance
CONFORMANCE_PACKAGES := node@22 @modelcontextprotocol/conformance@0.1.16
mcp-conformance: $(CONFORMANCE)/.installed-0.1.16

$(CONFORMANCE)/.installed-0.1.16:
	@command -v npm >/dev/null 2>&1 || \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing nodejs and npm (apt-get) for the MCP conformance suite"; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
		echo "installing the MCP conformance suite and node 22 into $(CONFORMANCE) (npm; about a minute)"; \
		mkdir -p $(CONFORMANCE) && \
		npm install --prefix $(CONFORMANCE) --no-audit --no-fund --no-save --loglevel=error \
			$(CONFORMANCE_PACKAGES) > $(CONFORMANCE)/install.log 2>&1 \
		|| { cat $(CONFORMANCE)/install.log; echo "make: npm install of the conformance suite failed"; exit 1; }; \
		touch $@; \
	else echo "no npm: apt-get install nodejs npm (then make mcp-conformance) to run the MCP conformance test"; fi

demo: $(STAMP)
	$(BIN)/reyn-demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# What mypy checks is one list, `files` in pyproject.toml's [tool.mypy]: every distribution's package
# (tests/core/test_layer_contract.py fails when one is missing), for this target and `make test` alike.
typecheck: $(STAMP)
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site

# The code tables of docs/diagnostics.md, written from the code data (reyn_core/codes.toml,
# reyn_isolation/codes.toml); tests/docs/test_code_tables.py fails while the page differs.
docs-codes: $(STAMP)
	$(BIN)/python tests/docs/code_tables.py

# The suite runs on TEST_WORKERS processes (pytest-xdist): most tests wait on real subprocesses, so
# more workers than cores still shortens the run; each test file stays on one worker (--dist loadfile),
# so a module's fixtures (a fresh venv, a server) are built once. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 4
test: $(STAMP) postgres-server mcp-conformance
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict --site-dir $(VENV)/site
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP) postgres-server
	$(BIN)/python benchmarks/run.py

# A wheelhouse: one wheel per distribution (core, sandbox, isolation, loops, test kit, tracing, stores, packs, example, demo) in $(DIST); users then install
# by name from it: pip install --find-links dist reyn-tools-file. Offline (the venv's setuptools), and
# each folder's build/ is removed first so a file deleted from the source cannot linger in a wheel.
DIST ?= dist
dist: $(STAMP)
	rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in ./ $(SANDBOX) $(ISOLATION) $(LOOPS) $(TESTKIT) $(OTEL) $(STORES) $(PACKS) $(EXAMPLE) $(DEMO); do echo "wheel of $$p"; rm -rf "$${p}build"; \
		log=$$($(BIN)/python -m build --wheel --no-isolation --outdir '$(DIST)' "$$p" 2>&1) \
		|| { echo "$$log"; exit 1; }; rm -rf "$${p}build"; done
	@ls $(DIST)

clean:
	rm -rf $(VENV) site dist .pytest_cache .mypy_cache .ruff_cache
