"""A tensor autograd engine on NumPy: the same reverse mode as `Value`, one array at a time.

Part 4 (`tensor`). A `Tensor` holds the data (a float64 array) and a `Function` holds the
operation that made it: `forward` computes on arrays, `backward` turns the output's gradient
into one gradient per input. Every Function's `forward` and `backward`, `unbroadcast`,
`topological_order` and `Tensor.backward` are holes; the `Tensor` class, its operators (with
their shape checks) and `Function.apply` are given.

Gradient conventions are PyTorch's: only leaves (tensors no operation made) that require
grad keep a `grad`, and it accumulates across `backward()` calls until `zero_grad()`.
"""

from __future__ import annotations

import numbers

import numpy as np

ArrayLike = np.ndarray | float | int | list  # what an operator or the constructor accepts


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` back down to `shape`, undoing NumPy's broadcasting of an input.

    Broadcasting copies an input along new leading axes and along its axes of size 1; each
    copy was used, so each copy's gradient flows back, and the input's gradient is their sum.
    """
    ### BEGIN SOLUTION
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1 and grad.shape[axis] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad
    ### END SOLUTION


class Tensor:
    """A float64 NumPy array that remembers the `Function` that made it (`_creator`)."""

    # NumPy must not treat a Tensor as an array of objects: `array + tensor` then calls
    # `Tensor.__radd__` and gives a Tensor (priority: NumPy defers; ufunc None: no ufunc runs).
    __array_priority__ = 1000
    __array_ufunc__ = None

    def __init__(self, data: ArrayLike, requires_grad: bool = False):
        data = data.data if isinstance(data, Tensor) else data
        self.data = np.array(data, dtype=np.float64)  # a copy: an optimizer updates it in place
        self.grad: np.ndarray | None = None
        self.requires_grad = bool(requires_grad)
        self._creator: Function | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    def __repr__(self) -> str:
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"Tensor({np.array2string(self.data, separator=', ', prefix='Tensor(')}{grad})"

    def item(self) -> float:
        """The number in a one-element tensor."""
        if self.data.size != 1:
            raise ValueError(f"item() needs a one-element tensor, not one of shape {self.shape}")
        return float(self.data.reshape(()))

    def zero_grad(self) -> None:
        self.grad = None

    # ---- operators: each checks its operands' shapes, then applies its Function --------

    def __add__(self, other: Tensor | ArrayLike) -> Tensor:
        return Add.apply(*_elementwise(self, other, "+"))

    def __radd__(self, other: ArrayLike) -> Tensor:
        return Add.apply(*_elementwise(other, self, "+"))

    def __sub__(self, other: Tensor | ArrayLike) -> Tensor:
        return Sub.apply(*_elementwise(self, other, "-"))

    def __rsub__(self, other: ArrayLike) -> Tensor:
        return Sub.apply(*_elementwise(other, self, "-"))

    def __mul__(self, other: Tensor | ArrayLike) -> Tensor:
        return Mul.apply(*_elementwise(self, other, "*"))

    def __rmul__(self, other: ArrayLike) -> Tensor:
        return Mul.apply(*_elementwise(other, self, "*"))

    def __truediv__(self, other: Tensor | ArrayLike) -> Tensor:
        return Div.apply(*_elementwise(self, other, "/"))

    def __rtruediv__(self, other: ArrayLike) -> Tensor:
        return Div.apply(*_elementwise(other, self, "/"))

    def __matmul__(self, other: Tensor | ArrayLike) -> Tensor:
        return MatMul.apply(*_matmul_operands(self, other))

    def __rmatmul__(self, other: ArrayLike) -> Tensor:
        return MatMul.apply(*_matmul_operands(other, self))

    def __neg__(self) -> Tensor:
        return Neg.apply(self)

    def __pow__(self, exponent: float) -> Tensor:
        if isinstance(exponent, bool) or not isinstance(exponent, numbers.Real):
            raise TypeError(f"Tensor ** {type(exponent).__name__}: only Tensor ** number exists")
        return Pow.apply(self, exponent=float(exponent))

    def __rpow__(self, base: object) -> Tensor:
        raise TypeError(f"{type(base).__name__} ** Tensor: only Tensor ** number exists")

    def sum(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return Sum.apply(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Tensor:
        return Mean.apply(self, axis=axis, keepdims=keepdims)

    def exp(self) -> Tensor:
        return Exp.apply(self)

    def log(self) -> Tensor:
        if np.any(self.data <= 0):
            raise ValueError(f"log of {self.data.min()}: log is only defined for positive numbers")
        return Log.apply(self)

    def tanh(self) -> Tensor:
        return Tanh.apply(self)

    def relu(self) -> Tensor:
        return ReLU.apply(self)

    def sigmoid(self) -> Tensor:
        return Sigmoid.apply(self)

    def reshape(self, *shape: int | tuple[int, ...]) -> Tensor:
        """`t.reshape(2, 3)` or `t.reshape((2, 3))`; one size may be -1, as in NumPy."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        try:
            np.empty(self.shape, dtype=np.bool_).reshape(shape)
        except ValueError:
            raise ValueError(f"cannot reshape a tensor of shape {self.shape} into shape {shape}") from None
        return Reshape.apply(self, shape=shape)

    def transpose(self, *axes: int | tuple[int, ...]) -> Tensor:
        """Reverse the axes (NumPy's `.T`), or put them in the order `axes` gives."""
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        if axes:  # negative axes counted from the end, as in NumPy, so backward can invert them
            axes = tuple(int(a) for a in np.arange(self.ndim)[list(axes)])
        return Transpose.apply(self, axes=axes or None)

    @property
    def T(self) -> Tensor:
        return self.transpose()

    # ---- backpropagation ---------------------------------------------------------------

    def backward(self, grad: ArrayLike | None = None) -> None:
        """Fill in d(self)/d(leaf) in the `grad` of every leaf that requires grad.

        `grad` is the gradient that arrives at self (the seed of the backward pass); it may be
        left out only for a one-element tensor, where it is 1.0. Leaves accumulate across
        calls; intermediates pass their gradient on and keep none.
        """
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad: no leaf it depends on does")
        if grad is None:
            if self.data.size != 1:
                raise ValueError(
                    f"backward() without a grad needs a one-element tensor, not shape {self.shape}: "
                    f"pass grad=, an array of shape {self.shape}"
                )
            grad = np.ones_like(self.data)
        grad = np.array(grad.data if isinstance(grad, Tensor) else grad, dtype=np.float64)
        if grad.shape != self.shape:
            raise ValueError(f"backward(grad): grad has shape {grad.shape}, the tensor has shape {self.shape}")
        ### BEGIN SOLUTION
        grads = {self: grad}
        for node in reversed(topological_order(self)):
            g = grads.pop(node, None)
            if g is None:
                continue  # no gradient reached it: each Function that used it returned None
            if node._creator is None:
                node.grad = g.copy() if node.grad is None else node.grad + g
                continue
            for parent, parent_grad in zip(node._creator.inputs, node._creator.backward(g)):
                if parent.requires_grad and parent_grad is not None:
                    grads[parent] = grads[parent] + parent_grad if parent in grads else parent_grad
        ### END SOLUTION


def topological_order(root: Tensor) -> list[Tensor]:
    """Every tensor that requires grad and that `root` depends on, each after its inputs,
    `root` last. An explicit stack, no recursion, so a deep graph does not hit Python's limit."""
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
            parents = node._creator.inputs if node._creator is not None else ()
            stack.extend((p, False) for p in parents if p.requires_grad and p not in visited)
    return order
    ### END SOLUTION


def _as_tensor(x: Tensor | ArrayLike) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _elementwise(a: Tensor | ArrayLike, b: Tensor | ArrayLike, symbol: str) -> tuple[Tensor, Tensor]:
    """Both operands as Tensors, after checking that NumPy can broadcast their shapes."""
    a, b = _as_tensor(a), _as_tensor(b)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"a {symbol} b: shapes {a.shape} and {b.shape} cannot be broadcast together") from None
    return a, b


def _matmul_operands(a: Tensor | ArrayLike, b: Tensor | ArrayLike) -> tuple[Tensor, Tensor]:
    """Both operands as Tensors, after checking the shapes fit NumPy's `matmul`: the last axis
    of `a` meets the second-to-last of `b` (its only axis if 1-D), batch axes broadcast."""
    a, b = _as_tensor(a), _as_tensor(b)
    fits = a.ndim >= 1 and b.ndim >= 1 and a.shape[-1] == b.shape[-2 if b.ndim > 1 else 0]
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"a @ b: shapes {a.shape} and {b.shape} do not fit a matrix product")
    return a, b


class Function:
    """One operation: `forward` on arrays, `backward` from the output's gradient to one
    gradient per input (None for an input that needs none)."""

    def __init__(self):
        self.inputs: tuple[Tensor, ...] = ()
        self.saved_tensors: tuple[np.ndarray, ...] = ()

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        """Keep what `backward` will need; a Function object is used for one call only."""
        self.saved_tensors = arrays

    def forward(self, *arrays: np.ndarray, **kw) -> np.ndarray:
        raise NotImplementedError

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray | None, ...]:
        raise NotImplementedError

    @classmethod
    def apply(cls, *tensors: Tensor | ArrayLike, **kw) -> Tensor:
        """Run `forward` on the inputs' arrays; the result remembers this Function."""
        fn = cls()
        fn.inputs = tuple(_as_tensor(t) for t in tensors)
        result = Tensor(fn.forward(*(t.data for t in fn.inputs), **kw))
        result.requires_grad = any(t.requires_grad for t in fn.inputs)
        result._creator = fn
        return result


# Each Function below has the same shape: `forward` computes and saves what `backward` needs;
# `backward` returns one gradient per input, summed back to that input's shape.


class Add(Function):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(a, b)
        return a + b
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d(a + b) = 1 for both: the gradient passes through, unbroadcast."""
        ### BEGIN SOLUTION
        a, b = self.saved_tensors
        return unbroadcast(grad, a.shape), unbroadcast(grad, b.shape)
        ### END SOLUTION


class Sub(Function):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(a, b)
        return a - b
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d(a - b) is 1 for a and -1 for b."""
        ### BEGIN SOLUTION
        a, b = self.saved_tensors
        return unbroadcast(grad, a.shape), unbroadcast(-grad, b.shape)
        ### END SOLUTION


class Mul(Function):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(a, b)
        return a * b
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each input's local derivative is the other input, entry by entry."""
        ### BEGIN SOLUTION
        a, b = self.saved_tensors
        return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)
        ### END SOLUTION


class Div(Function):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(a, b)
        return a / b
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """d/da (a/b) = 1/b and d/db (a/b) = -a/b^2."""
        ### BEGIN SOLUTION
        a, b = self.saved_tensors
        return unbroadcast(grad / b, a.shape), unbroadcast(-grad * a / b**2, b.shape)
        ### END SOLUTION


class Neg(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        return -x
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """d(-x) = -1: no input needs saving."""
        ### BEGIN SOLUTION
        return (-grad,)
        ### END SOLUTION


class Pow(Function):
    def forward(self, x: np.ndarray, exponent: float) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(x)
        self.exponent = exponent
        return x**exponent
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """d/dx x^n = n x^(n-1); the exponent is a constant, not an input."""
        ### BEGIN SOLUTION
        (x,) = self.saved_tensors
        return (grad * self.exponent * x ** (self.exponent - 1),)
        ### END SOLUTION


class MatMul(Function):
    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(a, b)
        return a @ b
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For C = A @ B: dA = dC @ B^T and dB = A^T @ dC. A 1-D operand is first made a
        matrix (a row for `a`, a column for `b`), as `matmul` does, and batch axes that were
        broadcast are summed back."""
        ### BEGIN SOLUTION
        a, b = self.saved_tensors
        a2 = a[np.newaxis, :] if a.ndim == 1 else a
        b2 = b[:, np.newaxis] if b.ndim == 1 else b
        if b.ndim == 1:
            grad = np.expand_dims(grad, -1)
        if a.ndim == 1:
            grad = np.expand_dims(grad, -2)
        grad_a = unbroadcast(grad @ np.swapaxes(b2, -1, -2), a2.shape)
        grad_b = unbroadcast(np.swapaxes(a2, -1, -2) @ grad, b2.shape)
        return grad_a.reshape(a.shape), grad_b.reshape(b.shape)
        ### END SOLUTION


class Sum(Function):
    def forward(self, x: np.ndarray, axis: int | tuple[int, ...] | None, keepdims: bool) -> np.ndarray:
        ### BEGIN SOLUTION
        self.shape, self.axis, self.keepdims = x.shape, axis, keepdims
        return x.sum(axis=axis, keepdims=keepdims)
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """Every summed entry gets the gradient of its sum: put the summed axes back (size 1),
        then broadcast along them."""
        ### BEGIN SOLUTION
        if self.axis is not None and not self.keepdims:
            grad = np.expand_dims(grad, self.axis)
        return (np.broadcast_to(grad, self.shape),)
        ### END SOLUTION


class Mean(Function):
    def forward(self, x: np.ndarray, axis: int | tuple[int, ...] | None, keepdims: bool) -> np.ndarray:
        ### BEGIN SOLUTION
        self.shape, self.axis, self.keepdims = x.shape, axis, keepdims
        out = x.mean(axis=axis, keepdims=keepdims)
        self.count = x.size // max(np.size(out), 1)
        return out
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """A sum divided by the number of entries averaged: the sum's gradient over that count."""
        ### BEGIN SOLUTION
        if self.axis is not None and not self.keepdims:
            grad = np.expand_dims(grad, self.axis)
        return (np.broadcast_to(grad / self.count, self.shape),)
        ### END SOLUTION


class Exp(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        out = np.exp(x)
        self.save_for_backward(out)
        return out
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """e^x is its own derivative: save the output, not the input."""
        ### BEGIN SOLUTION
        (out,) = self.saved_tensors
        return (grad * out,)
        ### END SOLUTION


class Log(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(x)
        return np.log(x)
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """d/dx ln x = 1/x."""
        ### BEGIN SOLUTION
        (x,) = self.saved_tensors
        return (grad / x,)
        ### END SOLUTION


class Tanh(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        out = np.tanh(x)
        self.save_for_backward(out)
        return out
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """1 - tanh(x)^2 reuses the output."""
        ### BEGIN SOLUTION
        (out,) = self.saved_tensors
        return (grad * (1 - out**2),)
        ### END SOLUTION


class ReLU(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        ### BEGIN SOLUTION
        self.save_for_backward(x)
        return np.maximum(x, 0.0)
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """1 where x > 0, else 0 (0 at x = 0, as in PyTorch)."""
        ### BEGIN SOLUTION
        (x,) = self.saved_tensors
        return (grad * (x > 0),)
        ### END SOLUTION


class Sigmoid(Function):
    def forward(self, x: np.ndarray) -> np.ndarray:
        """1 / (1 + e^-x), written as e^-log(1 + e^-x): `logaddexp` never overflows, where
        e^-x alone would at x = -1000."""
        ### BEGIN SOLUTION
        out = np.exp(-np.logaddexp(0.0, -x))
        self.save_for_backward(out)
        return out
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """s(1 - s) reuses the output."""
        ### BEGIN SOLUTION
        (out,) = self.saved_tensors
        return (grad * out * (1 - out),)
        ### END SOLUTION


class Reshape(Function):
    def forward(self, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        ### BEGIN SOLUTION
        self.shape = x.shape
        return x.reshape(shape)
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """The same numbers in a new shape: the gradient goes back to the old shape."""
        ### BEGIN SOLUTION
        return (grad.reshape(self.shape),)
        ### END SOLUTION


class Transpose(Function):
    def forward(self, x: np.ndarray, axes: tuple[int, ...] | None) -> np.ndarray:
        ### BEGIN SOLUTION
        self.axes = axes
        return np.transpose(x, axes)
        ### END SOLUTION

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray]:
        """Move the axes back: reversing twice is the identity; a permutation is undone by
        its inverse (`argsort`)."""
        ### BEGIN SOLUTION
        return (np.transpose(grad, None if self.axes is None else np.argsort(self.axes)),)
        ### END SOLUTION
