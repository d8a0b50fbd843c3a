# Every workflow is one target; each creates .venv and installs what it needs on first use.
#   make check [PART=value|backward|mlp|tensor|checkpoint] [SUBMISSION=dir]   public checks
#   make release      regenerate assignments/ from reference/
#   make test         the project's own tests (the command CI runs)
#   make lint         ruff
#   make grade [SUBMISSION=dir OUT=dir]   the hidden grader (default: the sample class, with minigrad-class)
#   make bench [RUNS=3]  grading speed per part and of hangs, the tensor engine vs PyTorch, a class of 100 graded and compared
#   make gradescope SECRET_FILE=file [VISIBILITY=after_due_date]   Gradescope's autograder.zip
#   make classroom DEST=dir            a GitHub Classroom student repository
#   make audit [AUDIT_JOBS=2]          mutation testing of the public checks and hidden suites: build/audit/report.md

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SUBMISSION ?= assignments
PART ?=
OUT ?= build/grade
CHECKS := assignments/checks

.PHONY: check release release-check test lint format grade bench gradescope classroom

# The first step of every target: a Python the kit supports, and one that can make .venv
# (Debian's needs python3-venv, which course/machine.py installs as root or names otherwise).
$(VENV)/.student: pyproject.toml
	test -x $(PY) || { $(PYTHON) -m course.machine venv && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[plots]"
	touch $@

$(VENV)/.instructor: pyproject.toml $(VENV)/.student
	$(PY) -m pip install -q -e ".[instructor]"
	touch $@

$(VENV)/.dev: pyproject.toml $(VENV)/.instructor
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

# What grading and the tests use from the machine (python3-venv, bubblewrap; Graphviz for the
# tests that draw, Chromium and its driver for the tests that open pages): installed once, in one apt-get run, as root; else named with the command to
# run (see the README).
$(VENV)/.machine-grade:
	$(PYTHON) -m course.machine --stamp $@ venv bubblewrap

$(VENV)/.machine-test:
	$(PYTHON) -m course.machine --stamp $@ venv bubblewrap graphviz browser

include course/check.mk

release: $(VENV)/.instructor
	$(PY) -m course.release

release-check: $(VENV)/.instructor
	$(PY) -m course.release --check

# The suite spends most of its time waiting on sandboxed children (hangs, sleeps, time-outs),
# not computing, so four workers on two cores finish it about three times sooner; the grader's
# scores do not depend on load, and the tests check that too. Its tests take from a hundredth
# of a second to two minutes: with `worksteal`, a worker that runs out takes queued tests from
# the others, so the run does not end waiting on one worker's backlog.
TEST_WORKERS ?= 4

test: $(VENV)/.machine-test $(VENV)/.dev release-check lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=10

lint: $(VENV)/.dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.dev
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# With SUBMISSION given, grade that folder; otherwise grade the sample class in examples/ with
# minigrad-class (grades, feedback and the class report in build/class/).
grade: $(VENV)/.machine-grade $(VENV)/.instructor
ifeq ($(origin SUBMISSION),command line)
	$(VENV)/bin/minigrad-grade "$(SUBMISSION)" --out "$(OUT)"
else
	$(PY) -m course.sample_class
endif

# Each figure is the median of RUNS runs, with its spread (bench/repeat.py); a busy machine is
# said once, first. The kit's modules are compiled first, as any install caches them: where
# PYTHONDONTWRITEBYTECODE is set, every grading would otherwise compile them again (0.07 s).
# similarity_peers.py installs Dolos (pinned in bench/dolos) into build/dolos with npm the first
# time, compiling its parsers: about 5 minutes, and Node, npm and a C++ compiler are needed.
RUNS ?= 3

bench: $(VENV)/.machine-grade $(VENV)/.dev
	$(PY) bench/repeat.py
	$(PY) -m compileall -q graders course
	BENCH_LOAD_SAID=1 BENCH_RUNS=$(RUNS) $(PY) bench/grade_speed.py
	BENCH_LOAD_SAID=1 $(PY) bench/tensor_speed.py
	BENCH_LOAD_SAID=1 BENCH_RUNS=$(RUNS) $(PY) bench/class_speed.py
	BENCH_LOAD_SAID=1 BENCH_RUNS=$(RUNS) $(PY) bench/class_resume.py
	BENCH_LOAD_SAID=1 BENCH_RUNS=$(RUNS) $(PY) bench/similarity_speed.py
	BENCH_LOAD_SAID=1 $(PY) bench/similarity_peers.py

# The secret file goes into the zip, never into git (see graders/gradescope/package.py).
gradescope: $(VENV)/.instructor
	$(PY) -m graders.gradescope.package --secret-file "$(SECRET_FILE)" $(if $(VISIBILITY),--visibility "$(VISIBILITY)")

classroom: $(VENV)/.instructor
	$(PY) -m course.classroom "$(DEST)"

# Mutants of the reference's holes, each graded by the public checks and the hidden grader
# (graders/audit/); exits 1 when a mutant is caught by the public checks only, or the hidden
# grader catches fewer than 95% of the mutants not allow-listed as equivalent.
AUDIT_JOBS ?= 2

.PHONY: audit
audit: $(VENV)/.machine-grade $(VENV)/.instructor
	$(PY) -m graders.audit --jobs $(AUDIT_JOBS)
