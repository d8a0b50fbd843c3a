"""Networks on tensors: layers, losses, SGD with momentum and weight decay, mini-batches, `fit`.

Part 4 (`tensor`). The `Module` base, the `ReLU` and `Tanh` modules and `mse_loss` are given;
`Linear`, `Sequential`, `cross_entropy`, `SGD.step`, `batches` and `fit` are holes. The input
checks (shapes, labels, batch sizes) are given too, at the top of each function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from .tensor import Tensor


class Module:
    """Anything with parameters. `model(x)` wraps an array in a Tensor and calls `forward`."""

    def __call__(self, x: Tensor | np.ndarray) -> Tensor:
        return self.forward(x if isinstance(x, Tensor) else Tensor(x))

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def parameters(self) -> list[Tensor]:
        return []

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None


class Linear(Module):
    """x @ weight + bias for a batch of rows x: `(N, nin)` in, `(N, nout)` out.

    `weight` is `(nin, nout)` and `bias` is `(nout,)`, both drawn uniformly from
    [-1/sqrt(nin), 1/sqrt(nin)] with NumPy's global random state (weight first): the scale
    keeps each output's size about the same whatever the number of inputs, as PyTorch does.
    """

    def __init__(self, nin: int, nout: int):
        ### BEGIN SOLUTION
        bound = 1 / np.sqrt(nin)
        self.weight = Tensor(np.random.uniform(-bound, bound, (nin, nout)), requires_grad=True)
        self.bias = Tensor(np.random.uniform(-bound, bound, (nout,)), requires_grad=True)
        ### END SOLUTION

    def forward(self, x: Tensor) -> Tensor:
        """One matrix product for the whole batch; the bias broadcasts over the rows."""
        ### BEGIN SOLUTION
        return x @ self.weight + self.bias
        ### END SOLUTION

    def parameters(self) -> list[Tensor]:
        return [self.weight, self.bias]

    def __repr__(self) -> str:
        return f"Linear({self.weight.shape[0]}, {self.weight.shape[1]})"


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.relu()

    def __repr__(self) -> str:
        return "ReLU()"


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()

    def __repr__(self) -> str:
        return "Tanh()"


class Sequential(Module):
    """Modules in sequence: each one's output is the next one's input."""

    def __init__(self, *modules: Module):
        self.modules = list(modules)

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        for module in self.modules:
            x = module(x)
        return x
        ### END SOLUTION

    def parameters(self) -> list[Tensor]:
        """Module by module, each module's own order (a Linear's weight before its bias)."""
        ### BEGIN SOLUTION
        return [p for module in self.modules for p in module.parameters()]
        ### END SOLUTION

    def __repr__(self) -> str:
        return f"Sequential({', '.join(map(repr, self.modules))})"


def mse_loss(pred: Tensor, target: Tensor | np.ndarray) -> Tensor:
    """Mean squared error over every entry. The shapes must be equal: broadcasting a `(N, 1)`
    prediction against `(N,)` targets would silently compare every sample with every target."""
    target = target if isinstance(target, Tensor) else Tensor(target)
    if pred.shape != target.shape:
        raise ValueError(f"mse_loss: pred has shape {pred.shape} and target shape {target.shape}; they must match")
    return ((pred - target) ** 2).mean()


def cross_entropy(logits: Tensor, labels: Tensor | np.ndarray) -> Tensor:
    """Softmax cross-entropy, the mean over the batch of -log softmax(logits)[label].

    Per row, -log(e^x_y / sum_j e^x_j) = log(sum_j e^x_j) - x_y. Subtracting the row's max m
    first changes nothing (it cancels) but keeps every e^(x_j - m) in (0, 1], so logits of
    1000 do not overflow. Built from Tensor operations, so its gradient comes for free:
    (softmax(logits) - one_hot(labels)) / N.
    """
    labels = np.asarray(labels.data if isinstance(labels, Tensor) else labels)
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(f"cross_entropy: logits {logits.shape} must be (N, C) and labels {labels.shape} (N,)")
    n, classes = logits.shape
    if labels.size and not (np.all(labels == np.round(labels)) and labels.min() >= 0 and labels.max() < classes):
        raise ValueError(f"cross_entropy: labels must be whole numbers in [0, {classes}), got {labels.tolist()}")
    ### BEGIN SOLUTION
    one_hot = np.eye(classes)[labels.astype(np.int64)]
    shifted = logits - logits.data.max(axis=1, keepdims=True)  # a constant: no gradient flows into the max
    log_sum_exp = shifted.exp().sum(axis=1).log()
    return (log_sum_exp - (shifted * one_hot).sum(axis=1)).mean()
    ### END SOLUTION


class SGD:
    """Stochastic gradient descent with PyTorch's momentum and weight decay (`torch.optim.SGD`):

    g = grad + weight_decay * p        (weight decay: a pull towards 0, as in an L2 penalty)
    buf = g on the first step, then momentum * buf + g    (a running direction)
    p = p - lr * buf
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0, weight_decay: float = 0.0):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr {lr}, momentum {momentum} and weight_decay {weight_decay} must be >= 0")
        self.params = list(params)
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        self.buffers: list[np.ndarray | None] = [None] * len(self.params)  # one momentum buffer each

    def step(self) -> None:
        """Update every parameter that has a gradient (a parameter with `grad` None is skipped,
        its buffer left as it was)."""
        ### BEGIN SOLUTION
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data
            if self.momentum:
                g = g if self.buffers[i] is None else self.momentum * self.buffers[i] + g
                self.buffers[i] = g
            p.data -= self.lr * g
        ### END SOLUTION

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


def batches(xs: np.ndarray, ys: np.ndarray, batch_size: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """`(xb, yb)` mini-batches in the order of `np.random.default_rng(seed).permutation(len(xs))`,
    the last one shorter when `batch_size` does not divide the data."""
    xs, ys = np.asarray(xs), np.asarray(ys)
    if len(xs) != len(ys):
        raise ValueError(f"batches: {len(xs)} inputs but {len(ys)} targets (shapes {xs.shape} and {ys.shape})")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batches: batch_size must be an int >= 1, not {batch_size!r}")
    ### BEGIN SOLUTION
    order = np.random.default_rng(seed).permutation(len(xs))
    chunks = [order[start : start + batch_size] for start in range(0, len(xs), batch_size)]
    return ((xs[chunk], ys[chunk]) for chunk in chunks)
    ### END SOLUTION


def fit(
    model: Module,
    xs: np.ndarray,
    ys: np.ndarray,
    loss_fn: Callable[[Tensor, np.ndarray], Tensor],
    optimizer: SGD,
    epochs: int,
    batch_size: int,
    seed: int,
) -> list[float]:
    """Mini-batch training; returns each epoch's mean loss over the samples.

    Epoch e shuffles with seed + e, so each epoch sees a new order and a run can be replayed.
    Per batch: zero the gradients, the loss, backward, one optimizer step. A batch's loss is
    a mean over its samples, so it counts len(batch) times towards the epoch's mean.
    """
    ### BEGIN SOLUTION
    history = []
    for epoch in range(epochs):
        total = 0.0
        for xb, yb in batches(xs, ys, batch_size, seed + epoch):
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
        history.append(total / len(xs))
    return history
    ### END SOLUTION
