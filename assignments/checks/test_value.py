"""Part 1: each operator's forward value and local derivative, one node at a time.

None of these need part 2: the local derivatives are run by the checks' own small walker
with an upstream gradient of 2.5, not 1, so a missing `* out.grad` shows.
"""

import math
import random

import pytest

import evidence
from feedback import expect_close, expect_raises, fail
from student import located, module
from trusted import central_difference, local_backward

engine = module("engine")

pytestmark = pytest.mark.value

UPSTREAM = 2.5
A, B = 2.0, -3.0  # as in lesson 2's example: a = 2, b = -3

# name -> (build from Values a and b, the same on floats, d/da, d/db, hint). `*` before `-`: the
# lesson builds `a - b` from `+` and `*`, so a mistake in `*` is first seen at `a * b`, where it is.
BINARY = {
    "a + b": (
        lambda a, b: a + b,
        lambda a, b: a + b,
        lambda a, b: 1.0,
        lambda a, b: 1.0,
        "both local derivatives of + are 1: self.grad += out.grad",
    ),
    "a * b": (
        lambda a, b: a * b,
        lambda a, b: a * b,
        lambda a, b: b,
        lambda a, b: a,
        "d(a*b)/da is b: self.grad += other.data * out.grad",
    ),
    "a - b": (
        lambda a, b: a - b,
        lambda a, b: a - b,
        lambda a, b: 1.0,
        lambda a, b: -1.0,
        "a - b is a + (-b): the gradient reaches b with a minus sign",
    ),
    "a / b": (
        lambda a, b: a / b,
        lambda a, b: a / b,
        lambda a, b: 1 / b,
        lambda a, b: -a / b**2,
        "d(a/b)/da = 1/b and d(a/b)/db = -a/b**2",
    ),
}
# name -> (build from a Value, float function, derivative, input, hint)
UNARY = {
    "a ** 3": (lambda a: a**3, lambda x: x**3, lambda x: 3 * x**2, A, "d(x**n)/dx = n * x**(n-1), times out.grad"),
    "a ** -0.5": (
        lambda a: a**-0.5,
        lambda x: x**-0.5,
        lambda x: -0.5 * x**-1.5,
        A,
        "d(x**n)/dx = n * x**(n-1) works for fractional and negative n too",
    ),
    "-a": (lambda a: -a, lambda x: -x, lambda x: -1.0, A, "-a is a * -1"),
    "a.exp()": (lambda a: a.exp(), math.exp, math.exp, 0.5, "e**x is its own derivative: use out.data"),
    "a.log()": (lambda a: a.log(), math.log, lambda x: 1 / x, A, "d(ln x)/dx = 1/x"),
    "a.tanh()": (
        lambda a: a.tanh(),
        math.tanh,
        lambda x: 1 - math.tanh(x) ** 2,
        0.5,
        "d(tanh x)/dx = 1 - tanh(x)**2: reuse out.data",
    ),
    "a.relu()": (
        lambda a: a.relu(),
        lambda x: max(0.0, x),
        lambda x: float(x > 0),
        1.5,
        "relu passes the gradient through where x > 0, and nothing elsewhere",
    ),
    "a.sigmoid()": (
        lambda a: a.sigmoid(),
        lambda x: 1 / (1 + math.exp(-x)),
        lambda x: math.exp(-x) / (1 + math.exp(-x)) ** 2,
        -0.7,
        "d(sigmoid x)/dx = s * (1 - s) with s = out.data",
    ),
}
# name -> (build with a number on the left, float value, d/db, hint)
REVERSED = {
    "5 + b": (lambda b: 5 + b, 5 + B, 1.0, "__radd__ is called for number + Value"),
    "5 - b": (lambda b: 5 - b, 5 - B, -1.0, "__rsub__ computes other - self, not self - other"),
    "5 * b": (lambda b: 5 * b, 5 * B, 5.0, "__rmul__ is called for number * Value"),
    "5 / b": (lambda b: 5 / b, 5 / B, -5 / B**2, "__rtruediv__ computes other / self, not self / other"),
}
# the method each check calls, as a failure names it
METHODS = {
    "a + b": "__add__",
    "a * b": "__mul__",
    "a - b": "__sub__",
    "a / b": "__truediv__",
    "a ** 3": "__pow__",
    "a ** -0.5": "__pow__",
    "-a": "__neg__",
    "a.exp()": "exp",
    "a.log()": "log",
    "a.tanh()": "tanh",
    "a.relu()": "relu",
    "a.sigmoid()": "sigmoid",
    "5 + b": "__radd__",
    "5 - b": "__rsub__",
    "5 * b": "__rmul__",
    "5 / b": "__rtruediv__",
    "a * a": "__mul__",
    "Value + str": "__add__",
    "Value ** Value": "__pow__",
    "log of 0": "log",
    "log of -1": "log",
    "(-8) ** 0.5": "__pow__",
    "1 / 0": "__truediv__",
    "0 ** -1": "__pow__",
}


def method(name: str) -> str:
    """Where the student's method for the check `name` is: "`Value.__mul__` (minigrad/engine.py:72)"."""
    return located(getattr(engine.Value, METHODS[name], None))


def expect_gradient(got, want, out, name, **check) -> None:
    """evidence.expect_local for the check `name`'s method of the student's `Value`."""
    evidence.expect_local(got, want, out, getattr(engine.Value, METHODS[name], None), **check)


@pytest.mark.parametrize("right", ["Value", "plain number"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_forward(name, right):
    build, on_floats, _, _, _ = BINARY[name]
    b = engine.Value(B) if right == "Value" else B
    hint = "the new Value's data is the plain result; wrap a plain number in a Value first"
    what = f"{name}: forward value with b a {right}"
    got = build(engine.Value(A), b).data
    expect_close(got, on_floats(A, B), what=what, inputs={"a": A, "b": B}, hint=hint, where=method(name))


@pytest.mark.parametrize("name", BINARY)
def test_binary_local_backward_scales_by_upstream_grad(name):
    build, _, da, db, hint = BINARY[name]
    a, b = engine.Value(A), engine.Value(B)
    out = build(a, b)
    local_backward(out, UPSTREAM)
    inputs = {"a": A, "b": B, "out.grad": UPSTREAM}
    expect_gradient(a.grad, UPSTREAM * da(A, B), out, name, what=f"{name}: gradient of a", inputs=inputs, hint=hint)
    expect_gradient(b.grad, UPSTREAM * db(A, B), out, name, what=f"{name}: gradient of b", inputs=inputs, hint=hint)


@pytest.mark.parametrize("name", UNARY)
def test_unary_forward(name):
    build, on_float, _, x, _ = UNARY[name]
    expect_close(
        build(engine.Value(x)).data,
        on_float(x),
        what=f"{name}: forward value",
        inputs={"a": x},
        hint="compute the value with the math module",
        where=method(name),
    )


@pytest.mark.parametrize("name", UNARY)
def test_unary_local_backward_scales_by_upstream_grad(name):
    build, _, derivative, x, hint = UNARY[name]
    a = engine.Value(x)
    out = build(a)
    local_backward(out, UPSTREAM)
    expect_gradient(
        a.grad,
        UPSTREAM * derivative(x),
        out,
        name,
        what=f"{name}: gradient of a",
        inputs={"a": x, "out.grad": UPSTREAM},
        hint=f"{hint}; do not forget the factor out.grad",
    )


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_local_derivative_matches_central_differences(name):
    """Five seeded random points per operator, each compared with (f(x+h) - f(x-h)) / 2h."""
    rng = random.Random(f"value/{name}")
    for _ in range(5):
        if name in UNARY:
            build, on_floats = UNARY[name][:2]
            xs = [rng.uniform(0.2, 2.0)]
        else:
            build, on_floats = BINARY[name][:2]
            xs = [rng.uniform(-2.0, 2.0), rng.choice([-1, 1]) * rng.uniform(0.5, 2.0)]
        values = [engine.Value(x) for x in xs]
        out = build(*values)
        local_backward(out, UPSTREAM)
        slopes = central_difference(on_floats, xs)
        for label, v, slope in zip("ab", values, slopes):
            expect_gradient(
                v.grad,
                UPSTREAM * slope,
                out,
                name,
                rtol=1e-4,
                atol=1e-6,
                what=f"{name}: gradient of {label} against central differences",
                inputs={**dict(zip("ab", xs)), "out.grad": UPSTREAM},
                hint="derive the local derivative again on paper, then compare",
            )


@pytest.mark.parametrize("name", REVERSED)
def test_number_on_the_left(name):
    build, want, dgrad, hint = REVERSED[name]
    b = engine.Value(B)
    out = build(b)
    expect_close(out.data, want, what=f"{name}: forward value", inputs={"b": B}, hint=hint, where=method(name))
    local_backward(out, UPSTREAM)
    inputs = {"b": B, "out.grad": UPSTREAM}
    expect_gradient(b.grad, UPSTREAM * dgrad, out, name, what=f"{name}: gradient of b", inputs=inputs, hint=hint)


@pytest.mark.parametrize("name", BINARY)
def test_backward_adds_to_existing_grad_instead_of_overwriting(name):
    build, _, da, db, _ = BINARY[name]
    a, b = engine.Value(A), engine.Value(B)
    a.grad, b.grad = 1.0, 1.0
    out = build(a, b)
    local_backward(out, UPSTREAM)
    inputs = {"a": A, "b": B, "out.grad": UPSTREAM}
    hint = "use += in _backward: a node can get gradient from several places"
    expect_gradient(
        a.grad,
        1.0 + UPSTREAM * da(A, B),
        out,
        name,
        what=f"{name}: gradient of a when a.grad was already 1.0",
        inputs=inputs,
        hint=hint,
    )
    expect_gradient(
        b.grad,
        1.0 + UPSTREAM * db(A, B),
        out,
        name,
        what=f"{name}: gradient of b when b.grad was already 1.0",
        inputs=inputs,
        hint=hint,
    )


def test_same_value_on_both_sides():
    a = engine.Value(3.0)
    out = a * a
    local_backward(out, UPSTREAM)
    expect_gradient(
        a.grad,
        UPSTREAM * 2 * 3.0,
        out,
        "a * a",
        what="a * a: gradient of a",
        inputs={"a": 3.0, "out.grad": UPSTREAM},
        hint="both sides are the same node: the second += must add to the first, not replace it",
    )


@pytest.mark.parametrize("name", sorted(BINARY) + sorted(UNARY))
def test_result_remembers_its_inputs(name):
    values = [engine.Value(A), engine.Value(B)] if name in BINARY else [engine.Value(UNARY[name][3])]
    out = (BINARY[name][0] if name in BINARY else UNARY[name][0])(*values)
    graph = evidence.nodes(out)  # built from others (`a - b` is `a + (-b)`), out need not hold its inputs directly
    for label, leaf in zip("ab", values):
        if not any(node is leaf for node in graph):
            fail(
                f"{name}: is {label} among the inputs the result remembers?",
                dict(zip("ab", (v.data for v in values))),
                f"{label} reachable from out through out._prev",
                f"out._prev = {getattr(out, '_prev', 'missing')!r}",
                "pass the inputs as _children when you make the output Value, e.g. Value(x, (self, other), '+'); "
                "without them backward() never reaches them",
                method(name),
            )


@pytest.mark.parametrize("x", [-1000.0, 1000.0])
def test_sigmoid_of_a_large_input_does_not_overflow(x):
    a = engine.Value(x)
    try:
        out = a.sigmoid()
    except OverflowError as exc:
        fail(
            f"sigmoid({x:g})",
            {"a": x},
            0.0 if x < 0 else 1.0,
            f"OverflowError: {exc}",
            "math.exp(-x) overflows for x far below 0: there, compute e**x / (1 + e**x) instead",
            method("a.sigmoid()"),
        )
    expect_close(
        out.data,
        0.0 if x < 0 else 1.0,
        what=f"sigmoid({x:g})",
        inputs={"a": x},
        hint="sigmoid saturates: about 0 far below 0, about 1 far above",
        where=method("a.sigmoid()"),
    )
    local_backward(out, UPSTREAM)
    expect_gradient(
        a.grad,
        0.0,
        out,
        "a.sigmoid()",
        what=f"sigmoid({x:g}): gradient of a",
        inputs={"a": x, "out.grad": UPSTREAM},
        hint="s * (1 - s) is about 0 where sigmoid saturates",
    )


def test_relu_derivative_at_zero_is_zero():
    a = engine.Value(0.0)
    out = a.relu()
    local_backward(out, UPSTREAM)
    expect_gradient(
        a.grad,
        0.0,
        out,
        "a.relu()",
        what="relu at 0: gradient of a",
        inputs={"a": 0.0, "out.grad": UPSTREAM},
        hint="use x > 0, not x >= 0: the derivative of relu at 0 is taken as 0",
    )


BAD_INPUTS = {
    "Value + str": (
        TypeError,
        lambda: engine.Value(1.0) + "2",
        "return NotImplemented for operands that are not numbers",
    ),
    "Value ** Value": (
        TypeError,
        lambda: engine.Value(2.0) ** engine.Value(3.0),
        "** takes an int or float exponent only",
    ),
    "log of 0": (ValueError, lambda: engine.Value(0.0).log(), "log is defined for data > 0 only: raise ValueError"),
    "log of -1": (ValueError, lambda: engine.Value(-1.0).log(), "log is defined for data > 0 only: raise ValueError"),
    "(-8) ** 0.5": (ValueError, lambda: engine.Value(-8.0) ** 0.5, "a negative base has no real fractional power"),
    "1 / 0": (ZeroDivisionError, lambda: engine.Value(1.0) / 0, "division by zero raises ZeroDivisionError"),
    "0 ** -1": (ZeroDivisionError, lambda: engine.Value(0.0) ** -1, "zero to a negative power is a division by zero"),
}


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_bad_input_raises_a_clear_error(name):
    error, action, hint = BAD_INPUTS[name]
    expect_raises(error, action, what=f"{name} must raise {error.__name__}", inputs={}, hint=hint, where=method(name))
