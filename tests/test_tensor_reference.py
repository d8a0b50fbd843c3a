"""The reference tensor engine (part 4) against independent witnesses: central differences
computed with plain NumPy, and PyTorch for every operation, the losses and SGD."""

import warnings

import numpy as np
import pytest
import torch  # pinned in the dev extra's bootstrap: an independent autograd to compare with
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minigrad.datasets import digits
from minigrad.layers import SGD, Linear, ReLU, Sequential, Tanh, batches, cross_entropy, fit, mse_loss
from minigrad.tensor import Tensor, unbroadcast

# name -> (the operation on Tensors, the same on torch tensors, what its inputs may hold)
NONZERO = st.floats(0.5, 2.0) | st.floats(-2.0, -0.5)
ANY = st.floats(-2.0, 2.0)
AWAY_FROM_ZERO = st.floats(0.01, 2.0) | st.floats(-2.0, -0.01)  # relu's kink: no central difference there
POSITIVE = st.floats(0.2, 3.0)

BINARY = {
    "+": (lambda a, b: a + b, ANY, ANY),
    "-": (lambda a, b: a - b, ANY, ANY),
    "*": (lambda a, b: a * b, ANY, ANY),
    "/": (lambda a, b: a / b, ANY, NONZERO),
}
UNARY = {
    "neg": (lambda x: -x, ANY),
    "exp": (lambda x: x.exp(), ANY),
    "log": (lambda x: x.log(), POSITIVE),
    "tanh": (lambda x: x.tanh(), ANY),
    "relu": (lambda x: x.relu(), AWAY_FROM_ZERO),
    "sigmoid": (lambda x: x.sigmoid(), ANY),
    "**2": (lambda x: x**2, ANY),
    "**3": (lambda x: x**3, ANY),
    "**-1.5": (lambda x: x**-1.5, POSITIVE),
    "**0.5": (lambda x: x**0.5, POSITIVE),
    "T": (lambda x: x.T, ANY),
}


def arrays(shape, elements):
    return hnp.arrays(np.float64, shape, elements=elements)


def central_differences(f, arrays_in, h=1e-6):
    """d f / d entry for every entry of every input, f a float function of NumPy arrays."""
    slopes = []
    for k, x in enumerate(arrays_in):
        slope = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            up = [a.copy() for a in arrays_in]
            down = [a.copy() for a in arrays_in]
            up[k][index] += h
            down[k][index] -= h
            slope[index] = (f(*up) - f(*down)) / (2 * h)
        slopes.append(slope)
    return slopes


def check_against_central_differences(op, inputs, rng_seed=0):
    """Backward from a random upstream gradient (a non-scalar backward) against the slopes
    of sum(upstream * op(inputs)), computed on plain Tensors without backward."""
    tensors = [Tensor(x, requires_grad=True) for x in inputs]
    out = op(*tensors)
    upstream = np.random.default_rng(rng_seed).uniform(-1, 1, out.shape)
    out.backward(upstream)
    want = central_differences(lambda *xs: float(np.sum(upstream * op(*map(Tensor, xs)).data)), inputs)
    for t, slope in zip(tensors, want):
        assert t.grad.shape == t.shape
        np.testing.assert_allclose(t.grad, slope, rtol=1e-5, atol=1e-6)


def torch_grads(op, inputs, upstream):
    leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in inputs]
    out = op(*leaves)
    out.backward(torch.tensor(upstream, dtype=torch.float64))
    return out.detach().numpy(), [leaf.grad.numpy() for leaf in leaves]


def check_against_torch(op, inputs, torch_op=None, rng_seed=0):
    tensors = [Tensor(x, requires_grad=True) for x in inputs]
    out = op(*tensors)
    upstream = np.random.default_rng(rng_seed).uniform(-1, 1, out.shape)
    out.backward(upstream)
    want_out, want_grads = torch_grads(torch_op or op, inputs, upstream)
    np.testing.assert_allclose(out.data, want_out, rtol=1e-12, atol=1e-12)
    assert out.shape == tuple(want_out.shape)
    for t, g in zip(tensors, want_grads):
        np.testing.assert_allclose(t.grad, g, rtol=1e-10, atol=1e-12)


# ---- (a) properties: random shapes, broadcasting, central differences ---------------------


@st.composite
def binary_cases(draw):
    name = draw(st.sampled_from(sorted(BINARY)))
    op, left, right = BINARY[name]
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3))
    a, b = draw(arrays(shapes.input_shapes[0], left)), draw(arrays(shapes.input_shapes[1], right))
    return name, op, a, b


@settings(max_examples=150, deadline=None)
@given(case=binary_cases())
def test_binary_ops_broadcast_and_match_central_differences(case):
    name, op, a, b = case
    assert op(Tensor(a), Tensor(b)).shape == np.broadcast_shapes(a.shape, b.shape), name
    check_against_central_differences(op, [a, b])


@st.composite
def unary_cases(draw):
    name = draw(st.sampled_from(sorted(UNARY)))
    op, elements = UNARY[name]
    return name, op, draw(arrays(hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), elements))


@settings(max_examples=150, deadline=None)
@given(case=unary_cases())
def test_unary_ops_match_central_differences(case):
    name, op, x = case
    check_against_central_differences(op, [x])


@st.composite
def reductions(draw):
    x = draw(arrays(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), ANY))
    axis = draw(st.none() | hnp.valid_tuple_axes(x.ndim, min_size=1) | st.integers(-x.ndim, x.ndim - 1))
    return x, draw(st.sampled_from(["sum", "mean"])), axis, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(case=reductions())
def test_sum_and_mean_over_any_axes(case):
    x, name, axis, keepdims = case
    op = lambda t: getattr(t, name)(axis=axis, keepdims=keepdims)
    assert op(Tensor(x)).shape == getattr(x, name)(axis=axis, keepdims=keepdims).shape
    check_against_central_differences(op, [x])
    check_against_torch(
        op,
        [x],
        lambda t: (
            getattr(t, name)(dim=axis, keepdim=keepdims)
            if axis is not None
            else getattr(t, name)().reshape((1,) * x.ndim if keepdims else ())
        ),
    )


@st.composite
def matmul_cases(draw):
    """Shapes NumPy's matmul accepts: 1-D operands, matrices, broadcast batch axes."""
    n, k, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3)).input_shapes
    a_shape = (k,) if draw(st.booleans()) else (*batch[0], n, k)
    b_shape = (k,) if draw(st.booleans()) else (*batch[1], k, m)
    return draw(arrays(a_shape, ANY)), draw(arrays(b_shape, ANY))


@settings(max_examples=150, deadline=None)
@given(case=matmul_cases())
def test_matmul_follows_numpy_and_matches_central_differences_and_torch(case):
    a, b = case
    out = Tensor(a) @ Tensor(b)
    assert out.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(out.data, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    check_against_central_differences(lambda x, y: x @ y, [a, b])
    check_against_torch(lambda x, y: x @ y, [a, b], torch.matmul)


@settings(max_examples=100, deadline=None)
@given(x=arrays(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), ANY), data=st.data())
def test_reshape_and_transpose_move_gradients_back(x, data):
    flat = Tensor(x).reshape(-1)
    assert flat.shape == (x.size,)
    axes = data.draw(st.permutations(range(x.ndim)))
    check_against_central_differences(lambda t: (t.reshape(x.size) * 2).reshape(x.shape), [x])
    check_against_central_differences(lambda t: t.transpose(*axes), [x])
    check_against_torch(lambda t: t.transpose(*axes), [x], lambda t: t.permute(*axes))
    check_against_torch(lambda t: t.reshape(-1) * 3, [x])


@settings(deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=1, min_dims=0, max_dims=4, max_side=3))
def test_unbroadcast_sums_back_to_the_input_shape(shapes):
    small, big = shapes.input_shapes[0], shapes.result_shape
    grad = np.arange(np.prod(big), dtype=np.float64).reshape(big)
    got = unbroadcast(grad, small)
    assert got.shape == small
    # each entry of the small array was copied to several places of the big one: sum them
    want = np.zeros(small)
    np.add.at(want.reshape(-1), np.broadcast_to(np.arange(want.size).reshape(small), big).reshape(-1), grad.reshape(-1))
    np.testing.assert_allclose(got, want)


# ---- (b) against PyTorch ------------------------------------------------------------------

SHAPE_PAIRS = [((3, 1), (1, 4)), ((2, 3), (3,)), ((2, 3), ()), ((), (2, 3)), ((4,), (2, 3, 4)), ((2, 3), (2, 3))]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_binary_ops_match_torch(name, shapes):
    op, left, right = BINARY[name]
    rng = np.random.default_rng(len(name) + len(shapes[0]))
    a = rng.uniform(-2, 2, shapes[0])
    b = rng.uniform(0.5, 2, shapes[1]) * rng.choice([-1, 1], shapes[1])
    check_against_torch(op, [a, b])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_match_torch(name):
    op, _ = UNARY[name]
    x = np.random.default_rng(1).uniform(0.2, 2, (3, 4)) * np.array([1, -1, 1, -1])
    if name in ("log", "**-1.5", "**0.5"):
        x = np.abs(x)
    check_against_torch(op, [x], (lambda t: t.mT) if name == "T" else op)


@pytest.mark.parametrize(
    "shapes",
    [
        ((3,), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3,)),
        ((2, 3), (3, 4)),
        ((5, 2, 3), (3, 4)),
        ((2, 3), (5, 3, 4)),
        ((5, 1, 2, 3), (4, 3, 2)),
    ],
    ids=str,
)
def test_matmul_matches_torch_batched_and_1d(shapes):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    check_against_torch(lambda x, y: x @ y, [a, b], torch.matmul)


def test_numbers_and_arrays_on_either_side_give_tensors_and_match_torch():
    x = np.array([[0.5, -1.0, 2.0]])
    arr, m = np.array([[1.0], [2.0]]), np.arange(6.0).reshape(2, 3)
    ops = {
        "2 + x": (lambda t: 2 + t, lambda t: 2 + t),
        "2 - x": (lambda t: 2 - t, lambda t: 2 - t),
        "2 * x": (lambda t: 2 * t, lambda t: 2 * t),
        "2 / x": (lambda t: 2 / t, lambda t: 2 / t),
        "arr - x": (lambda t: arr - t, lambda t: torch.tensor(arr) - t),
        "arr / x": (lambda t: arr / t, lambda t: torch.tensor(arr) / t),
        "arr * x": (lambda t: arr * t, lambda t: torch.tensor(arr) * t),
        "m @ x.T": (lambda t: m @ t.T, lambda t: torch.tensor(m) @ t.T),
        "x - arr": (lambda t: t - arr, lambda t: t - torch.tensor(arr)),
    }
    for name, (op, torch_op) in ops.items():
        assert isinstance(op(Tensor(x)), Tensor), name
        check_against_torch(op, [x], torch_op)


def test_a_composite_expression_matches_torch():
    rng = np.random.default_rng(3)
    w, x, b = rng.normal(size=(4, 3)), rng.normal(size=(5, 4)), rng.normal(size=(3,))

    def expression(w, x, b):
        h = (x @ w + b).tanh()
        return ((h * h.sigmoid() - h.exp() / 3) ** 2).mean(axis=0).sum() + (x.relu() + 1).log().mean()

    check_against_torch(expression, [w, x, b])


def test_mse_loss_matches_torch():
    rng = np.random.default_rng(4)
    pred, target = rng.normal(size=(6, 2)), rng.normal(size=(6, 2))
    check_against_torch(lambda p: mse_loss(p, target), [pred], lambda p: F.mse_loss(p, torch.tensor(target)))
    t = Tensor(pred, requires_grad=True)
    assert mse_loss(t, Tensor(target)).item() == pytest.approx(np.mean((pred - target) ** 2), rel=1e-12)


@pytest.mark.parametrize("scale", [1.0, 50.0, 1000.0])
def test_cross_entropy_matches_torch_and_is_stable(scale):
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(7, 4)) * scale
    logits[0] = [scale, -scale, 0.0, scale]
    labels = rng.integers(0, 4, size=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_against_torch(
            lambda z: cross_entropy(z, labels), [logits], lambda z: F.cross_entropy(z, torch.tensor(labels))
        )


def test_cross_entropy_accepts_label_tensors_and_lists():
    logits = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]])
    want = F.cross_entropy(torch.tensor(logits), torch.tensor([0, 1])).item()
    for labels in ([0, 1], np.array([0, 1]), Tensor([0, 1])):
        assert cross_entropy(Tensor(logits), labels).item() == pytest.approx(want, rel=1e-12)


def run_both_sgds(momentum, weight_decay, steps=5, lr=0.1):
    rng = np.random.default_rng(6)
    starts = [rng.normal(size=(3, 2)), rng.normal(size=(2,)), rng.normal(size=(4,))]
    grads = [[rng.normal(size=s.shape) for s in starts] for _ in range(steps)]
    ours = [Tensor(s, requires_grad=True) for s in starts]
    theirs = [torch.tensor(s, requires_grad=True) for s in starts]
    opt = SGD(ours, lr=lr, momentum=momentum, weight_decay=weight_decay)
    topt = torch.optim.SGD(theirs, lr=lr, momentum=momentum, weight_decay=weight_decay)
    for step, step_grads in enumerate(grads):
        opt.zero_grad()
        topt.zero_grad()
        for i, (p, tp, g) in enumerate(zip(ours, theirs, step_grads)):
            if i == 2 and step % 2 == 1:
                continue  # the third parameter gets no gradient on odd steps: both skip it
            p.grad, tp.grad = g.copy(), torch.tensor(g)
        opt.step()
        topt.step()
        for p, tp in zip(ours, theirs):
            np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("momentum, weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.01), (0.9, 0.05), (0.5, 0.1)])
def test_sgd_matches_torch_optim_sgd(momentum, weight_decay):
    run_both_sgds(momentum, weight_decay)


def test_training_steps_of_a_network_match_torch():
    """Three SGD steps of the same network, same weights, same data: every weight agrees."""
    np.random.seed(7)
    model = Sequential(Linear(4, 5), Tanh(), Linear(5, 3), ReLU(), Linear(3, 3))
    params = [torch.tensor(p.data, requires_grad=True) for p in model.parameters()]
    rng = np.random.default_rng(7)
    xs, ys = rng.normal(size=(6, 4)), rng.integers(0, 3, size=6)
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    topt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
    for _ in range(3):
        opt.zero_grad()
        cross_entropy(model(xs), ys).backward()
        opt.step()
        topt.zero_grad()
        w1, b1, w2, b2, w3, b3 = params
        h = F.relu(torch.tanh(torch.tensor(xs) @ w1 + b1) @ w2 + b2) @ w3 + b3
        F.cross_entropy(h, torch.tensor(ys)).backward()
        topt.step()
    for p, tp in zip(model.parameters(), params):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_linear_init_is_uniform_within_the_bound_from_numpys_global_state():
    np.random.seed(8)
    layer = Linear(100, 300)
    bound = 1 / np.sqrt(100)
    assert layer.weight.shape == (100, 300) and layer.bias.shape == (300,)
    assert layer.weight.requires_grad and layer.bias.requires_grad
    assert layer.parameters() == [layer.weight, layer.bias]
    for values in (layer.weight.data, layer.bias.data):
        assert np.all(np.abs(values) <= bound)
    w = layer.weight.data
    assert w.max() > 0.99 * bound and w.min() < -0.99 * bound  # the whole interval, not a part
    assert abs(w.mean()) < 0.01 and w.std() == pytest.approx(bound / np.sqrt(3), rel=0.02)
    np.random.seed(8)
    np.testing.assert_array_equal(np.random.uniform(-bound, bound, (100, 300)), w)  # weight first
    again = (np.random.seed(8), Linear(100, 300))[1]
    np.testing.assert_array_equal(again.bias.data, layer.bias.data)


# ---- conventions: accumulation, intermediates, no recursion, NumPy's numbers ---------------


def test_leaf_gradients_accumulate_and_intermediates_keep_none():
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, -1.0], requires_grad=True)
    c = a * b
    loss = c.sum()
    loss.backward()
    loss.backward()
    np.testing.assert_array_equal(a.grad, [6.0, -2.0])
    assert c.grad is None and loss.grad is None
    (a * 1.0).sum().backward()
    np.testing.assert_array_equal(a.grad, [7.0, -1.0])
    a.zero_grad()
    assert a.grad is None


def test_a_tensor_used_twice_gets_both_gradients():
    x = Tensor([1.5, -2.0], requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0, -3.0])


def test_inputs_that_do_not_require_grad_get_none_and_results_follow_their_inputs():
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0])
    assert (a + b).requires_grad and not (b * 2).requires_grad
    out = a * b
    assert out._creator is not None and out._creator.inputs[0] is a
    out.sum().backward()
    assert b.grad is None
    assert a._creator is None and b._creator is None


def test_backward_is_iterative_on_a_deep_graph():
    x = Tensor([0.5], requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0 + 0.0
    y.backward()
    np.testing.assert_array_equal(x.grad, [1.0])


def test_item_and_the_gradient_seed():
    x = Tensor([[3.0]], requires_grad=True)
    (x * 2).backward()
    assert x.grad.shape == (1, 1) and x.grad[0, 0] == 2.0
    assert Tensor(np.array([2.5])).item() == 2.5 and type(Tensor(1).item()) is float
    with pytest.raises(ValueError, match=r"\(2,\)"):
        Tensor([1.0, 2.0]).item()


def test_data_is_a_float64_copy():
    source = np.array([1, 2, 3])
    t = Tensor(source)
    assert t.data.dtype == np.float64 and t.shape == (3,) and t.grad is None and not t.requires_grad
    floats = np.array([1.0, 2.0])
    u = Tensor(floats)
    u.data += 1
    assert floats[0] == 1.0
    assert Tensor([[1, 2], [3, 4]]).shape == (2, 2) and Tensor(2.0).shape == ()


def test_division_by_zero_and_overflow_follow_numpy():
    with np.errstate(all="ignore"):
        got = (Tensor([1.0, -1.0, 0.0]) / Tensor([0.0, 0.0, 0.0])).data
        big = Tensor([1000.0]).exp().data
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    assert big[0] == np.inf


def test_sigmoid_is_stable_at_plus_and_minus_1000():
    x = Tensor([-1000.0, -40.0, 0.0, 40.0, 1000.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = x.sigmoid()
        s.sum().backward()
    want = torch.sigmoid(torch.tensor(x.data)).numpy()
    np.testing.assert_allclose(s.data, want, rtol=1e-12, atol=0)
    assert np.all(np.isfinite(x.grad))


def test_transpose_and_T_reverse_every_axis_as_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert Tensor(x).T.shape == (4, 3, 2) and Tensor(x).transpose().shape == (4, 3, 2)
    np.testing.assert_array_equal(Tensor(x).T.data, x.T)
    np.testing.assert_array_equal(Tensor(x).transpose(0, -1, 1).data, np.transpose(x, (0, 2, 1)))
    check_against_central_differences(
        lambda t: t.transpose(0, -1, 1), [np.random.default_rng(0).normal(size=(2, 3, 2))]
    )


# ---- the API's error cases ----------------------------------------------------------------


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/"])
def test_shapes_that_do_not_broadcast_name_both_shapes(symbol):
    op = BINARY[symbol][0]
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        op(Tensor(np.ones((2, 3))), Tensor(np.ones(4)))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2,\)"):
        op(Tensor(np.ones((2, 3))), np.ones(2))


@pytest.mark.parametrize("shapes", [((2, 3), (4, 2)), ((3,), (4,)), ((2, 2, 3), (3, 3, 2)), ((), (3,))], ids=str)
def test_matmul_of_shapes_that_do_not_fit_names_both_shapes(shapes):
    a, b = shapes
    with pytest.raises(ValueError) as error:
        Tensor(np.ones(a)) @ Tensor(np.ones(b))
    assert str(a) in str(error.value) and str(b) in str(error.value)


def test_log_of_a_non_positive_entry_is_a_value_error():
    for bad in ([1.0, 0.0], [2.0, -1.0]):
        with pytest.raises(ValueError, match="log"):
            Tensor(bad).log()


def test_backward_errors():
    with pytest.raises(RuntimeError, match="require"):
        (Tensor([1.0]) * 2).backward()
    x = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"one-element.*\(2,\)"):
        (x * 2).backward()
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        (x * 2).backward(np.ones(3))
    with pytest.raises(ValueError, match=r"\(2, 1\).*\(2,\)"):
        (x * 2).backward(np.ones((2, 1)))
    assert x.grad is None


def test_only_tensor_to_a_number_power():
    x = Tensor([2.0, 3.0], requires_grad=True)
    for bad in (lambda: x ** Tensor([2.0, 2.0]), lambda: 2**x, lambda: np.array([2.0]) ** x, lambda: x ** np.ones(2)):
        with pytest.raises(TypeError):
            bad()
    np.testing.assert_array_equal((x ** np.float64(2)).data, [4.0, 9.0])


def test_loss_shape_errors_name_both_shapes():
    pred = Tensor(np.zeros((4, 1)))
    with pytest.raises(ValueError, match=r"\(4, 1\).*\(4,\)"):
        mse_loss(pred, np.zeros(4))
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(5,\)"):
        cross_entropy(Tensor(np.zeros((4, 3))), np.zeros(5, dtype=int))
    for labels in ([0, 1, 3, 0], [0, -1, 1, 1], [0.5, 1, 1, 1]):
        with pytest.raises(ValueError, match="label"):
            cross_entropy(Tensor(np.zeros((4, 3))), np.array(labels))


# ---- mini-batches, fit, the digits --------------------------------------------------------


def test_batches_follow_the_seeded_permutation_and_keep_the_short_one():
    xs, ys = np.arange(20.0).reshape(10, 2), np.arange(10) * 10
    order = np.random.default_rng(3).permutation(10)
    got = list(batches(xs, ys, 4, seed=3))
    assert [len(yb) for _, yb in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([yb for _, yb in got]), order * 10)
    np.testing.assert_array_equal(np.concatenate([xb for xb, _ in got]), xs[order])
    assert [len(yb) for _, yb in batches(list(xs), list(ys), 20, seed=0)] == [10]


@pytest.mark.parametrize("size", [0, -1, 2.0, True, "4", None])
def test_batches_refuse_a_bad_batch_size(size):
    with pytest.raises(ValueError, match="batch_size"):
        batches(np.zeros((4, 2)), np.zeros(4), size, seed=0)


def test_batches_refuse_unequal_lengths():
    with pytest.raises(ValueError, match="5.*4"):
        batches(np.zeros((5, 2)), np.zeros(4), 2, seed=0)


def test_fit_weights_each_batch_by_its_size_and_reshuffles_each_epoch():
    np.random.seed(9)
    rng = np.random.default_rng(9)
    xs, ys = rng.normal(size=(10, 3)), rng.normal(size=(10, 1))
    model = Sequential(Linear(3, 4), Tanh(), Linear(4, 1))
    seen = []

    def loss_fn(pred, target):
        seen.append(target[:, 0].copy())
        return mse_loss(pred, target)

    history = fit(model, xs, ys, loss_fn, SGD(model.parameters(), lr=0.0), epochs=3, batch_size=4, seed=5)
    whole = np.mean((model(xs).data - ys) ** 2)
    assert len(history) == 3 and all(type(h) is float for h in history)
    np.testing.assert_allclose(history, [whole] * 3, rtol=1e-12)  # lr 0: each epoch's mean is the full mean
    for epoch in range(3):
        order = np.random.default_rng(5 + epoch).permutation(10)
        np.testing.assert_array_equal(np.concatenate(seen[3 * epoch : 3 * epoch + 3]), ys[order, 0])


def test_fit_calls_zero_grad_loss_backward_step_per_batch():
    calls = []

    class Recorder(SGD):
        def zero_grad(self):
            calls.append("zero_grad")
            super().zero_grad()

        def step(self):
            calls.append("step" if all(p.grad is not None for p in self.params) else "step without grads")
            super().step()

    np.random.seed(0)
    model = Linear(2, 1)
    xs, ys = np.ones((5, 2)), np.ones((5, 1))
    fit(model, xs, ys, mse_loss, Recorder(model.parameters(), lr=0.1), epochs=1, batch_size=2, seed=0)
    assert calls == ["zero_grad", "step"] * 3


def test_digits_are_the_uci_digits():
    xs, ys = digits()
    assert xs.shape == (1797, 64) and xs.dtype == np.float64 and ys.shape == (1797,) and ys.dtype == np.int64
    assert xs.min() == 0.0 and xs.max() == 1.0 and np.all(np.isin(xs * 16, np.arange(17)))
    np.testing.assert_array_equal(np.bincount(ys), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    np.testing.assert_array_equal(ys[:10], np.arange(10))


def test_the_lessons_milestone_is_reached_with_margin():
    xs, ys = digits()
    np.random.seed(0)
    model = Sequential(Linear(64, 64), ReLU(), Linear(64, 10))
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    history = fit(model, xs[:1500], ys[:1500], cross_entropy, opt, epochs=20, batch_size=32, seed=0)
    accuracy = np.mean(model(xs[1500:]).data.argmax(axis=1) == ys[1500:])
    assert history[-1] < history[0] / 10 and accuracy >= 0.88
