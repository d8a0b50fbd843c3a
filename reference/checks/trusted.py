"""Trusted helpers that never call the student's part 2 code, so part 1 stands alone."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence


def local_backward(out, upstream: float) -> None:
    """Run the `_backward` closures of the graph under `out`, output first, with our own order.

    For a single operator this is one closure; for operators built from others (`a - b` is
    `a + (-b)`) it is the few closures they made.
    """
    order, seen = [], set()

    def visit(node) -> None:
        if node not in seen:
            seen.add(node)
            for parent in node._prev:
                visit(parent)
            order.append(node)

    visit(out)
    out.grad = upstream
    for node in reversed(order):
        node._backward()


def function_backward(out, upstream) -> None:
    """Part 4's `local_backward`: run the `Function.backward`s of the graph under the Tensor
    `out`, from `upstream`, with the checks' own order and sums, and add each leaf's gradient
    to its `grad`. An operation's checks then need its `Function` and `unbroadcast` only, not
    `Tensor.backward`, whose own checks come after: a student with `Add`, `Mul` and
    `unbroadcast` written sees those pass before writing `Tensor.backward`. A plain recursive
    walk (the checks' graphs are a few nodes deep): the release ships this file, and the
    iterative walk a deep graph needs is the student's to write."""
    order, seen = [], set()

    def visit(node) -> None:
        if node.requires_grad and id(node) not in seen:
            seen.add(id(node))
            for parent in node._creator.inputs if node._creator is not None else ():
                visit(parent)
            order.append(node)

    visit(out)
    received = {id(out): upstream}
    for node in reversed(order):
        grad = received.pop(id(node), None)
        if grad is None:
            continue
        if node._creator is None:
            node.grad = grad if node.grad is None else node.grad + grad
        else:
            for parent, share in zip(node._creator.inputs, node._creator.backward(grad)):
                if share is not None and parent.requires_grad:
                    received[id(parent)] = received.get(id(parent), 0) + share


def central_difference(f: Callable[..., float], xs: Sequence[float], h: float = 1e-6) -> list[float]:
    """The slope of the float function `f` in each input, by central differences."""
    slopes = []
    for i in range(len(xs)):
        up = [x + h if j == i else x for j, x in enumerate(xs)]
        down = [x - h if j == i else x for j, x in enumerate(xs)]
        slopes.append((f(*up) - f(*down)) / (2 * h))
    return slopes


# Part 2's random graphs use the two operators no backward() can do without, as the hidden
# suite's do: a mistake in tanh, exp, `-`, `/` or `**` then costs part 1's checks, not part 2's.
# A square is a node times itself, `s * s`, which sends s two shares along one edge.
BINARY = {"+": lambda a, b: a + b, "*": lambda a, b: a * b}


def random_program(rng: random.Random, n_inputs: int, n_ops: int) -> list[tuple[str, int, int]]:
    """Steps (op, i, j) over a growing pool of nodes: each takes the latest node and any node
    so far (itself included), so every node made feeds the result and earlier ones are reused."""
    program = []
    for step in range(n_ops):
        size = n_inputs + step
        program.append((rng.choice(sorted(BINARY)), size - 1, rng.randrange(size)))
    return program


def run_program(program, inputs: list) -> object:
    """Evaluate on floats or on Values alike; the last node is the result."""
    pool = list(inputs)
    for op, i, j in program:
        pool.append(BINARY[op](pool[i], pool[j]))
    return pool[-1]


def show_program(program, names: Sequence[str]) -> str:
    """The program as one readable expression, e.g. `((a * b) + a)`."""
    pool = list(names)
    for op, i, j in program:
        pool.append(f"({pool[i]} {op} {pool[j]})")
    return pool[-1]


def tanh_node(value):
    """tanh(value) as part 1 defines it, made here from the student's `Value` class: part 2's
    neuron then tests backward() alone, and a wrong `Value.tanh` costs part 1's check only."""
    out = type(value)(math.tanh(value.data), (value,), "tanh")

    def _backward() -> None:
        value.grad += (1 - out.data**2) * out.grad

    out._backward = _backward
    return out


FLOAT_ACTIVATIONS = {"tanh": math.tanh, "relu": lambda x: max(0.0, x), "linear": lambda x: x}


def mlp_on_floats(sizes: Sequence[int], weights: Sequence[float], x: Sequence[float], activation: str) -> list[float]:
    """The MLP forward pass on plain floats, reading weights in the fixed parameter order:
    layer by layer, neuron by neuron, the weights in input order, then the bias."""
    flat = iter(weights)
    for nin, nout in zip(sizes, sizes[1:]):
        outputs = []
        for _ in range(nout):
            w = [next(flat) for _ in range(nin)]
            outputs.append(FLOAT_ACTIVATIONS[activation](sum(wi * xi for wi, xi in zip(w, x)) + next(flat)))
        x = outputs
    return x
