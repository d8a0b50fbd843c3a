"""Array answers: encoded by the child's `array()`, compared by the parent shape first, then
element by element, and explained with the first element that differs.

The last test runs a real child on a step module written here, so it also proves that a new
`steps_*.py` beside the runner is found without being listed anywhere.
"""

from __future__ import annotations

import shutil
import textwrap

import pytest

from graders.grading.cases import Case, Program
from graders.grading.child_loop import run_child
from graders.grading.comparison import close
from graders.grading.judge import GradeFailure, judge
from graders.grading.protocol import Outcome
from graders.isolation import sandbox
from graders.isolation.workdir import prepare_workdir


def array(shape: list[int], values: object) -> dict:
    return {"shape": shape, "values": values}


COLUMN = array([3, 1], [[1.0], [0.5], [2.0]])


def failure(got: object, want: object, secret: bool = False) -> str:
    """The message a student reads when the one read of a program answered `got`."""
    p = Program(shown="a.matmul(b)", inputs={"a": "a 3x2 array"}, labels=["the product"])
    case = Case("matmul", "tensor", "Tensor.matmul", "rows times columns", [p], secret=secret)
    with pytest.raises(GradeFailure) as raised:
        judge(case, [Outcome([want], None)], [Outcome([got], None)])
    return str(raised.value)


def test_equal_arrays_are_close_within_the_tolerance() -> None:
    assert close(COLUMN, COLUMN, 1e-6, 1e-9)
    assert close(array([3, 1], [[1.0], [0.5000001], [2.0]]), COLUMN, 1e-6, 1e-9)
    assert close(array([], 2.5), array([], 2.5), 1e-6, 1e-9)  # a 0-d array


@pytest.mark.parametrize(
    "got",
    [
        array([3], [1.0, 0.5, 2.0]),  # the right numbers in the wrong shape
        array([3, 1], [[1.0], [0.25], [2.0]]),
        array([3, 1], [[1.0], [{"not_finite": "nan"}], [2.0]]),
        {"not_a_number": "Value"},
        [[1.0], [0.5], [2.0]],  # nested lists are not an array answer
        array([3, 1], [[1.0], [0.5]]),  # a forged shape: its values must still match
    ],
)
def test_any_difference_fails(got: object) -> None:
    assert not close(got, COLUMN, 1e-6, 1e-9)


def test_a_wrong_shape_is_said_first() -> None:
    message = failure(array([3], [1.0, 0.5, 2.0]), COLUMN)
    assert message.splitlines()[0] == "Tensor.matmul: the product: expected shape (3, 1), got (3,)"
    assert "    expected: [[1.0], [0.5], [2.0]]\n    got:      [1.0, 0.5, 2.0]\n" in message


def test_a_wrong_element_is_shown_with_its_index_and_both_values() -> None:
    want = array([2, 2], [[1.0, 2.0], [0.5, 3.0]])
    message = failure(array([2, 2], [[1.0, 2.0], [0.25, 3.5]]), want)
    assert message.splitlines()[0] == "Tensor.matmul: the product: at [1, 0]: expected 0.5, got 0.25"
    assert "    expected: [[1.0, 2.0], [0.5, 3.0]]\n    got:      [[1.0, 2.0], [0.25, 3.5]]\n" in message


def test_a_large_array_is_shown_by_its_shape() -> None:
    want = array([4, 4], [[float(i + 4 * j) for i in range(4)] for j in range(4)])
    got = array([4, 4], [row[:] for row in want["values"]])
    got["values"][3][2] = -1.0
    message = failure(got, want)
    assert message.splitlines()[0] == "Tensor.matmul: the product: at [3, 2]: expected 14.0, got -1.0"
    assert "    expected: an array of shape (4, 4)\n    got:      an array of shape (4, 4)\n" in message


def test_a_non_finite_element_is_named() -> None:
    message = failure(array([3, 1], [[1.0], [{"not_finite": "nan"}], [2.0]]), COLUMN)
    assert (
        message.splitlines()[0] == "Tensor.matmul: the product: at [1, 0]: expected 0.5, got nan (not a finite number)"
    )


def test_an_answer_that_is_no_array_is_named() -> None:
    message = failure({"not_a_number": "Value"}, COLUMN)
    assert (
        message.splitlines()[0] == "Tensor.matmul: the product: expected an array of shape (3, 1), got a Value object"
    )
    assert "    got:      a Value object\n" in message


def test_a_list_of_arrays_names_the_first_array_that_differs() -> None:
    want = [array([2], [1.0, 2.0]), array([2, 1], [[0.5], [3.0]])]
    message = failure([array([2], [1.0, 2.0]), array([2, 1], [[0.5], [3.5]])], want)
    assert message.splitlines()[0] == "Tensor.matmul: the product: [1] at [1, 0]: expected 3.0, got 3.5"
    assert "    expected: [[1.0, 2.0], [[0.5], [3.0]]]\n" in message
    message = failure([array([2], [1.0, 2.0]), array([2], [0.5, 3.0])], want)
    assert message.splitlines()[0] == "Tensor.matmul: the product: [1] expected shape (2, 1), got (2,)"


def test_a_secret_case_shows_no_expected_array() -> None:
    message = failure(array([3], [1.0, 0.5, 2.0]), COLUMN, secret=True)
    assert message.splitlines()[0] == "Tensor.matmul: the product"
    assert "    expected: (hidden)\n" in message and "(3, 1)" not in message


ARRAY_STEPS = '''
    """Steps used only by tests/test_array_answers.py."""

    from steps import array, reader, step


    @step
    def made(run, *, into, value):
        """into = what NumPy makes of value (a 2-d list becomes an array)."""
        import numpy

        run.slots[into] = numpy.array(value, dtype=float) if isinstance(value, list) else value


    @reader
    def as_array(run, obj):
        """The object as an array answer."""
        return array(obj)
'''


def test_the_child_sends_arrays_and_names_bad_steps() -> None:
    workdir, _ = prepare_workdir(None, None)
    try:
        (workdir / "steps_array_test.py").write_text(textwrap.dedent(ARRAY_STEPS))
        programs = [
            [
                ["made", {"into": "a", "value": [[1.0], [float("nan")], [3.0]]}],
                ["read", {"kind": "as_array", "ref": "a"}],
            ],
            [["made", {"into": "a", "value": 2.5}], ["read", {"kind": "as_array", "ref": "a"}]],
            # a dict stands for any object NumPy reads only as one object: a Value, None, ...
            [["made", {"into": "a", "value": {"literal": 1}}], ["read", {"kind": "as_array", "ref": "a"}]],
            [["chain", {"into": "y", "start": "x"}]],
            [["no_such_step", {}]],
            [["read", {"kind": "no_such_read", "ref": "a"}]],
        ]
        names = [f"program {i}" for i in range(len(programs))]
        outcomes = run_child(workdir, programs, names, ["arrays"] * len(programs), sandbox.Isolation("local"))
    finally:
        shutil.rmtree(workdir)
    assert outcomes[0] == Outcome([array([3, 1], [[1.0], [{"not_finite": "nan"}], [3.0]])], None)
    assert outcomes[1] == Outcome([array([], 2.5)], None)
    assert outcomes[2] == Outcome([{"not_a_number": "dict"}], None)
    assert outcomes[3].error["type"] == "TypeError"
    assert "missing 3 required keyword-only arguments: 'op', 'operand', and 'times'" in outcomes[3].error["message"]
    assert outcomes[4].error == {"type": "ValueError", "message": "unknown step 'no_such_step'", "where": None}
    assert outcomes[5].error == {"type": "ValueError", "message": "unknown read 'no_such_read'", "where": None}
