"""The hidden suites grade each part on its own, and say what went wrong in plain words.

Graded specimens (tests/submissions/fair-*.json) prove the scores; these tests pin the rules
behind them for every seed, not just the specimens' one: which operators each part's programs
use, which inputs a message lists, and how the child's answers are put into words.
"""

from __future__ import annotations

import importlib.util
import math
import random

import pytest

from graders.course_facts.kit import SUITES
from graders.grading import notes
from graders.grading.judge import plain
from graders.grading.protocol import Outcome

SEEDS = range(20)


def suite(part: str):
    spec = importlib.util.spec_from_file_location(f"hidden_{part}", SUITES / f"test_{part}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def applied_ops(steps: list) -> set[str]:
    """Every operator a program applies, in its own steps and in numerical_grad's function."""
    found = set()
    for name, args in steps:
        if name == "apply":
            found.add(args["op"])
        elif name == "numerical_grad":
            found |= applied_ops(args["body"])
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_part_2_builds_every_graph_from_plus_and_times(seed: int) -> None:
    """No `**` either: an engine without it loses part 1's power tests, not part 2."""
    backward = suite("backward")
    makers = (
        backward.worked_example,
        backward.graph_cases,
        backward.deep_chain,
        backward.twice,
        backward.zeroing,
        backward.topological,
        backward.numerical,
    )
    for make in makers:
        for case in make(random.Random(seed)):
            for program in case.programs:
                assert applied_ops(program.steps) <= {"+", "*", "square"}, case.id  # square: ** or * itself
                assert all(args["op"] in ("+", "*") for name, args in program.steps if name == "chain"), case.id


@pytest.mark.parametrize("seed", SEEDS)
def test_part_2_graphs_stay_between_a_tenth_and_ten(seed: int) -> None:
    backward = suite("backward")
    rng = random.Random(seed)
    for size in (2, 4, 8, 16):
        program, root = backward.random_expression(rng, size)
        values = dict(program.inputs)
        for name, args in program.steps:
            if name == "apply":
                (left, right), op = [values[a] if isinstance(a, str) else a for a in args["operands"]], args["op"]
                values[args["into"]] = left + right if op == "+" else left * right
                assert backward.SMALLEST <= abs(values[args["into"]]) <= backward.LARGEST


def test_part_3_uses_an_activation_only_where_it_is_the_subject() -> None:
    mlp = suite("mlp")
    makers = [mlp.forward_cases, mlp.structure_cases, mlp.sgd_cases, mlp.trajectory_cases, mlp.milestone_cases]
    for make in makers:
        for case in make(random.Random(7)):
            for program in case.programs:
                called = any(name in ("call", "train") for name, _ in program.steps)
                for name, args in program.steps:
                    if name == "mlp" and called and args["activation"] != "linear":
                        assert case.id.endswith(args["activation"]), f"{case.id} runs a {args['activation']} network"


def test_messages_list_only_the_inputs_a_program_uses_in_the_order_it_reads() -> None:
    value = suite("value")
    errors = {case.id: case for case in value.error_cases(random.Random(7))}
    assert list(errors["error-log of 0"].programs[0].inputs) == ["a"]
    assert list(errors["error-Value ** Value"].programs[0].inputs) == ["a", "b"]
    binary = {case.id: case for case in value.binary_cases(random.Random(7))}
    assert list(binary["sub-values"].programs[0].inputs) == ["a", "b", "out.grad"]
    assert list(binary["sub-number-left"].programs[0].inputs) == ["x", "b", "out.grad"]
    assert list(binary["sub-values"].programs[-1].inputs) == ["a", "y", "out.grad"]  # a plain number on the right


def test_value_power_value_passes_with_a_type_error_or_the_right_answer() -> None:
    check = suite("value").power_of_values().check
    right = [8.0, 12.0, 8 * math.log(2)]
    assert check(["TypeError"], ["TypeError"]) is None
    assert check([right], ["TypeError"]) is None
    assert "but the right values are" in check([[8.0, 12.0, 0.0]], ["TypeError"])
    assert check(["ValueError"], ["TypeError"]).startswith("raised ValueError, expected TypeError")


@pytest.mark.parametrize(
    ("got", "shown"),
    [
        ({"not_a_number": "Value"}, "a Value object, expected a number"),
        ([1.5, {"not_a_number": "Value"}], "[1.5, a Value object], expected numbers"),
        ({"not_finite": "inf"}, "inf (not a finite number)"),
        (2.5, "2.5"),
    ],
)
def test_answers_are_shown_in_words(got: object, shown: str) -> None:
    assert plain(got) == shown


def test_a_missing_name_is_noted_once_per_part_and_a_missing_module_once() -> None:
    needs = Outcome([], {"type": notes.NEEDS, "message": "Value._prev", "where": "engine.py"})
    module = Outcome(
        [], {"type": "ModuleNotFoundError", "message": "No module named 'torch'", "where": "engine.py (line 3)"}
    )
    said = notes.collect([("value", needs), ("value", needs), ("backward", needs), ("value", module), ("mlp", module)])
    assert said == [
        "value: the grader needs `Value._prev`, the set of a node's inputs (see engine.py's docstring)",
        "backward: the grader needs `Value._prev`, the set of a node's inputs (see engine.py's docstring)",
        notes.missing_module("No module named 'torch'", "engine.py (line 3)"),
    ]
    assert notes.per_test(needs.error) == (
        "`Value._prev` is missing, so this could not run (see the notes under the score table)"
    )


def test_a_name_the_submission_calls_but_lacks_is_named() -> None:
    error = {
        "type": "AttributeError",
        "message": "'Value' object has no attribute 'tanh'",
        "where": "<lambda> (nn.py, line 18)",
    }
    assert notes.called_but_missing(error) == "Value.tanh"
    assert notes.called_but_missing({**error, "message": "'list' object has no attribute 'data'"}) is None
    assert notes.called_but_missing({**error, "message": "'Value' object has no attribute 'colour'"}) is None
