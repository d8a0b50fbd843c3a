"""Numerical gradients: the independent witness that backpropagation got the calculus right.

`numerical_grad` is a part 2 hole. `gradcheck` is given: it compares `backward()` with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .engine import Value

Function = Callable[..., Value]


def numerical_grad(f: Function, xs: Sequence[float], h: float = 1e-6) -> list[float]:
    """Central differences: df/dx_i ~ (f(.., x_i + h, ..) - f(.., x_i - h, ..)) / 2h.

    `f` takes one `Value` per input and returns a `Value`; only its `.data` is read, so this
    never touches `backward()` and can be trusted to check it. The central form is accurate
    to O(h^2), against O(h) for the one-sided difference.
    """
    ### BEGIN SOLUTION
    grads = []
    for i in range(len(xs)):
        up = [Value(x + h if j == i else x) for j, x in enumerate(xs)]
        down = [Value(x - h if j == i else x) for j, x in enumerate(xs)]
        grads.append((f(*up).data - f(*down).data) / (2 * h))
    return grads
    ### END SOLUTION


def gradcheck(f: Function, xs: Sequence[float], h: float = 1e-6, rtol: float = 1e-4, atol: float = 1e-6) -> list[float]:
    """Backpropagate through `f` at `xs` and check every gradient against `numerical_grad`.

    Returns the backpropagated gradients; raises `AssertionError` naming the first input
    whose two gradients disagree.
    """
    inputs = [Value(x, label=f"x{i}") for i, x in enumerate(xs)]
    f(*inputs).backward()
    numeric = numerical_grad(f, xs, h)
    for v, want in zip(inputs, numeric):
        if abs(v.grad - want) > atol + rtol * abs(want):
            raise AssertionError(
                f"gradient of {v.label} = {v.data}: backward() gave {v.grad}, central differences give {want}"
            )
    return [v.grad for v in inputs]
