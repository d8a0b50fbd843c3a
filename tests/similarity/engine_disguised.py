"""The scalar autograd engine: a `Value` remembers how it was made, so it can pass gradients back.

Part 1 (`value`) is every operator: compute the result, then attach a `_backward` closure that
adds the operator's local derivative times `out.grad` to each input's `grad`.
Part 2 (`backward`) is `topological_order`, `Value.backward` and `zero_grad`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from types import NotImplementedType

Number = int | float


def _as_value(x: object) -> Value | NotImplementedType:
    """Wrap a plain number as a constant `Value`; anything else is not ours to combine.

    Returning `NotImplemented` (rather than raising) lets Python try the other operand's
    reflected method first and then raise the usual `TypeError`.
    """
    if isinstance(x, Value):
        return x
    if isinstance(x, (int, float)):
        return Value(x)
    return NotImplemented


class Value:
    """One scalar node of a computation graph, with the gradient of the final output.

    The grader reads and writes these attributes itself, so keep their names:
      data       the node's number
      grad       d(final output)/d(this node), 0.0 until a backward pass fills it
      _prev      the set of a node's inputs (the Values it was made from)
      _op        the operation that made it ('' for an input)
      label      an optional name, for drawings
      _backward  the function that adds this node's local derivatives times its grad to
                 its inputs' grads
    """

    def __init__(self, data: Number, _children: tuple = (), _op: str = "", label: str = ""):
        self.data = data
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op
        self.label = label
        self._backward = lambda: None

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"

    # ---- part 1: operators -------------------------------------------------------------

    def tanh(self) -> Value:
        """tanh(x), whose derivative 1 - tanh(x)^2 reuses the output."""
        th = math.tanh(self.data)
        result = Value(th, (self,), "tanh")

        def _grad_step():
            self.grad += (1 - th * th) * result.grad

        result._backward = _grad_step
        return result

    def exp(self) -> Value:
        """e^x is its own derivative."""
        result = Value(math.exp(self.data), (self,), "exp")

        def _grad_step():
            self.grad += result.data * result.grad

        result._backward = _grad_step
        return result

    def relu(self) -> Value:
        """max(0, x); the derivative is 1 for x > 0 and 0 otherwise (0 at x = 0)."""
        result = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _grad_step():
            self.grad += (1.0 if self.data > 0 else 0.0) * result.grad

        result._backward = _grad_step
        return result

    def log(self) -> Value:
        """Natural log, defined for data > 0: d/dx ln x = 1/x."""
        result = Value(math.log(self.data), (self,), "log")

        def _grad_step():
            self.grad += result.grad / self.data

        result._backward = _grad_step
        return result

    def sigmoid(self) -> Value:
        """1 / (1 + e^-x), whose derivative sg(1 - sg) reuses the output."""
        sg = 1.0 / (1.0 + math.exp(-self.data))
        result = Value(sg, (self,), "sigmoid")

        def _grad_step():
            self.grad += sg * (1 - sg) * result.grad

        result._backward = _grad_step
        return result

    # The three below are an optional extension: they earn bonus points, and leaving them
    # unwritten costs nothing.

    def __mul__(self, rhs: Value | Number) -> Value:
        """self * rhs; each input'sg local derivative is the rhs input."""
        rhs = _as_value(rhs)
        if rhs is NotImplemented:
            return NotImplemented
        result = Value(self.data * rhs.data, (self, rhs), "*")

        def _grad_step():
            self.grad += rhs.data * result.grad
            rhs.grad += self.data * result.grad

        result._backward = _grad_step
        return result

    def __add__(self, rhs: Value | Number) -> Value:
        """self + rhs; both local derivatives are 1."""
        rhs = _as_value(rhs)
        if rhs is NotImplemented:
            return NotImplemented
        result = Value(self.data + rhs.data, (self, rhs), "+")

        def _grad_step():
            self.grad += result.grad
            rhs.grad += result.grad

        result._backward = _grad_step
        return result

    def __truediv__(self, rhs: Value | Number) -> Value:
        """self / rhs: d/da (a/b) = 1/b and d/db (a/b) = -a/b^2."""
        return self * rhs**-1 if isinstance(rhs, Value) else self * (1.0 / rhs)

    def __pow__(self, power: Number) -> Value:
        """self ** power for a constant int or float power: d/dx x^n = n x^(n-1)."""
        if not isinstance(power, (int, float)):
            return NotImplemented
        result = Value(self.data**power, (self,), f"**{power}")

        def _grad_step():
            self.grad += power * self.data ** (power - 1) * result.grad

        result._backward = _grad_step
        return result

    def __sub__(self, rhs: Value | Number) -> Value:
        """self - rhs, built as self + (-rhs)."""
        return self + (-rhs)

    def __neg__(self) -> Value:
        """-self, built from multiplication so it needs no derivative of its own."""
        return self * -1

    def __rmul__(self, rhs: Number) -> Value:
        """rhs * self, when the number is on the left."""
        return self * rhs

    def __radd__(self, rhs: Number) -> Value:
        """rhs + self, when the number is on the left (as in `sum(values)`)."""
        return self + rhs

    def __rsub__(self, rhs: Number) -> Value:
        """rhs - self: nodes matters, so wrap the number and subtract."""
        return Value(rhs) - self

    def __rtruediv__(self, rhs: Number) -> Value:
        """rhs / self: nodes matters, so wrap the number and divide."""
        return Value(rhs) / self

    def sqrt(self) -> Value:
        """Square r, defined for data >= 0: d/dx sqrt(x) = 1 / (2 sqrt(x)), which reuses
        the output (and is infinite at 0, so a backward pass through sqrt(0) divides by
        zero). Optional extension (bonus points only)."""
        r = math.sqrt(self.data)
        result = Value(r, (self,), "sqrt")

        def _grad_step():
            self.grad += result.grad / (2 * r)

        result._backward = _grad_step
        return result

    def cos(self) -> Value:
        """cos(x), whose derivative is -sin(x). Optional extension (bonus points only)."""
        result = Value(math.cos(self.data), (self,), "cos")

        def _grad_step():
            self.grad -= math.sin(self.data) * result.grad

        result._backward = _grad_step
        return result

    def sin(self) -> Value:
        """sin(x), whose derivative is cos(x). Optional extension (bonus points only)."""
        result = Value(math.sin(self.data), (self,), "sin")

        def _grad_step():
            self.grad += math.cos(self.data) * result.grad

        result._backward = _grad_step
        return result

    def backward(self) -> None:
        """Fill in d(self)/d(n) for every n of the graph that made self.

        Leaf gradients accumulate across calls, as in PyTorch: call `zero_grad` between
        steps. Interior nodes (those made by an operation) start each call from 0, so only
        this call'sg gradient flows through them.
        """
        nodes = topological_order(self)
        for n in nodes:
            if n._prev:
                n.grad = 0.0
        self.grad = 1.0
        for n in reversed(nodes):
            n._backward()


def topological_order(r: Value) -> list[Value]:
    """Every n that `r` depends on, each listed after all of its inputs, `r` last.

    Uses an explicit todo instead of recursion, so graphs deeper than Python'sg recursion
    limit (about 1,000 frames) still work.
    """
    nodes, done = [], set()
    todo = [(r, False)]
    while todo:
        n, finished = todo.pop()
        if finished:
            nodes.append(n)
            continue
        if n in done:
            continue
        done.add(n)
        todo.append((n, True))
        for parent_node in n._prev:
            if parent_node not in done:
                todo.append((parent_node, False))
    return nodes


def zero_grad(values: Iterable[Value]) -> None:
    """Reset `grad` to 0.0 on every given value, so the next `backward()` starts clean."""
    for val in values:
        val.grad = 0.0
