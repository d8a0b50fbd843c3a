"""Part 2: whole-graph backpropagation, gradient accumulation, zeroing, numerical gradients.

Part 2 stands alone, as in the hidden suite: every graph here is built from the student's `+`
and `*` only (a square is `s * s`), the two operators no backward() can do without. A mistake
in tanh, exp, `-`, `/` or `**` then fails part 1's checks and none of these. The lesson's
neuron keeps its tanh, made by the checks themselves (`trusted.tanh_node`).
"""

import random

import pytest

import evidence
from feedback import close, expect_close, fail
from student import located, module
from trusted import central_difference, random_program, run_program, show_program, tanh_node

engine = module("engine")
gradcheck = module("gradcheck")

pytestmark = pytest.mark.backward

ORDER_HINT = (
    "if part 1's checks of + or * fail too, fix those first; "
    "else backward() must visit nodes in reverse topological order (output first)"
)


def expect_backward(got, want, root, *, what, inputs, hint, rtol=1e-6, atol=1e-9) -> None:
    """expect_close for a gradient `root.backward()` left: a wrong one names the student's
    `backward`, and the hint says what the graph shows went wrong (the root not seeded, a
    `_backward` never attached, the `_backward`s run inputs first), else the check's own."""
    if not close(got, want, rtol, atol):
        fail(what, inputs, want, got, evidence.after_backward(root) or hint, located(engine.Value.backward))


def lesson_example():
    """f = (a*b + c)**2 at a = 2, b = -3, c = 10: df/da = -24, df/db = 16, df/dc = 8.

    The square is s * s, so a wrong `**` costs part 1's check of it, not these."""
    a, b, c = engine.Value(2.0, label="a"), engine.Value(-3.0, label="b"), engine.Value(10.0, label="c")
    s = a * b + c
    return s * s, (a, b, c)


def test_lesson_worked_example():
    f, leaves = lesson_example()
    f.backward()
    for leaf, want in zip(leaves, (-24.0, 16.0, 8.0)):
        expect_backward(
            leaf.grad,
            want,
            f,
            what=f"f = s * s, s = a*b + c: df/d{leaf.label} after f.backward()",
            inputs={"a": 2.0, "b": -3.0, "c": 10.0},
            hint=ORDER_HINT,
        )


def test_node_used_twice_gets_both_contributions():
    x, y = engine.Value(2.0), engine.Value(3.0)
    z = x * y + x
    z.backward()
    inputs = {"x": 2.0, "y": 3.0}
    expect_backward(
        x.grad,
        4.0,
        z,
        what="z = x*y + x: dz/dx",
        inputs=inputs,
        hint="x reaches z along two paths; each adds its share, so dz/dx = y + 1",
    )
    expect_backward(y.grad, 2.0, z, what="z = x*y + x: dz/dy", inputs=inputs, hint=ORDER_HINT)


def test_lesson_neuron():
    x1, x2, w1, w2 = engine.Value(2.0), engine.Value(0.0), engine.Value(-3.0), engine.Value(1.0)
    b = engine.Value(6.8813735870195432)
    o = tanh_node(x1 * w1 + x2 * w2 + b)  # the checks' own tanh: this check tests backward() alone
    o.backward()
    inputs = {"x1": 2.0, "x2": 0.0, "w1": -3.0, "w2": 1.0, "b": 6.8813735870195432}
    for name, node, want in (("x1", x1, -1.5), ("w1", w1, 1.0), ("x2", x2, 0.5), ("w2", w2, 0.0), ("b", b, 0.5)):
        expect_backward(
            node.grad,
            want,
            o,
            rtol=1e-6,
            atol=1e-9,
            what=f"o = tanh(x1*w1 + x2*w2 + b): do/d{name}",
            inputs=inputs,
            hint="do/dn = 1 - o**2 = 0.5 here; each weight then gets 0.5 times its input",
        )


def test_topological_order_lists_inputs_before_outputs():
    a, b = engine.Value(1.0), engine.Value(2.0)
    c = a * b
    d = c + a
    e = d * d
    order = engine.topological_order(e)
    if sorted(map(id, order)) != sorted(map(id, [a, b, c, d, e])):
        fail(
            "topological_order(e) for e = d * d, d = a*b + a",
            {"a": 1.0, "b": 2.0},
            "the 5 nodes a, b, c, d, e once each",
            f"{len(order)} nodes",
            "visit every node reachable through _prev exactly once",
            located(engine.topological_order),
        )
    position = {id(node): i for i, node in enumerate(order)}
    for node in order:
        for parent in node._prev:
            if position[id(parent)] > position[id(node)]:
                fail(
                    "topological_order(e): an input listed after the node it feeds",
                    {"a": 1.0, "b": 2.0},
                    "every node after all of its inputs, e last",
                    [n.data for n in order],
                    "append a node only after all of its inputs have been appended",
                    located(engine.topological_order),
                )
    if order[-1] is not e:
        fail(
            "topological_order(e): last node",
            {},
            "e itself",
            order[-1],
            "the root comes last",
            located(engine.topological_order),
        )


def test_deep_chain_does_not_hit_the_recursion_limit():
    depth = 20_000
    x = engine.Value(1.0)
    y = x
    for _ in range(depth):
        y = y + 1
    try:
        y.backward()
    except RecursionError:
        fail(
            f"backward() on a chain {depth} nodes deep",
            {"depth": depth},
            "x.grad = 1.0",
            "RecursionError",
            "Python stops at about 1,000 nested calls: build the order with a loop and an explicit stack",
            located(engine.topological_order),
        )
    expect_backward(x.grad, 1.0, y, what=f"chain of {depth} additions: dy/dx", inputs={"depth": depth}, hint=ORDER_HINT)


def test_calling_backward_twice_accumulates():
    f, (a, b, c) = lesson_example()
    f.backward()
    f.backward()
    expect_backward(
        a.grad,
        -48.0,
        f,
        what="f.backward() twice on f = s * s, s = a*b + c: a.grad",
        inputs={"a": 2.0, "b": -3.0, "c": 10.0},
        hint="leaf gradients add up across calls, as in PyTorch; reset the interior nodes' grad to 0 "
        "before each pass, then set the root's grad to 1.0",
    )


def test_zero_grad_resets_every_given_value():
    f, leaves = lesson_example()
    f.backward()
    engine.zero_grad(leaves)
    for leaf in leaves:
        expect_close(
            leaf.grad,
            0.0,
            what=f"zero_grad([a, b, c]): {leaf.label}.grad",
            inputs={},
            hint="set grad to 0.0 on every value you are given",
            where=located(engine.zero_grad),
        )


@pytest.mark.parametrize("seed", range(5))
def test_random_graph_with_reused_nodes_matches_central_differences(seed):
    rng = random.Random(f"backward/{seed}")
    program = random_program(rng, n_inputs=3, n_ops=8)
    xs = [rng.uniform(-1.5, 1.5) for _ in range(3)]
    leaves = [engine.Value(x) for x in xs]
    root = run_program(program, leaves)
    root.backward()
    slopes = central_difference(lambda *v: run_program(program, [float(t) for t in v]), xs)
    names = ["a", "b", "c"]
    for name, leaf, slope in zip(names, leaves, slopes):
        expect_backward(
            leaf.grad,
            slope,
            root,
            rtol=1e-4,
            atol=1e-6,
            what=f"{show_program(program, names)}: gradient of {name}",
            inputs=dict(zip(names, xs)),
            hint=ORDER_HINT + ", and add (+=) every path's share",
        )


def test_numerical_grad_uses_central_differences():
    def f(a, b):
        return a * b * (a + b)

    xs = [0.7, -1.3]
    got = gradcheck.numerical_grad(f, xs)
    want = [2 * 0.7 * -1.3 + (-1.3) ** 2, 0.7**2 + 2 * 0.7 * -1.3]  # 2ab + b**2, a**2 + 2ab
    if not isinstance(got, list) or len(got) != 2:
        fail(
            "numerical_grad(f, [0.7, -1.3]) for f = a*b*(a + b)",
            {"a": 0.7, "b": -1.3},
            "a list of 2 floats",
            got,
            "return one slope per input, in input order",
            located(gradcheck.numerical_grad),
        )
    for name, g, w in zip("ab", got, want):
        expect_close(
            g,
            w,
            rtol=1e-6,
            atol=1e-8,
            what=f"numerical_grad: slope in {name} of a*b*(a + b)",
            inputs={"a": 0.7, "b": -1.3},
            hint="use (f(x + h) - f(x - h)) / (2h), moving one input at a time",
            where=located(gradcheck.numerical_grad),
        )
