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
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def __mul__(self, other: Value | Number) -> Value:
        """self * other; each input's local derivative is the other input."""
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def __pow__(self, exponent: Number) -> Value:
        """self ** exponent for a constant int or float exponent: d/dx x^n = n x^(n-1)."""
        ### BEGIN SOLUTION
        if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
            return NotImplemented
        if self.data == 0 and exponent < 0:
            raise ZeroDivisionError(f"0 ** {exponent}: zero has no negative power")
        if self.data < 0 and not float(exponent).is_integer():
            raise ValueError(f"{self.data} ** {exponent}: a negative base has no real fractional power")
        out = Value(self.data**exponent, (self,), f"**{exponent}")

        def _backward():
            self.grad += exponent * self.data ** (exponent - 1) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def __neg__(self) -> Value:
        """-self, built from multiplication so it needs no derivative of its own."""
        ### BEGIN SOLUTION
        return self * -1
        ### END SOLUTION

    def __sub__(self, other: Value | Number) -> Value:
        """self - other, built as self + (-other)."""
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        return self + (-other)
        ### END SOLUTION

    def __truediv__(self, other: Value | Number) -> Value:
        """self / other: d/da (a/b) = 1/b and d/db (a/b) = -a/b^2."""
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        if other.data == 0:
            raise ZeroDivisionError(f"{self.data} / 0: division by zero")
        out = Value(self.data / other.data, (self, other), "/")

        def _backward():
            self.grad += out.grad / other.data
            other.grad += -self.data / other.data**2 * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def __radd__(self, other: Number) -> Value:
        """other + self, when the number is on the left (as in `sum(values)`)."""
        ### BEGIN SOLUTION
        return self + other
        ### END SOLUTION

    def __rmul__(self, other: Number) -> Value:
        """other * self, when the number is on the left."""
        ### BEGIN SOLUTION
        return self * other
        ### END SOLUTION

    def __rsub__(self, other: Number) -> Value:
        """other - self: order matters, so wrap the number and subtract."""
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        return other - self
        ### END SOLUTION

    def __rtruediv__(self, other: Number) -> Value:
        """other / self: order matters, so wrap the number and divide."""
        ### BEGIN SOLUTION
        other = _as_value(other)
        if other is NotImplemented:
            return NotImplemented
        return other / self
        ### END SOLUTION

    def exp(self) -> Value:
        """e^x is its own derivative."""
        ### BEGIN SOLUTION
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def log(self) -> Value:
        """Natural log, defined for data > 0: d/dx ln x = 1/x."""
        ### BEGIN SOLUTION
        if self.data <= 0:
            raise ValueError(f"log({self.data}): log is only defined for positive numbers")
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out
        ### END SOLUTION

    def tanh(self) -> Value:
        """tanh(x), whose derivative 1 - tanh(x)^2 reuses the output."""
        ### BEGIN SOLUTION
        out = Value(math.tanh(self.data), (self,), "tanh")

        def _backward():
            self.grad += (1 - out.data**2) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def relu(self) -> Value:
        """max(0, x); the derivative is 1 for x > 0 and 0 otherwise (0 at x = 0)."""
        ### BEGIN SOLUTION
        out = Value(self.data if self.data > 0 else 0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def sigmoid(self) -> Value:
        """1 / (1 + e^-x), whose derivative s(1 - s) reuses the output."""
        ### BEGIN SOLUTION
        if self.data >= 0:
            s = 1 / (1 + math.exp(-self.data))
        else:
            s = math.exp(self.data) / (1 + math.exp(self.data))
        out = Value(s, (self,), "sigmoid")

        def _backward():
            self.grad += s * (1 - s) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    # The three below are an optional extension: they earn bonus points, and leaving them
    # unwritten costs nothing.

    def sin(self) -> Value:
        """sin(x), whose derivative is cos(x). Optional extension (bonus points only)."""
        ### BEGIN SOLUTION
        out = Value(math.sin(self.data), (self,), "sin")

        def _backward():
            self.grad += math.cos(self.data) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def cos(self) -> Value:
        """cos(x), whose derivative is -sin(x). Optional extension (bonus points only)."""
        ### BEGIN SOLUTION
        out = Value(math.cos(self.data), (self,), "cos")

        def _backward():
            self.grad += -math.sin(self.data) * out.grad

        out._backward = _backward
        return out
        ### END SOLUTION

    def sqrt(self) -> Value:
        """Square root, defined for data >= 0: d/dx sqrt(x) = 1 / (2 sqrt(x)), which reuses
        the output (and is infinite at 0, so a backward pass through sqrt(0) divides by
        zero). Optional extension (bonus points only)."""
        ### BEGIN SOLUTION
        if self.data < 0:
            raise ValueError(f"sqrt({self.data}): sqrt is only defined for numbers >= 0")
        out = Value(math.sqrt(self.data), (self,), "sqrt")

        def _backward():
            self.grad += out.grad / (2 * out.data)

        out._backward = _backward
        return out
        ### END SOLUTION

    # ---- part 2: backpropagation ------------------------------------------------------

    def backward(self) -> None:
        """Fill in d(self)/d(node) for every node of the graph that made self.

        Leaf gradients accumulate across calls, as in PyTorch: call `zero_grad` between
        steps. Interior nodes (those made by an operation) start each call from 0, so only
        this call's gradient flows through them.
        """
        ### BEGIN SOLUTION
        order = topological_order(self)
        for node in order:
            if node._prev:
                node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
        ### END SOLUTION


def topological_order(root: Value) -> list[Value]:
    """Every node that `root` depends on, each listed after all of its inputs, `root` last.

    Uses an explicit stack instead of recursion, so graphs deeper than Python's recursion
    limit (about 1,000 frames) still work.
    """
    ### BEGIN SOLUTION
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((child, False) for child in node._prev if child not in visited)
    return order
    ### END SOLUTION


def zero_grad(values: Iterable[Value]) -> None:
    """Reset `grad` to 0.0 on every given value, so the next `backward()` starts clean."""
    ### BEGIN SOLUTION
    for v in values:
        v.grad = 0.0
    ### END SOLUTION
