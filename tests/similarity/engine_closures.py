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

    def __add__(self, other: Value | Number) -> Value:
        """self + other; both local derivatives are 1."""
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Value | Number) -> Value:
        """self * other; each input's local derivative is the other input."""
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, exponent: Number) -> Value:
        """self ** exponent for a constant int or float exponent: d/dx x^n = n x^(n-1)."""
        if not isinstance(exponent, (int, float)):
            return NotImplemented
        out = Value(self.data**exponent, (self,), f"**{exponent}")

        def _backward():
            self.grad += exponent * self.data ** (exponent - 1) * out.grad

        out._backward = _backward
        return out

    def __neg__(self) -> Value:
        """-self, built from multiplication so it needs no derivative of its own."""
        return self * -1

    def __sub__(self, other: Value | Number) -> Value:
        """self - other, built as self + (-other)."""
        return self + (-other)

    def __truediv__(self, other: Value | Number) -> Value:
        """self / other: d/da (a/b) = 1/b and d/db (a/b) = -a/b^2."""
        return self * other**-1 if isinstance(other, Value) else self * (1.0 / other)

    def __radd__(self, other: Number) -> Value:
        """other + self, when the number is on the left (as in `sum(values)`)."""
        return self + other

    def __rmul__(self, other: Number) -> Value:
        """other * self, when the number is on the left."""
        return self * other

    def __rsub__(self, other: Number) -> Value:
        """other - self: order matters, so wrap the number and subtract."""
        return Value(other) - self

    def __rtruediv__(self, other: Number) -> Value:
        """other / self: order matters, so wrap the number and divide."""
        return Value(other) / self

    def exp(self) -> Value:
        """e^x is its own derivative."""
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def log(self) -> Value:
        """Natural log, defined for data > 0: d/dx ln x = 1/x."""
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def tanh(self) -> Value:
        """tanh(x), whose derivative 1 - tanh(x)^2 reuses the output."""
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    def relu(self) -> Value:
        """max(0, x); the derivative is 1 for x > 0 and 0 otherwise (0 at x = 0)."""
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out

    def sigmoid(self) -> Value:
        """1 / (1 + e^-x), whose derivative s(1 - s) reuses the output."""
        s = 1.0 / (1.0 + math.exp(-self.data))
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1 - s) * out.grad

        out._backward = _backward
        return out

    # The three below are an optional extension: they earn bonus points, and leaving them
    # unwritten costs nothing.

    def sin(self) -> Value:
        """sin(x), whose derivative is cos(x). Optional extension (bonus points only)."""
        out = Value(math.sin(self.data), (self,), "sin")

        def _backward():
            self.grad += math.cos(self.data) * out.grad

        out._backward = _backward
        return out

    def cos(self) -> Value:
        """cos(x), whose derivative is -sin(x). Optional extension (bonus points only)."""
        out = Value(math.cos(self.data), (self,), "cos")

        def _backward():
            self.grad -= math.sin(self.data) * out.grad

        out._backward = _backward
        return out

    def sqrt(self) -> Value:
        """Square root, defined for data >= 0: d/dx sqrt(x) = 1 / (2 sqrt(x)), which reuses
        the output (and is infinite at 0, so a backward pass through sqrt(0) divides by
        zero). Optional extension (bonus points only)."""
        root = math.sqrt(self.data)
        out = Value(root, (self,), "sqrt")

        def _backward():
            self.grad += out.grad / (2 * root)

        out._backward = _backward
        return out

    # ---- part 2: backpropagation ------------------------------------------------------

    def backward(self) -> None:
        """Fill in d(self)/d(node) for every node of the graph that made self.

        Leaf gradients accumulate across calls, as in PyTorch: call `zero_grad` between
        steps. Interior nodes (those made by an operation) start each call from 0, so only
        this call's gradient flows through them.
        """
        order = topological_order(self)
        for node in order:
            if node._prev:
                node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def topological_order(root: Value) -> list[Value]:
    """Every node that `root` depends on, each listed after all of its inputs, `root` last.

    Uses an explicit stack instead of recursion, so graphs deeper than Python's recursion
    limit (about 1,000 frames) still work.
    """
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for child in node._prev:
            if child not in visited:
                stack.append((child, False))
    return order


def zero_grad(values: Iterable[Value]) -> None:
    """Reset `grad` to 0.0 on every given value, so the next `backward()` starts clean."""
    for v in values:
        v.grad = 0.0
