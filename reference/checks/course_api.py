"""The course's requirements, in words, for an error that no line of the student's code raised.

Python raises `unsupported operand` itself when a class lacks an operator, and a read-only
`grad` fails where the checks (or the grader) set it: calling that "your code raised" blames
code that never ran. The public checks and the hidden grader both word such an error here, so
a student reads the same sentence in `make check` and in the grade.
"""

from __future__ import annotations

import re

OPERATORS = {
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "truediv",
    "**": "pow",
    "** or pow()": "pow",
    "@": "matmul",
}
NUMBERS = ("int", "float")
OPERAND = re.compile(r"unsupported operand type\(s\) for (.+): '(\w+)' and '(\w+)'")
UNARY = re.compile(r"bad operand type for unary -: '(\w+)'")
READ_ONLY = re.compile(r"property (?:'(\w+)' )?of '(\w+)' object has no setter")
VALUE_NAMES = ("data", "grad", "_prev", "_backward", "_op", "backward", "exp", "log", "tanh", "relu", "sigmoid")


def unmet(kind: str, message: str) -> str | None:
    """The requirement an error raised outside the student's code shows is unmet, or None when
    the error says nothing about the course's API. `kind` is the exception's type name."""
    if kind == "TypeError":
        return _operator(message)
    if kind == "AttributeError":
        return _read_only(message)
    if kind == "NotIterable":  # the grader's own walk of a node's inputs
        return f"`{message}` cannot be iterated: the course walks a node's inputs with `for child in out._prev`"
    return None


def requirement(kind: str, message: str) -> tuple[str, str] | None:
    """The name of the course's API that an error raised outside the student's code shows
    unmet, and what is wrong with it: ("Value.__rsub__", " is missing"), ("Value.grad",
    " cannot be set"), ("Value._prev", " cannot be iterated"); None as for `unmet`. The grader
    groups every failure it causes under that name."""
    operator = OPERAND.fullmatch(message)
    if kind == "TypeError" and operator and operator[1] in OPERATORS:
        left, right = operator[2], operator[3]
        if left in NUMBERS and right not in NUMBERS:
            return f"{right}.__r{OPERATORS[operator[1]]}__", " is missing"
        if left not in NUMBERS:
            return f"{left}.__{OPERATORS[operator[1]]}__", " is missing"
    unary = UNARY.fullmatch(message)
    if kind == "TypeError" and unary:
        return f"{unary[1]}.__neg__", " is missing"
    read_only = READ_ONLY.fullmatch(message)
    if kind == "AttributeError" and read_only:
        return f"{read_only[2]}.{read_only[1] or 'grad'}", " cannot be set"
    if kind == "NotIterable":
        return message, " cannot be iterated"
    return None


def _operator(message: str) -> str | None:
    found = OPERAND.fullmatch(message)
    if found and found[1] in OPERATORS:
        symbol, left, right = found[1].split(" or ")[0], found[2], found[3]
        if left in NUMBERS and right not in NUMBERS:
            return f"`{right}` has no `__r{OPERATORS[found[1]]}__`: `2 {symbol} {right}(...)` needs it"
        if left not in NUMBERS:
            return f"`{left}` has no `__{OPERATORS[found[1]]}__` for `{right}`: `{left}(...) {symbol} {right}` needs it"
    unary = UNARY.fullmatch(message)
    if unary:
        return f"`{unary[1]}` has no `__neg__`: `-{unary[1]}(...)` needs it"
    return None


def _read_only(message: str) -> str | None:
    found = READ_ONLY.fullmatch(message)
    if found and found[1]:
        name, owner = found[1], found[2]
        return (
            f"`{name}` cannot be set: the course sets `out.{name}` on a `{owner}`, "
            f"so `{name}` must be a plain attribute (or a property with a setter)"
        )
    if found:  # a property made by a lambda has no name to say
        return f"a read-only property of `{found[2]}` cannot be set: the course sets `grad` and `data` on its Values"
    return None


def plain_number_hint(kind: str, message: str) -> str | None:
    """The hint for a plain number where an object was expected, or None. A number asked for
    a Value's name (`.data`) reached code that expects a Value; asked for anything else
    (`.shape`, `.T`), it met code that expects an array, where the course's Value holds one
    number: the grader and the checks set `out.grad = 1.0`, a plain float."""
    found = re.fullmatch(r"'(?:int|float)' object has no attribute '(\w+)'", message)
    if kind != "AttributeError" or not found:
        return None
    if found[1] in VALUE_NAMES:
        return (
            "a plain number reached code that expects a Value: wrap it first, as lesson 1's `__add__` does: "
            "`other = _as_value(other)`, then `if other is NotImplemented: return NotImplemented`"
        )
    return (
        f"a plain number has no `.{found[1]}`: the course's `Value` holds one number in `data` and "
        "its gradient in `grad` (the course sets `out.grad = 1.0`), not arrays"
    )
