"""Neural networks made of `Value`s: neurons, layers, an MLP, losses, SGD and a training loop.

Part 3 (`mlp`). Constructors are given; the forward passes, `parameters()`, the losses,
`SGD.step` and `train` are holes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .engine import Value, zero_grad

# Looked up when a neuron fires, not bound here: `Value.tanh` written at import time would
# make this whole file fail to import for an engine that has no tanh yet, and with it every
# network, loss and optimizer, even the ones that never use tanh.
ACTIVATIONS: dict[str, Callable[[Value], Value]] = {
    "tanh": lambda v: v.tanh(),
    "relu": lambda v: v.relu(),
    "linear": lambda v: v,
}


def _check_activation(name: str) -> str:
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}")
    return name


class Module:
    """Anything with parameters: the optimizer only needs `parameters()`."""

    def parameters(self) -> list[Value]:
        return []

    def zero_grad(self) -> None:
        zero_grad(self.parameters())


class Neuron(Module):
    """activation(w . x + b), with weights drawn uniformly from [-1, 1]."""

    def __init__(self, nin: int, activation: str = "tanh"):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(random.uniform(-1, 1))
        self.activation = _check_activation(activation)

    def __call__(self, x: Sequence[Value | float]) -> Value:
        """Weighted sum of the inputs plus the bias, through the activation."""
        ### BEGIN SOLUTION
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return ACTIVATIONS[self.activation](act)
        ### END SOLUTION

    def parameters(self) -> list[Value]:
        """The weights in input order, then the bias."""
        ### BEGIN SOLUTION
        return self.w + [self.b]
        ### END SOLUTION

    def __repr__(self) -> str:
        return f"Neuron({len(self.w)}, activation={self.activation!r})"


class Layer(Module):
    """`nout` neurons that all read the same inputs."""

    def __init__(self, nin: int, nout: int, activation: str = "tanh"):
        self.neurons = [Neuron(nin, activation) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        """Every neuron's output; a single `Value` when the layer has one neuron."""
        ### BEGIN SOLUTION
        outs = [n(x) for n in self.neurons]
        return outs[0] if len(outs) == 1 else outs
        ### END SOLUTION

    def parameters(self) -> list[Value]:
        """Neuron by neuron, each neuron's own parameter order."""
        ### BEGIN SOLUTION
        return [p for n in self.neurons for p in n.parameters()]
        ### END SOLUTION

    def __repr__(self) -> str:
        return f"Layer([{', '.join(map(repr, self.neurons))}])"


class MLP(Module):
    """Layers in sequence: `MLP(3, [4, 4, 1])` maps 3 inputs through 4, 4 and 1 neurons."""

    def __init__(self, nin: int, nouts: Sequence[int], activation: str = "tanh"):
        sizes = [nin, *nouts]
        self.layers = [Layer(sizes[i], sizes[i + 1], activation) for i in range(len(nouts))]

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        """Feed each layer's output to the next."""
        ### BEGIN SOLUTION
        for layer in self.layers:
            x = layer(x)
        return x
        ### END SOLUTION

    def parameters(self) -> list[Value]:
        """Layer by layer, each layer's own parameter order."""
        ### BEGIN SOLUTION
        return [p for layer in self.layers for p in layer.parameters()]
        ### END SOLUTION

    def __repr__(self) -> str:
        return f"MLP([{', '.join(map(repr, self.layers))}])"


def mse_loss(preds: Sequence[Value], targets: Sequence[float]) -> Value:
    """Mean squared error: the mean of (pred - target)^2 over the samples."""
    ### BEGIN SOLUTION
    return sum((p - t) ** 2 for p, t in zip(preds, targets)) / len(preds)
    ### END SOLUTION


def hinge_loss(scores: Sequence[Value], labels: Sequence[float]) -> Value:
    """Max-margin loss for labels +1/-1: the mean of relu(1 - label * score)."""
    ### BEGIN SOLUTION
    return sum((1 - y * s).relu() for s, y in zip(scores, labels)) / len(scores)
    ### END SOLUTION


def binary_cross_entropy(probs: Sequence[Value], targets: Sequence[float]) -> Value:
    """The mean of -(t log p + (1 - t) log(1 - p)) for probabilities p in (0, 1).

    A term whose factor is 0 is left out, so a target of exactly 0 or 1 never asks for
    log(0) when the other probability is 0.
    """
    ### BEGIN SOLUTION
    total = Value(0.0)
    for p, t in zip(probs, targets):
        if t != 0:
            total = total - t * p.log()
        if t != 1:
            total = total - (1 - t) * (1 - p).log()
    return total / len(probs)
    ### END SOLUTION


class SGD:
    """Plain gradient descent: move every parameter a small step against its gradient."""

    def __init__(self, params: Sequence[Value], lr: float = 0.01):
        self.params = list(params)
        self.lr = lr

    def step(self) -> None:
        """data -= lr * grad, for every parameter."""
        ### BEGIN SOLUTION
        for p in self.params:
            p.data -= self.lr * p.grad
        ### END SOLUTION

    def zero_grad(self) -> None:
        zero_grad(self.params)


def train(
    model: Module,
    xs: Sequence[Sequence[float]],
    ys: Sequence[float],
    loss_fn: Callable[[Sequence[Value], Sequence[float]], Value] = mse_loss,
    lr: float = 0.05,
    steps: int = 100,
) -> list[float]:
    """Full-batch gradient descent; returns the loss of every step, measured before its update.

    Each step: forward every sample, compute the loss, zero the gradients, backpropagate,
    take one SGD step.
    """
    ### BEGIN SOLUTION
    optimizer = SGD(model.parameters(), lr=lr)
    history = []
    for _ in range(steps):
        loss = loss_fn([model(x) for x in xs], ys)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(float(loss.data))
    return history
    ### END SOLUTION
