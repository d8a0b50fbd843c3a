"""Optional extensions (bonus points only): sin, cos and sqrt; gradient descent on two numbers;
counting a graph's nodes. Leaving them undone costs nothing.

Like part 1's checks, the operator checks run your `_backward` closures with the checks' own
small walker and an upstream gradient of 2.5, and compare them with central differences.
`descend` needs part 2's `backward()`; `count_nodes` needs only `_prev`.
"""

import math
import random

import pytest

import evidence
from feedback import expect_close, expect_raises, fail
from student import located, module
from trusted import central_difference, local_backward

engine = module("engine")
memory = module("memory")
warmup = module("warmup")

pytestmark = pytest.mark.extensions

UPSTREAM = 2.5
# name -> (build from a Value, the same on a float, hint)
OPERATORS = {
    "a.sin()": (lambda a: a.sin(), math.sin, "d(sin x)/dx = cos x, times out.grad"),
    "a.cos()": (lambda a: a.cos(), math.cos, "d(cos x)/dx = -sin x: mind the minus sign"),
    "a.sqrt()": (lambda a: a.sqrt(), math.sqrt, "d(sqrt x)/dx = 1 / (2 * sqrt x): reuse out.data"),
}


def points(name: str) -> list[float]:
    """Five seeded inputs, positive so that sqrt is defined at each."""
    rng = random.Random(f"extensions/{name}")
    return [rng.uniform(0.2, 3.0) for _ in range(5)]


@pytest.mark.parametrize("name", OPERATORS)
def test_operator_forward_and_gradient(name):
    """Five seeded points; the gradient is compared with (f(x+h) - f(x-h)) / 2h on floats."""
    build, on_float, hint = OPERATORS[name]
    method = getattr(engine.Value, name[2:-2], None)  # "a.sin()": Value.sin
    for x in points(name):
        a = engine.Value(x)
        out = build(a)
        inputs = {"a": x, "out.grad": UPSTREAM}
        what = f"{name}: forward value"
        expect_close(out.data, on_float(x), what=what, inputs=inputs, hint="use the math module", where=located(method))
        local_backward(out, UPSTREAM)
        slope = central_difference(on_float, [x])[0]
        evidence.expect_local(
            a.grad,
            UPSTREAM * slope,
            out,
            method,
            rtol=1e-4,
            atol=1e-6,
            what=f"{name}: gradient of a against central differences",
            inputs=inputs,
            hint=f"{hint}; do not forget the factor out.grad",
        )


def test_sqrt_of_a_negative_number_raises():
    expect_raises(
        ValueError,
        lambda: engine.Value(-4.0).sqrt(),
        what="sqrt of -4.0 must raise ValueError",
        inputs={"a": -4.0},
        hint="sqrt is defined for data >= 0 only: check before computing, as log does",
        where=located(getattr(engine.Value, "sqrt", None)),
    )


def bowl(x, y):
    """The example of lesson 3's warm-up, lowest at (3, -1); works on floats and Values."""
    return (x - 3) ** 2 + 2 * (y + 1) ** 2


def test_descend_follows_the_gradient_down_a_bowl():
    start, lr, steps = (0.0, 0.5), 0.1, 10
    want = [start]
    for _ in range(steps):  # the same walk on floats, with the slopes by central differences
        x, y = want[-1]
        dx, dy = central_difference(bowl, [x, y])
        want.append((x - lr * dx, y - lr * dy))
    got = warmup.descend(bowl, start, lr=lr, steps=steps)
    inputs = {"f": "(x - 3)**2 + 2*(y + 1)**2", "start": start, "lr": lr, "steps": steps}
    shape_hint = "return every point visited as an (x, y) pair, the start first: steps + 1 points"
    where = located(warmup.descend)
    if not isinstance(got, list) or len(got) != steps + 1:
        fail("descend: the path", inputs, f"a list of {steps + 1} (x, y) pairs", got, shape_hint, where)
    for i, (point, right) in enumerate(zip(got, want)):
        if not isinstance(point, (tuple, list)) or len(point) != 2:
            fail(f"descend: point {i} of the path", inputs, right, point, shape_hint, where)
        for name, coordinate, value in zip("xy", point, right):
            expect_close(
                coordinate,
                value,
                rtol=1e-6,
                atol=1e-8,
                what=f"descend: {name} of point {i} of the path",
                inputs=inputs,
                hint="each step: new Values at the current point, f(...).backward(), then x -= lr * x.grad "
                "(and the same for y); a gradient left over from the last step pushes too far",
                where=where,
            )


def test_descend_reaches_the_bottom_of_the_bowl():
    got = warmup.descend(bowl, (0.0, 0.0), lr=0.1, steps=100)
    inputs = {"f": "(x - 3)**2 + 2*(y + 1)**2", "start": (0.0, 0.0), "lr": 0.1, "steps": 100}
    hint, where = "step against the gradient: x -= lr * x.grad, not +=", located(warmup.descend)
    expect_close(got[-1][0], 3.0, atol=1e-6, what="descend: x of the last point", inputs=inputs, hint=hint, where=where)
    expect_close(
        got[-1][1], -1.0, atol=1e-6, what="descend: y of the last point", inputs=inputs, hint=hint, where=where
    )


def test_count_nodes_counts_each_node_once():
    a, b = engine.Value(2.0), engine.Value(3.0)
    d = a * b + a
    e = d * d
    _ = d + b  # made from the graph, but it does not feed e: not under e
    expect_close(
        memory.count_nodes(e),
        5,
        what="count_nodes(e) for d = a * b + a, e = d * d",
        inputs={"a": 2.0, "b": 3.0},
        hint="a, b, a * b, d and e: keep a set of the nodes already seen, so a reused node counts once",
        where=located(memory.count_nodes),
    )


def test_count_nodes_on_a_deep_chain():
    depth = 5_000
    x = engine.Value(1.5)
    y = x
    for _ in range(depth):
        y = y**1  # one new node per step
    try:
        got = memory.count_nodes(y)
    except RecursionError:
        fail(
            f"count_nodes on a chain {depth} nodes deep",
            {"depth": depth},
            depth + 1,
            "RecursionError",
            "Python stops at about 1,000 nested calls: walk with a loop and an explicit stack",
            located(memory.count_nodes),
        )
    expect_close(
        got,
        depth + 1,
        what=f"count_nodes(y) for y = x ** 1, then y = y ** 1 again, {depth} powers deep",
        inputs={"depth": depth},
        hint="count x and every power once",
        where=located(memory.count_nodes),
    )
