"""What the lessons promise and the given picture tools draw: each lesson's "next" is the step
`make check` names, the two-moons milestone needs its hidden layer, `to_dot` draws a Tensor
graph as well as a Value graph, and a loss curve counts its steps or epochs in whole numbers."""

from __future__ import annotations

import ast
import math
import random
import re

import numpy as np
import pytest

from minigrad.datasets import two_moons
from minigrad.draw import to_dot
from minigrad.engine import Value
from minigrad.nn import MLP, hinge_loss, train
from minigrad.tensor import Tensor

from grading import ROOT
from parts import PARTS, following

LESSONS = ROOT / "reference" / "lessons"


def said_next(part) -> str:
    """What the checks' closing says when `part` passes alone (conftest's `closing`)."""
    after = following(part)
    if after is None:
        return "that was the last part: run `make check` for every part, then submit"
    return f"next, {after.label}: read `{after.lesson}`, then `make check PART={after.name}`"


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.name)
def test_each_lesson_sends_students_where_make_check_does(part) -> None:
    text = " ".join((ROOT / "reference" / part.lesson).read_text().split())
    assert said_next(part).lower() in text.lower()
    assert "Then do the checkpoint quiz" not in text


def milestone() -> tuple[dict, float]:
    """The public milestone's settings, as the check file states them."""
    tree = ast.parse((ROOT / "reference" / "checks" / "test_mlp.py").read_text())
    found = {
        t.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id in ("MILESTONE", "BEST_LINE")
    }
    return found["MILESTONE"], found["BEST_LINE"]


def best_line(xs, ys) -> float:
    """The best accuracy of any straight line: try the directions normal to every pair of
    points (an optimal line can be turned until it touches two), each tilted a hair both ways."""
    best = 0
    for (x1, y1), (x2, y2) in ((p, q) for i, p in enumerate(xs) for q in xs[i + 1 :]):
        angle = math.atan2(y2 - y1, x2 - x1) + math.pi / 2
        for tilt in (-1e-7, 1e-7):
            c, s = math.cos(angle + tilt), math.sin(angle + tilt)
            order = sorted(zip((x * c + y * s for x, y in xs), ys))
            right = sum(label > 0 for _, label in order)  # threshold below every point: all called +1
            best = max(best, right, len(xs) - right)
            for _, label in order:
                right += -1 if label > 0 else 1
                best = max(best, right, len(xs) - right)
    return best / len(xs)


def accuracy(model, xs, ys) -> float:
    return sum((model(x).data > 0) == (y > 0) for x, y in zip(xs, ys)) / len(xs)


def test_no_straight_line_passes_the_two_moons_milestone() -> None:
    settings, line = milestone()
    xs, ys = two_moons(settings["samples"], noise=settings["noise"], seed=settings["seed"])
    assert best_line(xs, ys) == line < settings["accuracy"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_lessons_mlp_passes_the_milestone_and_a_linear_model_fails_it(seed: int) -> None:
    settings, _ = milestone()
    xs, ys = two_moons(settings["samples"], noise=settings["noise"], seed=settings["seed"])
    random.seed(seed)
    model = MLP(2, [settings["hidden"], 1])
    train(model, xs, ys, loss_fn=hinge_loss, lr=settings["lr"], steps=settings["steps"])
    assert accuracy(model, xs, ys) >= settings["accuracy"]
    random.seed(seed)
    linear = MLP(2, [1], activation="linear")
    train(linear, xs, ys, loss_fn=hinge_loss, lr=settings["lr"], steps=settings["steps"])
    assert accuracy(linear, xs, ys) < settings["accuracy"]


def test_to_dot_draws_a_tensor_graph() -> None:
    x = Tensor([[1.0, -2.0]])
    w = Tensor([[0.5, -1.0, 2.0], [1.0, 0.5, -0.5]], requires_grad=True)
    b = Tensor(np.zeros(7), requires_grad=True)
    loss = ((x @ w).relu().sum() + b).sum()
    loss.backward()
    dot = to_dot(loss)
    assert sorted(re.findall(r'op \[label="(\w+)"\]', dot)) == ["Add", "MatMul", "ReLU", "Sum", "Sum"]
    assert 'label="{ data 0.5 -1 2 1 0.5 -0.5 | grad 0 0 7 0 0 -14 }"' in dot  # w: its numbers and grad
    assert 'label="{ data 1 -2 }"' in dot  # x requires no grad: no grad shown
    assert 'label="{ data shape (7,) | grad shape (7,) }"' in dot  # too many numbers: the shape
    assert dot.count(" -> ") == 5 + 7  # each operation to its output, each input to its operation


def test_to_dot_still_draws_a_value_graph() -> None:
    a = Value(2.0, label="a")
    out = a * Value(-3.0) + a
    out.backward()
    dot = to_dot(out)
    assert 'label="{ a | data 2.0000 | grad -2.0000 }"' in dot and 'label="+"' in dot and 'label="*"' in dot


@pytest.mark.parametrize("epochs", [5, 20])
def test_the_loss_curve_counts_epochs_in_whole_numbers(epochs: int) -> None:
    pytest.importorskip("matplotlib")
    from minigrad.plots import loss_figure

    figure = loss_figure([1.0 / (e + 1) for e in range(epochs)], per="epoch")
    figure.canvas.draw()
    axes = figure.axes[0]
    low, high = axes.get_xlim()
    shown = [tick for tick in axes.get_xticks() if low <= tick <= high]
    assert len(shown) >= 3 and all(float(tick).is_integer() for tick in shown), shown
