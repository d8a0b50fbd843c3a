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
        return _node("add", self, other)

    def __mul__(self, other: Value | Number) -> Value:
        """self * other; each input's local derivative is the other input."""
        return _node("mul", self, other)

    def __pow__(self, exponent: Number) -> Value:
        """self ** exponent for a constant int or float exponent: d/dx x^n = n x^(n-1)."""
        if type(exponent) not in (int, float):
            return NotImplemented
        result = _node("pow", self)
        result.power = exponent
        result.data = self.data**exponent
        return result

    def __neg__(self) -> Value:
        """-self, built from multiplication so it needs no derivative of its own."""
        return _node("mul", self, -1.0)

    def __sub__(self, other: Value | Number) -> Value:
        """self - other, built as self + (-other)."""
        return _node("add", self, _node("mul", other, -1.0))

    def __truediv__(self, other: Value | Number) -> Value:
        """self / other: d/da (a/b) = 1/b and d/db (a/b) = -a/b^2."""
        return _node("div", self, other)

    def __radd__(self, other: Number) -> Value:
        """other + self, when the number is on the left (as in `sum(values)`)."""
        return _node("add", other, self)

    def __rmul__(self, other: Number) -> Value:
        """other * self, when the number is on the left."""
        return _node("mul", other, self)

    def __rsub__(self, other: Number) -> Value:
        """other - self: order matters, so wrap the number and subtract."""
        return _node("add", other, _node("mul", self, -1.0))

    def __rtruediv__(self, other: Number) -> Value:
        """other / self: order matters, so wrap the number and divide."""
        return _node("div", other, self)

    def exp(self) -> Value:
        """e^x is its own derivative."""
        return _node("exp", self)

    def log(self) -> Value:
        """Natural log, defined for data > 0: d/dx ln x = 1/x."""
        return _node("log", self)

    def tanh(self) -> Value:
        """tanh(x), whose derivative 1 - tanh(x)^2 reuses the output."""
        return _node("tanh", self)

    def relu(self) -> Value:
        """max(0, x); the derivative is 1 for x > 0 and 0 otherwise (0 at x = 0)."""
        return _node("relu", self)

    def sigmoid(self) -> Value:
        """1 / (1 + e^-x), whose derivative s(1 - s) reuses the output."""
        return _node("sigmoid", self)

    # The three below are an optional extension: they earn bonus points, and leaving them
    # unwritten costs nothing.

    def sin(self) -> Value:
        """sin(x), whose derivative is cos(x). Optional extension (bonus points only)."""
        return _node("sin", self)

    def cos(self) -> Value:
        """cos(x), whose derivative is -sin(x). Optional extension (bonus points only)."""
        return _node("cos", self)

    def sqrt(self) -> Value:
        """Square root, defined for data >= 0: d/dx sqrt(x) = 1 / (2 sqrt(x)), which reuses
        the output (and is infinite at 0, so a backward pass through sqrt(0) divides by
        zero). Optional extension (bonus points only)."""
        return _node("sqrt", self)

    # ---- part 2: backpropagation ------------------------------------------------------

    def backward(self) -> None:
        """Fill in d(self)/d(node) for every node of the graph that made self.

        Leaf gradients accumulate across calls, as in PyTorch: call `zero_grad` between
        steps. Interior nodes (those made by an operation) start each call from 0, so only
        this call's gradient flows through them.
        """
        nodes = topological_order(self)
        for n in nodes:
            if n._op:
                n.grad = 0.0
        self.grad = 1.0
        for n in nodes[::-1]:
            n._backward()


# Forward functions and local derivatives, one table entry per operation. A derivative
# rule gets the inputs' data and the output's data and gives d(out)/d(input) for each input.
FORWARD = {
    "add": lambda x, y: x + y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "exp": math.exp,
    "log": math.log,
    "tanh": math.tanh,
    "relu": lambda x: max(x, 0.0),
    "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
    "sin": math.sin,
    "cos": math.cos,
    "sqrt": math.sqrt,
}
RULES = {
    "add": lambda ins, y: (1.0, 1.0),
    "mul": lambda ins, y: (ins[1], ins[0]),
    "div": lambda ins, y: (1 / ins[1], -ins[0] / ins[1] ** 2),
    "exp": lambda ins, y: (y,),
    "log": lambda ins, y: (1 / ins[0],),
    "tanh": lambda ins, y: (1 - y**2,),
    "relu": lambda ins, y: (float(ins[0] > 0),),
    "sigmoid": lambda ins, y: (y * (1 - y),),
    "sin": lambda ins, y: (math.cos(ins[0]),),
    "cos": lambda ins, y: (-math.sin(ins[0]),),
    "sqrt": lambda ins, y: (0.5 / y,),
}


def _node(op, *args):
    """A new Value made by `op` from `args` (numbers are wrapped), with its backward step."""
    inputs = [a if isinstance(a, Value) else Value(a) for a in args]
    if op == "pow":
        made = Value(0.0, tuple(inputs), op)
    else:
        made = Value(FORWARD[op](*[i.data for i in inputs]), tuple(inputs), op)

    def step():
        if op == "pow":
            local = (made.power * inputs[0].data ** (made.power - 1),)
        else:
            local = RULES[op]([i.data for i in inputs], made.data)
        for source, slope in zip(inputs, local):
            source.grad += slope * made.grad

    made._backward = step
    return made


def topological_order(root: Value) -> list[Value]:
    """Every node that `root` depends on, each listed after all of its inputs, `root` last.

    Uses an explicit stack instead of recursion, so graphs deeper than Python's recursion
    limit (about 1,000 frames) still work.
    """
    seen = {id(root)}
    result = []
    pending = [iter([root])]
    path = []
    while pending:
        nxt = next(pending[-1], None)
        if nxt is None:
            pending.pop()
            if path:
                result.append(path.pop())
            continue
        path.append(nxt)
        fresh = [p for p in nxt._prev if id(p) not in seen]
        seen.update(id(p) for p in fresh)
        pending.append(iter(fresh))
    return result


def zero_grad(values: Iterable[Value]) -> None:
    """Reset `grad` to 0.0 on every given value, so the next `backward()` starts clean."""
    for item in list(values):
        item.grad = 0.0
