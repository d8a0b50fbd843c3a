"""The shared words for an error no line of the student's code raised (reference/checks/course_api.py):
the grader and the public checks read the same table, so it is tested once, here."""

from __future__ import annotations

from graders.grading import notes
from graders.grading.judge import course_api
from graders.grading.protocol import Outcome


def test_a_missing_reflected_operator_is_named() -> None:
    said = course_api.unmet("TypeError", "unsupported operand type(s) for -: 'int' and 'Value'")
    assert said == "`Value` has no `__rsub__`: `2 - Value(...)` needs it"


def test_a_missing_operator_on_the_left_and_a_missing_neg_are_named() -> None:
    said = course_api.unmet("TypeError", "unsupported operand type(s) for ** or pow(): 'Value' and 'int'")
    assert said == "`Value` has no `__pow__` for `int`: `Value(...) ** int` needs it"
    assert course_api.unmet("TypeError", "bad operand type for unary -: 'Value'") == (
        "`Value` has no `__neg__`: `-Value(...)` needs it"
    )


def test_a_read_only_grad_is_named() -> None:
    said = course_api.unmet("AttributeError", "property 'grad' of 'Value' object has no setter")
    assert said.startswith("`grad` cannot be set: the course sets `out.grad` on a `Value`")


def test_other_errors_name_no_requirement() -> None:
    assert course_api.unmet("TypeError", "'NoneType' object is not callable") is None
    assert course_api.unmet("ValueError", "math domain error") is None


def test_a_plain_number_asked_for_an_array_name_is_not_told_to_wrap_it() -> None:
    """A Value holding arrays meets the course's `out.grad = 1.0`: wrapping would not help."""
    assert "wrap it first" in course_api.plain_number_hint("AttributeError", "'float' object has no attribute 'data'")
    hint = course_api.plain_number_hint("AttributeError", "'float' object has no attribute 'shape'")
    assert hint.startswith("a plain number has no `.shape`: the course's `Value` holds one number in `data`")
    assert course_api.plain_number_hint("AttributeError", "'Value' object has no attribute 'shape'") is None


def test_each_unmet_requirement_has_the_name_the_grader_groups_failures_under() -> None:
    """root_cause.py's step 1: every failure an unmet requirement causes is grouped under its name."""
    assert course_api.requirement("TypeError", "unsupported operand type(s) for -: 'int' and 'Value'") == (
        "Value.__rsub__",
        " is missing",
    )
    assert course_api.requirement("TypeError", "unsupported operand type(s) for ** or pow(): 'Value' and 'int'") == (
        "Value.__pow__",
        " is missing",
    )
    assert course_api.requirement("TypeError", "bad operand type for unary -: 'Value'") == (
        "Value.__neg__",
        " is missing",
    )
    said = course_api.requirement("AttributeError", "property 'grad' of 'Value' object has no setter")
    assert said == ("Value.grad", " cannot be set")
    assert course_api.requirement("NotIterable", "Value._prev") == ("Value._prev", " cannot be iterated")
    assert course_api.requirement("TypeError", "'NoneType' object is not callable") is None


def test_the_tensor_probe_names_each_mismatch_once_with_the_student_s_likely_name() -> None:
    names = ["array", "backprop", "needs_grad", "shape", "zero_grad"]
    said = notes.api_tensor(Outcome([names, "list", "missing", "ndarray", "AttributeError"], None))
    assert said == [
        "course API (Tensor): `data` is missing; you have `array`",
        "course API (Tensor): `grad` is missing",
        "course API (Tensor): `requires_grad` is missing; you have `needs_grad`",
        "course API (Tensor): `backward` is missing; you have `backprop`",
        "course API (Tensor): your `Tensor` holds a list in `data`; the course's holds a NumPy array",
        "course API (Tensor): a new `Tensor`'s `grad` is a ndarray; the course's is None until backward() reaches it",
    ]
    course = ["backward", "data", "grad", "requires_grad", "shape"]
    assert notes.api_tensor(Outcome([course, "ndarray", "True", "NoneType", "AttributeError"], None)) == [
        "course API (Tensor): `Tensor([1.0, 2.0]).requires_grad` is True; the course's is False unless asked for",
        "course API (Tensor): `grad` cannot be set: the course sets `tensor.grad`",
    ]
    assert notes.api_tensor(Outcome([course, "ndarray", "False", "NoneType", "no error"], None)) == []
    assert notes.api_tensor(Outcome([], {"type": "SyntaxError", "message": "m", "where": None})) == []


def test_the_probe_s_operator_lines_are_kept_only_in_their_own_shape() -> None:
    found = {
        "Value.__mul__": ["engine.py", 72],
        "Value.__mul__'s backward": ["engine.py", 80],
        "Value.__add__\n# x": ["engine.py", 1],
        "Value.exp": ["../x.py", 3],
        "Value.log": ["engine.py", True],
    }
    assert notes.locations(found) == {
        "Value.__mul__": ["engine.py", 72],
        "Value.__mul__'s backward": ["engine.py", 80],
    }
