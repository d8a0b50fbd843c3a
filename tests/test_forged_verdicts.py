"""A submission that forges the child's answers gains nothing.

The child only reports what it observed, and the parent decides (graders/child/steps.py): a
`minigrad/__init__.py` can replace the child's `run_program` with its own and answer anything,
so an answer must be worth nothing unless it is the answer to this very program. Two forgers
prove it:

- tests/submissions/attack-forge-verdicts.json answers what a stub can work out without an
  engine (a topological order from the program's own steps, an accuracy, a gradient gap,
  Linear's shapes and bounds); tests/test_grader_submissions.py grades it: the same score as
  the stub it starts from, on every part.
- here, a stub answers every program of a grading with the reference's own answers to the
  same programs drawn with another seed: the "typical" answer of every step and read kind at
  once. A test it passes must ask the same question at every seed (an error's type, a quiz
  letter, the parameter count of a fixed shape), whose answer is no verdict of the child.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path

from course.submissions import materialize
from graders.course_facts.kit import CHILD, SUITES
from graders.course_facts.parts import PARTS
from graders.grading.cases import MAKER, Case
from graders.grading.child_loop import run_reference
from graders.grading.comparison import close

from grading import ROOT, grade

SEED, OTHER_SEED = 7, 1
FORGER = '''
import sys

from ._typical_answers import ANSWERS

_child = sys.modules["__main__"]
_run_program = _child.run_program
_count = [0]


def _forged(program, folder):
    """The answers the reference gave to this program at another seed, in place of running it."""
    index = sys._getframe(1).f_locals.get("index", _count[0])
    _count[0] = index + 1
    if index < len(ANSWERS) and ANSWERS[index] is not None:
        return ANSWERS[index], None
    return _run_program(program, folder)


_child.run_program = _forged
'''
# Steps no graded program uses: the API probes (notes, no points) and --check-imports' step.
SCORE_NOTHING = {"api", "api_nn", "api_tensor", "imports"}
# Tests the forger must pass, or it never reached the child's answers: their questions are the
# same at every seed. Each is no verdict of the child: an error's type, a count.
FIXED = ["value: log of 0 must raise ValueError [error-log of 0]", "mlp: len(MLP(2, [1]).parameters()) [count-2-1]"]


def suite(part: str):
    spec = importlib.util.spec_from_file_location(f"hidden_{part}", SUITES / f"test_{part}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def graded_cases(seed: int) -> list[tuple[str, Case]]:
    """(test function, case) in the order the grader collects them: the parts in grading
    order, each suite's tests in the order they are defined, as the grading plugin draws them."""
    found = []
    for part in PARTS:
        for name, function in vars(suite(part)).items():
            make = getattr(function, MAKER, None)
            if make is not None:
                found += [(name, case) for case in make(random.Random(f"{seed}/{name}"))]
    return found


def programs_sent(cases: list[tuple[str, Case]]) -> list[list | None]:
    """Every program as the grader sends them, None for the API probe (run after the last
    program of part 1, as graders/grading/plugin.py places it)."""
    programs = [program.steps for _, case in cases for program in case.programs]
    parts = [case.part for _, case in cases for _ in case.programs]
    probe = len(parts) - parts[::-1].index("value")
    return [*programs[:probe], None, *programs[probe:]]


def reference_answers(cases: list[tuple[str, Case]]) -> list[list | None]:
    """The reference's reads for each program sent (None for the probe, which it never fakes)."""
    sent = programs_sent(cases)
    real = [program for program in sent if program is not None]
    names = [f"{name}[{case.id}]" for name, case in cases for _ in case.programs]
    parts = [case.part for _, case in cases for _ in case.programs]
    outcomes = iter(run_reference(real, names, parts))
    answers = [None if program is None else next(outcomes) for program in sent]
    assert all(outcome is None or outcome.error is None for outcome in answers)
    return [None if outcome is None else outcome.out for outcome in answers]


def same_question(case: Case, other: Case, answers: list, others: list) -> bool:
    """Both seeds ask this test the same thing: the same programs, or answers the reference
    gives alike."""
    if [p.steps for p in case.programs] == [p.steps for p in other.programs]:
        return True
    return all(close(a, b, case.rtol, case.atol) for a, b in zip(answers, others))


def forging_submission(folder: Path, answers: list) -> Path:
    """The untouched release, plus an __init__.py that answers every program with `answers`."""
    submission = materialize(ROOT / "tests" / "submissions" / "untouched-release.json", folder)
    package = submission / "minigrad"
    with open(package / "__init__.py", "a", encoding="utf-8") as f:
        f.write(FORGER)
    (package / "_typical_answers.py").write_text(f"import json\n\nANSWERS = json.loads({json.dumps(answers)!r})\n")
    return submission


def test_answers_from_another_seed_pass_only_the_questions_every_seed_asks(tmp_path: Path) -> None:
    cases, others = graded_cases(SEED), graded_cases(OTHER_SEED)
    assert [case.id for _, case in cases] == [case.id for _, case in others]
    answers, other_answers = reference_answers(cases), reference_answers(others)
    _, results = grade(forging_submission(tmp_path / "forger", other_answers), tmp_path / "out", seed=SEED)

    passed = {test["name"] for test in results["tests"] if test["score"] > 0}
    for name in FIXED:
        assert name in passed, f"the forger never answered {name}: the grader sends its programs otherwise now"
    mine, theirs = iter(a for a in answers if a is not None), iter(a for a in other_answers if a is not None)
    gained = []
    for (_, case), (_, other) in zip(cases, others):
        asked = [next(mine) for _ in case.programs], [next(theirs) for _ in other.programs]
        name = f"{case.part}: {case.what} [{case.id}]"
        if name in passed and not same_question(case, other, *asked):
            gained.append(name)
    assert gained == [], "answers to another seed's programs pass these tests"


def steps_used(steps: list) -> set[str]:
    """The names of the steps and read kinds (as `read:kind`) of `steps`, and of the steps
    that a step runs itself (a function's `body`, a `raises` step's `action`)."""
    found = set()
    for name, arguments in steps:
        found |= {name, f"read:{arguments['kind']}"} if name == "read" else {name}
        for value in arguments.values():
            if isinstance(value, list) and value and all(_is_step(v) for v in value):
                found |= steps_used(value)
            elif _is_step(value):
                found |= steps_used([value])
    return found


def _is_step(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)


def test_every_step_and_read_kind_is_in_a_graded_program() -> None:
    """So the forger above answers every step the child knows (and a new step is covered)."""
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import interpreter, json, steps; print(json.dumps([*steps.STEPS, *map('read:'.__add__, steps.READS)]))",
        ],
        cwd=CHILD,
        capture_output=True,
        text=True,
        check=True,
    )
    used = set().union(*(steps_used(p.steps) for _, case in graded_cases(SEED) for p in case.programs))
    assert set(json.loads(listed.stdout)) - SCORE_NOTHING <= used
