"""Part 4's verdicts are the parent's, from what it checks against the reference: Linear's draws
against the reference's draws, backward()'s gradients against the exact ones, the milestone's
parameters against the reference's training and on digits the child never sees, and its time
against the parent's own count. Each check is fed the answers an honest engine, a fair variation
and a forger would send, for several seeds."""

from __future__ import annotations

import importlib.util
import random

import numpy as np
import pytest

from graders.course_facts.kit import SUITES
from graders.grading.cases import Case, Program
from graders.grading.judge import GradeFailure, judge
from graders.grading.protocol import Outcome
from minigrad import layers  # the reference package (tests/conftest.py puts it on the path)
from minigrad.datasets import digits
from minigrad.tensor import Tensor


def suite(part: str):
    spec = importlib.util.spec_from_file_location(f"hidden_{part}", SUITES / f"test_{part}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tensor_suite = suite("tensor")
SEEDS = range(4)


def answer(a: np.ndarray) -> dict:
    """An array as the child sends it."""
    return {"shape": list(a.shape), "values": a.tolist()}


def only(make, seed: int) -> Case:
    (case,) = [c for c in make(random.Random(seed)) if c.check is not None]
    return case


@pytest.mark.parametrize("seed", SEEDS)
def test_linear_init_takes_the_reference_draws_in_any_arrangement_and_nothing_else(seed: int) -> None:
    case = only(tensor_suite.linear_cases, seed)
    drawn_with = case.programs[0].steps[0][1]["seed"]
    nin, nout = tensor_suite.LINEAR
    bound = nin**-0.5
    np.random.seed(drawn_with)
    weight, bias = np.random.uniform(-bound, bound, (nin, nout)), np.random.uniform(-bound, bound, (nout,))
    want = [[answer(weight), answer(bias)], ["True", "True"]]
    np.random.seed(drawn_with)  # the fair variation: bias first, PyTorch's (nout, nin) layout, rand scaled
    fair_bias = (2 * np.random.rand(nout) - 1) * bound
    fair_weight = (2 * np.random.rand(nout, nin).T - 1) * bound
    np.random.seed(drawn_with + 1)
    other = [np.random.uniform(-bound, bound, (nin, nout)), np.random.uniform(-bound, bound, (nout,))]
    own = np.random.default_rng(drawn_with)
    mine = [own.uniform(-bound, bound, (nin, nout)), own.uniform(-bound, bound, (nout,))]

    assert case.check(want, want) is None
    assert case.check([[answer(fair_weight), answer(fair_bias)], ["True", "True"]], want) is None
    refused = "weight and bias are not the numbers NumPy's global random state gives after numpy.random.seed(s)"
    for arrays in (other, mine):
        assert refused in case.check([[answer(a) for a in arrays], ["True", "True"]], want)
    assert "requires_grad of weight and bias" in case.check([want[0], ["False", "True"]], want)
    assert "the largest |entry| is" in case.check([[answer(weight * 2), answer(bias)], ["True", "True"]], want)


def composite_gradients(inputs: dict, derivative=None) -> list[np.ndarray]:
    """The gradients of ((a * b + c).tanh() @ w).mean(): the reference's backward, or worked out
    by hand with `derivative` as tanh's derivative of its input."""
    a, b, c, w = (np.array(inputs[name], dtype=float) for name in "abcw")
    if derivative is None:
        leaves = [Tensor(x, requires_grad=True) for x in (a, b, c, w)]
        ((leaves[0] * leaves[1] + leaves[2]).tanh() @ leaves[3]).mean().backward()
        return [leaf.grad for leaf in leaves]
    z = a * b + c
    upstream = np.full((z.shape[0], w.shape[1]), 1 / (z.shape[0] * w.shape[1]))
    dz = (upstream @ w.T) * derivative(z)
    return [dz * b, (dz * a).sum(axis=0), dz.sum(axis=1, keepdims=True), np.tanh(z).T @ upstream]


def central_differences(inputs: dict, h: float = 1e-6) -> list[np.ndarray]:
    arrays = [np.array(inputs[name], dtype=float) for name in "abcw"]

    def loss(xs: list[np.ndarray]) -> float:
        a, b, c, w = xs
        return float(np.mean(np.tanh(a * b + c) @ w))

    found = []
    for k, x in enumerate(arrays):
        gradient = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            sides = []
            for sign in (1, -1):
                moved = [y.copy() for y in arrays]
                moved[k][index] += sign * h
                sides.append(loss(moved))
            gradient[index] = (sides[0] - sides[1]) / (2 * h)
        found.append(gradient)
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_gradcheck_wants_the_exact_gradients_not_differences_copied_over_them(seed: int) -> None:
    case = only(tensor_suite.central_difference_cases, seed)
    for program in case.programs:
        numeric = [answer(g) for g in central_differences(program.inputs)]
        exact = [answer(g) for g in composite_gradients(program.inputs)]
        want = [numeric, *exact]
        sech = [answer(g) for g in composite_gradients(program.inputs, lambda z: 1 / np.cosh(z) ** 2)]
        assert case.check(want, want) is None
        assert case.check([numeric, *sech], want) is None  # another fair formula of tanh's derivative
        copied = case.check([numeric, *numeric], want)
        assert copied.startswith("backward()'s gradient of ") and "off the exact one by" in copied
        wrong_forward = [answer(np.array(n["values"]) + 0.01) for n in numeric]
        assert "central differences of your forward pass differ" in case.check([wrong_forward, *exact], want)


def trained(initial: list, epochs: int = 5) -> list[dict]:
    """The milestone's training on the reference engine, from the given initial parameters."""
    xs, ys = (part[: tensor_suite.TRAINING_DIGITS] for part in digits())
    model = layers.Sequential(layers.Linear(64, 32), layers.ReLU(), layers.Linear(32, 10))
    for parameter, value in zip(model.parameters(), initial):
        parameter.data = np.array(value, dtype=float)
    sgd = layers.SGD(model.parameters(), lr=0.1, momentum=0.9)
    layers.fit(model, xs, ys, layers.cross_entropy, sgd, epochs, 32, 0)
    return [answer(p.data) for p in model.parameters()]


def initial_parameters(case: Case) -> list:
    return next(arguments for name, arguments in case.programs[0].steps if name == "set_parameters")["values"]


def test_the_milestone_wants_this_programs_training_and_runs_other_models_itself() -> None:
    case = only(tensor_suite.milestone_cases, 0)
    initial = initial_parameters(case)
    want = [trained(initial)]
    other = initial_parameters(only(tensor_suite.milestone_cases, 1))

    assert case.check(want, want) is None
    assert "parameters() after training are" in case.check([want[0][:3]], want)
    assert "test accuracy" in case.check([[answer(np.array(v)) for v in initial]], want)
    elsewhere = case.check([trained(other)], want)  # a good model, trained from other initial parameters
    assert "but these are not the parameters fit() reaches" in elsewhere


def test_a_measured_program_over_its_limit_fails_on_the_parents_count_alone() -> None:
    program = Program(shown="fit(...)")
    program.add("measured", what="fit()", limit=2.0, stop_after=4.0)
    case = Case("timed", "tensor", "the milestone", "look for loops", [program])
    want = [Outcome([1.0], None)]
    judge(case, want, [Outcome([1.0], None, cpu=1.9)])
    with pytest.raises(GradeFailure, match=r"the milestone: fit\(\) took 2.6 s of CPU, expected at most 2 s"):
        judge(case, want, [Outcome([1.0], None, cpu=2.6)])
    stopped = Outcome([], {"type": "ChildFailure", "message": "took too long", "where": None}, cpu=3.9)
    with pytest.raises(GradeFailure, match=r"fit\(\) took more than 3.9 s of CPU.*it was stopped there"):
        judge(case, want, [stopped])
