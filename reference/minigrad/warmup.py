"""Gradient descent on two numbers: the training loop of part 3 with nothing else around it.

An optional extension (bonus points only), done before the networks of lesson 3: with just
two parameters you can follow every step by hand, and see that a network's training is the
same loop with more parameters.
"""

from __future__ import annotations

from collections.abc import Callable

from .engine import Value


def descend(
    f: Callable[[Value, Value], Value], start: tuple[float, float], lr: float, steps: int
) -> list[tuple[float, float]]:
    """Walk downhill on `f` from `start`: `steps` steps of gradient descent with rate `lr`.

    `f` takes two `Value`s and returns a `Value`. Each step builds the graph of `f` at the
    current point, runs `backward()`, and moves both numbers against their gradient:
    x <- x - lr * df/dx, and the same for y. Returns every point visited as a pair of
    floats, `start` first, so the list has `steps + 1` points: the whole path, not only
    where it ends, because the path shows whether `lr` is too small (a crawl), right (a
    steady slide) or too large (a zigzag that grows).

    Example: the bowl f(x, y) = (x - 3)**2 + 2*(y + 1)**2 is lowest at (3, -1).
        >>> path = descend(lambda x, y: (x - 3) ** 2 + 2 * (y + 1) ** 2, (0.0, 0.0), lr=0.1, steps=50)
        >>> [round(v, 3) for v in path[1]]  # the gradient at (0, 0) is (-6, 4)
        [0.6, -0.4]
        >>> [round(v, 3) for v in path[-1]]
        [3.0, -1.0]
    """
    ### BEGIN SOLUTION
    x, y = float(start[0]), float(start[1])
    path = [(x, y)]
    for _ in range(steps):
        vx, vy = Value(x), Value(y)  # new leaves each step, so no gradient is left over
        f(vx, vy).backward()
        x, y = x - lr * vx.grad, y - lr * vy.grad
        path.append((x, y))
    return path
    ### END SOLUTION
