"""The reference engine against independent witnesses: central differences and PyTorch."""

import math
import operator

import pytest
import torch  # pinned in the dev extra's bootstrap: an independent autograd to compare with
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minigrad.engine import Value

from trusted import central_difference

# The operations of the random graphs: richer than the public checks' (which use + and * only,
# so that part 2 stands alone): here it is the reference engine under test, every operator.
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul}
UNARY = {"tanh": math.tanh, "sigmoid": lambda x: 1 / (1 + math.exp(-x))}
OPS = sorted(BINARY) + sorted(UNARY)


def run_program(program: list[tuple[str, int, int]], inputs: list) -> object:
    """Evaluate on floats, Values or torch tensors alike; the last node is the result."""
    pool = list(inputs)
    for op, i, j in program:
        if op in BINARY:
            pool.append(BINARY[op](pool[i], pool[j]))
        elif isinstance(pool[i], float):
            pool.append(UNARY[op](pool[i]))
        else:
            pool.append(getattr(pool[i], op)())
    return pool[-1]


def show_program(program: list[tuple[str, int, int]], names: str) -> str:
    """The program as one expression, e.g. `((a * b) + a).tanh()`, for a failure message."""
    pool = list(names)
    for op, i, j in program:
        pool.append(f"({pool[i]} {op} {pool[j]})" if op in BINARY else f"{pool[i]}.{op}()")
    return pool[-1]


@st.composite
def programs(draw, n_inputs=3, max_ops=10):
    """Random expression graphs; operands are drawn from every node so far, so nodes get reused."""
    steps = []
    for step in range(draw(st.integers(1, max_ops))):
        size = n_inputs + step
        steps.append((draw(st.sampled_from(OPS)), draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1))))
    return steps


inputs = st.lists(st.floats(-2, 2, allow_nan=False), min_size=3, max_size=3)


@settings(max_examples=200, deadline=None)
@given(program=programs(), xs=inputs)
def test_gradients_match_central_differences(program, xs):
    result = run_program(program, [float(x) for x in xs])
    assume(abs(result) < 1e3)
    leaves = [Value(x) for x in xs]
    run_program(program, leaves).backward()
    slopes = central_difference(lambda *v: run_program(program, list(v)), xs)
    for leaf, slope in zip(leaves, slopes):
        assert leaf.grad == pytest.approx(slope, rel=1e-4, abs=1e-5), show_program(program, "abc")


@settings(max_examples=200, deadline=None)
@given(program=programs(), xs=inputs)
def test_gradients_match_pytorch(program, xs):
    leaves = [Value(x) for x in xs]
    run_program(program, leaves).backward()
    tensors = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out = run_program(program, tensors)
    grads = torch.autograd.grad(out, tensors, allow_unused=True)
    for leaf, g in zip(leaves, grads):
        want = 0.0 if g is None else g.item()
        assert leaf.grad == pytest.approx(want, rel=1e-9, abs=1e-12), show_program(program, "abc")


def test_every_unary_matches_pytorch():
    for name in ("exp", "log", "tanh", "relu", "sigmoid"):
        for x in (0.3, 1.7, -0.8):
            if name == "log" and x <= 0:
                continue
            v = Value(x)
            getattr(v, name)().backward()
            t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
            getattr(t, name)().backward()
            assert v.grad == pytest.approx(t.grad.item(), rel=1e-12), (name, x)


def test_chain_200000_deep():
    x = Value(0.5)
    y = x
    for _ in range(200_000):
        y = y * 1.0 + 0.0
    y.backward()
    assert x.grad == 1.0


def test_backward_twice_doubles_leaf_gradients_like_pytorch():
    a, b, c = Value(2.0), Value(-3.0), Value(10.0)
    f = (a * b + c) ** 2
    f.backward()
    f.backward()
    assert (a.grad, b.grad, c.grad) == (-48.0, 32.0, 16.0)


def test_data_keeps_int_type_and_errors_are_explained():
    assert (Value(2) + 3).data == 5 and isinstance((Value(2) + 3).data, int)
    with pytest.raises(ValueError, match="positive"):
        Value(-1).log()
    with pytest.raises(TypeError):
        Value(1) * "x"
    with pytest.raises(ZeroDivisionError, match="zero"):
        Value(1) / Value(0)
    with pytest.raises(TypeError):
        2 ** Value(3.0)
    with pytest.raises(ValueError, match="fractional"):
        Value(-8.0) ** (1 / 3)
