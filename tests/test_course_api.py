"""The shared words for an error no line of the student's code raised (reference/checks/course_api.py):
the grader and the public checks read the same table, so it is tested once, here."""

from __future__ import annotations

from graders.judge import course_api


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
