"""How fast is one training step of the part 4 tensor engine: against PyTorch, and against the
scalar `Value` engine of parts 1-3, side by side in one run.

The step: forward, softmax cross-entropy, backward, one SGD step, for an MLP 64 -> 128 -> 10
(ReLU) on the digits. The tensor engine and PyTorch take a batch of 256; the scalar engine,
which builds one Python object per number, a batch of 8. Each is repeated and the median taken.

Targets: the reference tensor engine within 3x of PyTorch on CPU, and
at least 1000x the scalar engine's speed per sample.

Threads: both NumPy's BLAS and PyTorch run on one thread (`OPENBLAS_NUM_THREADS=1` and friends
set before NumPy loads, `torch.set_num_threads(1)`), so the comparison is single core against
single core; PyTorch on every core (`torch.set_num_threads(os.cpu_count())`) is printed too, for
reference.

    python bench/tensor_speed.py
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy loads its BLAS

import gc  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "reference"))

from minigrad.datasets import digits  # noqa: E402
from minigrad.engine import Value  # noqa: E402
from minigrad.layers import SGD, Linear, ReLU, Sequential, cross_entropy  # noqa: E402
from minigrad.nn import MLP  # noqa: E402
from minigrad.nn import SGD as ScalarSGD  # noqa: E402

SIZES = (64, 128, 10)
BATCH, SCALAR_BATCH = 256, 8
TARGET_VS_TORCH, TARGET_VS_SCALAR = 3.0, 1000.0


def median_seconds(step: Callable[[], None], repeats: int, number: int) -> float:
    """Seconds per call: `number` calls timed together, `repeats` times, the median."""
    step()  # warm up: first-call costs (allocations, lazy imports) are not a step's
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            step()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def tensor_step(xs: np.ndarray, ys: np.ndarray) -> Callable[[], None]:
    np.random.seed(0)
    model = Sequential(Linear(SIZES[0], SIZES[1]), ReLU(), Linear(SIZES[1], SIZES[2]))
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)

    def step() -> None:
        opt.zero_grad()
        cross_entropy(model(xs), ys).backward()
        opt.step()

    return step


def torch_step(xs: np.ndarray, ys: np.ndarray) -> Callable[[], None]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(), torch.nn.Linear(SIZES[1], SIZES[2])
    ).double()  # float64, as the tensor engine
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    x, y = torch.tensor(xs), torch.tensor(ys)

    def step() -> None:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def scalar_cross_entropy(logits: list[list[Value]], labels: np.ndarray) -> Value:
    """Softmax cross-entropy from `Value`s, stable: log(sum_j e^(z_j - m)) + m - z_label."""
    total = Value(0.0)
    for row, label in zip(logits, labels):
        m = max(z.data for z in row)
        log_sum_exp = sum(((z - m).exp() for z in row), Value(0.0)).log() + m
        total = total + log_sum_exp - row[int(label)]
    return total / len(logits)


def scalar_step(xs: np.ndarray, ys: np.ndarray) -> Callable[[], None]:
    random.seed(0)
    model = MLP(SIZES[0], list(SIZES[1:]), activation="relu")
    for neuron in model.layers[-1].neurons:
        neuron.activation = "linear"  # logits: no ReLU on the output layer, as in the other two
    opt = ScalarSGD(model.parameters(), lr=0.05)
    rows = xs.tolist()

    def step() -> None:
        loss = scalar_cross_entropy([model(x) for x in rows], ys)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def main() -> int:
    gc.set_threshold(100_000, 50, 100)  # as the public checks do: Value graphs are full of cycles
    xs, ys = digits()
    cores = os.cpu_count() or 1
    torch.set_num_threads(1)
    tensor = median_seconds(tensor_step(xs[:BATCH], ys[:BATCH]), repeats=7, number=50)
    pytorch = median_seconds(torch_step(xs[:BATCH], ys[:BATCH]), repeats=7, number=50)
    torch.set_num_threads(cores)
    pytorch_all = median_seconds(torch_step(xs[:BATCH], ys[:BATCH]), repeats=7, number=50)
    torch.set_num_threads(1)
    scalar = median_seconds(scalar_step(xs[:SCALAR_BATCH], ys[:SCALAR_BATCH]), repeats=3, number=1)

    print(f"one training step of an MLP {' -> '.join(map(str, SIZES))} (ReLU), softmax cross-entropy, SGD")
    print("threads: NumPy BLAS 1, PyTorch 1 (torch.set_num_threads(1)) unless marked; float64 everywhere")
    print(f"{'engine':<40}{'batch':>6}{'s / step':>12}{'s / sample':>13}")
    rows = [
        ("minigrad tensor engine (reference)", BATCH, tensor),
        ("PyTorch CPU, 1 thread", BATCH, pytorch),
        (f"PyTorch CPU, {cores} threads (every core)", BATCH, pytorch_all),
        ("minigrad scalar Value engine", SCALAR_BATCH, scalar),
    ]
    for name, batch, seconds in rows:
        print(f"{name:<40}{batch:>6}{seconds:>12.2e}{seconds / batch:>13.2e}")
    vs_torch = tensor / pytorch
    speedup = (scalar / SCALAR_BATCH) / (tensor / BATCH)
    verdict = lambda met: "meets" if met else "MISSES"
    print(
        f"\ntensor engine vs PyTorch (1 thread): {vs_torch:.2f}x the time per step, "
        f"{verdict(vs_torch <= TARGET_VS_TORCH)} the within-{TARGET_VS_TORCH:g}x target"
    )
    print(
        f"tensor engine vs scalar engine, per sample: {speedup:,.0f}x faster, "
        f"{verdict(speedup >= TARGET_VS_SCALAR)} the {TARGET_VS_SCALAR:,.0f}x target"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
