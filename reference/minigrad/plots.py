"""Pictures of training: the loss of every step, and what a trained model decides where.

Both write a PNG with matplotlib and return its path. They are given, not exercises: they
only read `model(x).data` and the losses `train` returns, so they work with any engine that
passes part 3. matplotlib is imported when a picture is drawn, not when this file is: the
grader, which offers only the standard library and NumPy, imports every file of minigrad/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

GRID = 40  # points per side of the decision-boundary grid: each point is one forward pass of the model


def loss_curve(history: Sequence[float], path: str | Path, title: str = "training loss", per: str = "step") -> Path:
    """The loss of each training step, as `train` returns them (or of each epoch, as `fit` does)."""
    return _save(loss_figure(history, title, per), path)


def loss_figure(history: Sequence[float], title: str = "training loss", per: str = "step"):
    """The figure `loss_curve` saves. Its x axis counts steps or epochs, so its ticks are
    whole numbers: 20 epochs never show as 2.5, 5.0, 7.5."""
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(5, 3.5))
    axes.plot(range(len(history)), history, color="tab:blue", marker="o" if len(history) <= 30 else None, markersize=3)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set(xlabel=per, ylabel="loss", title=title)
    axes.grid(alpha=0.3)
    return figure


def decision_boundary(
    model: Callable, xs: Sequence[Sequence[float]], ys: Sequence[float], path: str | Path, title: str = ""
) -> Path:
    """The model's score over the plane of two inputs (positive: one class, negative: the
    other), with the samples on top, so you see the curve it learned between them."""
    left, right = min(x[0] for x in xs) - 0.5, max(x[0] for x in xs) + 0.5
    bottom, top = min(x[1] for x in xs) - 0.5, max(x[1] for x in xs) + 0.5
    grid_x = [left + (right - left) * i / (GRID - 1) for i in range(GRID)]
    grid_y = [bottom + (top - bottom) * j / (GRID - 1) for j in range(GRID)]
    scores = [[_score(model, [x, y]) for x in grid_x] for y in grid_y]
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(5, 4))
    axes.contourf(grid_x, grid_y, scores, levels=[-1e9, 0, 1e9], colors=["tab:orange", "tab:blue"], alpha=0.25)
    axes.contour(grid_x, grid_y, scores, levels=[0], colors="black", linewidths=1)
    for label, color in ((1.0, "tab:blue"), (-1.0, "tab:orange")):
        chosen = [x for x, y in zip(xs, ys) if (y > 0) == (label > 0)]
        axes.scatter([x[0] for x in chosen], [x[1] for x in chosen], c=color, edgecolors="black", s=25)
    axes.set(xlabel="x[0]", ylabel="x[1]", title=title or "decision boundary (score = 0)")
    return _save(figure, path)


def _score(model: Callable, x: list[float]) -> float:
    out = model(x)
    return float(out.data if hasattr(out, "data") else out[0].data)


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no window, no display needed
    import matplotlib.pyplot as plt

    return plt


def _save(figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    _pyplot().close(figure)
    return path
