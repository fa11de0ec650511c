# code3 developer entry points. Needs only python3 (3.11+) and access to PyPI; everything else lands in $(VENV).

VENV ?= .venv
PY = $(VENV)/bin/python
# Prefer the interpreter the project targets; any python3 >= 3.11 works.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
# Mirror of pyproject's [dependency-groups] dev: pip < 25.1 cannot install dependency groups itself.
DEV_DEPS = 'pytest>=8.3,<10' 'pytest-timeout>=2.3' 'ruff>=0.17,<0.18' 'hypothesis>=6.100' \
	'hypothesis-jsonschema>=0.23' 'schemathesis>=4.0,<5' 'griffe==2.4.1' \
	'griffe-public-redundant-aliases==0.3.2' 'griffe-public-wildcard-imports==0.3.2' 'selenium>=4.30' \
	'pytest-xdist>=3.6' 'mypy>=1.15,<3'

.DEFAULT_GOAL := test
.PHONY: install demo test unit lint typecheck docs bench bench-growth clean wheel-check test-tools fuzz race conformance corpus \
	screenshots soak

# Stamp file: reinstall only when pyproject.toml changes (or the venv is gone).
$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "no python3 on PATH" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV) || { echo "'$(PYTHON) -m venv' failed (Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e . $(DEV_DEPS)
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/code3 demo

# The campaigns' short profile (the full ones: `make fuzz`, `make race`).
FUZZ_EXAMPLES ?= 200
RACE_ROUNDS ?= 2
# Test files run in parallel processes (pytest-xdist; a file stays in one): most tests wait on subprocesses,
# servers and databases rather than the CPU. TEST_WORKERS=0 runs them in this process, one at a time.
TEST_WORKERS ?= 4

# The tree-sitter Move grammar the contract's parse test uses, built once from PyPI's sdist (needs a C compiler).
MOVE_GRAMMAR = .cache/tree-sitter-move/tree-sitter-move-0.0.2.so
$(MOVE_GRAMMAR): scripts/build_move_grammar.sh | $(VENV)/.installed
	bash scripts/build_move_grammar.sh

# Hypothesis runs its `ci` profile here (tests/conftest.py: more examples than the `dev` one every other run gets).
# First the test tools that need no root (scripts/install_user_tools.sh: npm packages and Node 22 under .cache/node
# when npm is on PATH; about 0.1 s when all are there); a test whose tool is missing skips with the reason (-rs
# lists them at the end), or fails under CODE3_REQUIRE_TEST_TOOLS=1 (.ci/run; tests/tools_needed.py).
test: $(VENV)/.installed $(MOVE_GRAMMAR)
	bash scripts/install_user_tools.sh
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	CODE3_HYPOTHESIS_PROFILE=ci CODE3_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) CODE3_RACE_ROUNDS=$(RACE_ROUNDS) \
		$(PY) -m pytest -q -rfEs -p hypothesispytest --durations=25 -n $(TEST_WORKERS) --dist loadfile

# The fast loop: tests/unit alone, in this one process, hypothesis' small `dev` profile (about 9 s on 2 cores; more
# processes only add their start-up; `make test` before pushing). Unit tests start no subprocess (git and the CLI
# included), open no connection beyond loopback and use no PostgreSQL: tests/unit/conftest.py fails one that does,
# which then belongs in tests/integration (or tests/campaigns when it takes seconds).
# UNIT_ARGS: more pytest arguments, e.g. UNIT_ARGS='-x -k anchor'.
UNIT_ARGS ?=
unit: $(VENV)/.installed $(MOVE_GRAMMAR)
	$(PY) -m pytest -q -p hypothesispytest tests/unit $(UNIT_ARGS)

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

# mypy over every layer ([tool.mypy] in pyproject.toml), at zero errors; `make test` runs it too.
typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

# The generated pages: the tool reference from the tools' declarations, the configuration table from
# code3/settings.py (tests fail when either is stale).
docs: $(VENV)/.installed
	$(PY) -m mcp_tools.reference
	$(PY) -m code3.settings

wheel-check: $(VENV)/.installed
	bash scripts/check_wheel.sh

# Every test tool: the ones `make test` installs itself, then Debian's Go, Chromium and chromedriver (apt: root or sudo).
test-tools:
	bash scripts/install_test_tools.sh

# docs/board.png and docs/bounty.png: a board of eight bounties in a real headless Chromium (Debian's chromium and
# chromedriver, from test-tools); the browser tests' own screenshots land in .cache/screenshots/.
screenshots: $(VENV)/.installed test-tools
	$(PY) -m tests.e2e.screenshots docs

# The campaigns of the trust issue at full size (`make test` runs a short profile of each).
fuzz: $(VENV)/.installed
	CODE3_FUZZ_EXAMPLES=2000 $(PY) -m pytest -q tests/campaigns/test_fuzz_tools.py

race: $(VENV)/.installed
	CODE3_RACE_ROUNDS=20 CODE3_RACERS=4 $(PY) -m pytest -q tests/campaigns/test_race_campaign.py

# The chaos campaign at full size (issue 20; `make test` runs tests/campaigns/test_soak_short.py): 20 agents drive
# up to 200 lifecycles through 3 serves and 2 workers on PostgreSQL while serves and workers are SIGKILLed, the
# campaign's backends terminated and the database cut off for 20 s; no lifecycle starts after 10 minutes.
SOAK_ARGS ?= --agents 20 --lifecycles 200 --seconds 420 --kills 8 --terminations 4 --drop-seconds 20 \
	--concurrency 16 --max-seconds 600
soak: $(VENV)/.installed
	CODE3_TEST_POSTGRES=$${CODE3_TEST_POSTGRES:-postgresql://postgres@127.0.0.1:5432/test} \
		$(PY) -m tests.campaigns.soak $(SOAK_ARGS)

# The MCP conformance suite (0.2.0-alpha.12): every server scenario of both requirement sets against code3 serve,
# code3 serve --stateless and a bare SDK server, as a table (Node 22 and the suite land in .cache/node; a loopback
# proxy adds the serve token the suite cannot send); fails when Code3 misses what the bare server passes.
conformance: $(VENV)/.installed
	PY=$(abspath $(PY)) scripts/conformance.sh

# The pinned corpus of real packages (PyPI, npm, Debian) into .cache/corpus (never committed).
corpus:
	bash scripts/fetch_corpus.sh

# Every measurement, each printing ratios against a baseline measured in the same run.
bench: $(VENV)/.installed test-tools corpus
	$(PY) benchmarks/run.py
	$(PY) -m benchmarks.realcode
	$(PY) -m benchmarks.realcode_prepare
	$(PY) -m benchmarks.skeletons
	$(PY) -m benchmarks.reverse_spec
	$(PY) -m benchmarks.codenexus
	$(PY) -m benchmarks.reanchor
	$(PY) -m benchmarks.hostile_inputs
	$(PY) -m benchmarks.concurrency
	$(PY) -m benchmarks.snapshots
	$(PY) -m benchmarks.growth

# The growth table with the 100 000-bounty level too (long: the stores are seeded in bulk first).
bench-growth: $(VENV)/.installed
	$(PY) -m benchmarks.growth --big

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache build *.egg-info
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
