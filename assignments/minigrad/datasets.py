"""Small seeded datasets as plain lists, so they feed straight into `Value`s, and one real
data set as NumPy arrays for the tensor engine (`digits`).

The lists' labels are +1 / -1, which suits `tanh` outputs and `hinge_loss`.
"""

from __future__ import annotations

import gzip
import math
import random
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Dataset = tuple[list[list[float]], list[float]]


def xor() -> Dataset:
    """The four corners of the unit square; the label is +1 when exactly one input is 1."""
    xs = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    ys = [-1.0, 1.0, 1.0, -1.0]
    return xs, ys


def four_samples() -> Dataset:
    """Four 3-input samples for `MLP(3, [4, 4, 1])`: the worked example of lesson 3."""
    xs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
    ys = [1.0, -1.0, -1.0, 1.0]
    return xs, ys


def two_moons(n: int = 100, noise: float = 0.1, seed: int = 0) -> Dataset:
    """Two interleaved half circles, `n` points in all, labels +1 (upper) and -1 (lower).

    No straight line separates them, so only a network with a hidden layer gets them all.
    """
    rng = random.Random(seed)
    xs, ys = [], []
    for i in range(n):
        upper = i % 2 == 0
        t = math.pi * rng.random()
        if upper:
            x, y = math.cos(t), math.sin(t)
        else:
            x, y = 1 - math.cos(t), 0.5 - math.sin(t)
        xs.append([x + rng.gauss(0, noise), y + rng.gauss(0, noise)])
        ys.append(1.0 if upper else -1.0)
    return xs, ys


DIGITS = Path(__file__).resolve().parent / "data" / "digits.csv.gz"


def digits() -> tuple[np.ndarray, np.ndarray]:
    """1,797 handwritten digits as 8x8 images: `(xs, ys)` NumPy arrays.

    `xs` is `(1797, 64)` float64, each row an image read row by row, scaled from 0..16 to
    [0, 1]; `ys` is `(1797,)` int64, the digits 0..9. The file, its origin and its license are
    in `minigrad/data/` (the UCI handwritten digits, as scikit-learn redistributes them).
    """
    import numpy as np  # here, not at the top: the parts on `Value`s must not need NumPy

    with gzip.open(DIGITS, "rt") as file:
        table = np.loadtxt(file, delimiter=",")
    return table[:, :-1] / 16.0, table[:, -1].astype(np.int64)
