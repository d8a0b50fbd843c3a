"""A scalar autograd engine that records a tape: every operation appends its inputs and local
derivatives to one list, and backward walks the list from the end. Written for the similarity
bench as an honest design unlike the closures one."""

import math

TAPE = []


class Value:
    def __init__(self, data, label=""):
        self.data = float(data)
        self.grad = 0.0
        self.label = label
        self._prev = set()
        self._op = ""

    @staticmethod
    def lift(thing):
        return thing if isinstance(thing, Value) else Value(thing)

    def record(self, result, op, *partials):
        result._op = op
        result._prev = {source for source, _ in partials}
        TAPE.append((result, partials))
        return result

    def __add__(self, other):
        other = Value.lift(other)
        return self.record(Value(self.data + other.data), "+", (self, 1.0), (other, 1.0))

    def __mul__(self, other):
        other = Value.lift(other)
        return self.record(Value(self.data * other.data), "*", (self, other.data), (other, self.data))

    def __pow__(self, k):
        assert isinstance(k, (int, float)), "only constant powers"
        return self.record(Value(self.data**k), f"**{k}", (self, k * self.data ** (k - 1)))

    def tanh(self):
        y = math.tanh(self.data)
        return self.record(Value(y), "tanh", (self, 1 - y * y))

    def exp(self):
        y = math.exp(self.data)
        return self.record(Value(y), "exp", (self, y))

    def relu(self):
        positive = self.data > 0
        return self.record(Value(self.data if positive else 0.0), "relu", (self, 1.0 if positive else 0.0))

    def log(self):
        return self.record(Value(math.log(self.data)), "log", (self, 1 / self.data))

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-Value.lift(other))

    def __truediv__(self, other):
        return self * Value.lift(other) ** -1

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, other):
        return Value.lift(other) - self

    def __rtruediv__(self, other):
        return Value.lift(other) / self

    def backward(self):
        self.grad = 1.0
        for result, partials in reversed(TAPE):
            for source, local in partials:
                source.grad += local * result.grad
        TAPE.clear()

    def __repr__(self):
        return f"Value({self.data:.4f}, grad {self.grad:.4f})"


def zero_grad(values):
    for value in values:
        value.grad = 0.0
