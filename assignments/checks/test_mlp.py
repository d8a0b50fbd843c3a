"""Part 3: networks with weights set by the check, losses, one SGD step, and real training."""

import math
import random

import pytest

from drawing import draw
from feedback import expect_close, fail
from student import located, module
from trusted import mlp_on_floats

datasets = module("datasets")
engine = module("engine")
nn = module("nn")

pytestmark = pytest.mark.mlp

ORDER_HINT = "parameters() order: layer by layer, neuron by neuron, the weights in input order, then the bias"


def seeded_weights(model, seed: int) -> list[float]:
    """Overwrite every parameter, in parameters() order, with seeded numbers in [-1, 1]."""
    rng = random.Random(seed)
    weights = [rng.uniform(-1, 1) for _ in model.parameters()]
    for p, w in zip(model.parameters(), weights):
        p.data = w
    return weights


def as_list(out):
    return out if isinstance(out, list) else [out]


def test_neuron_forward_is_activation_of_weighted_sum_plus_bias():
    n = nn.Neuron(2)
    n.w[0].data, n.w[1].data, n.b.data = -3.0, 1.0, 6.8813735870195432
    out = n([2.0, 0.0])
    expect_close(
        out.data,
        math.tanh(0.8813735870195432),
        what="Neuron(2) forward",
        inputs={"w": [-3.0, 1.0], "b": 6.8813735870195432, "x": [2.0, 0.0]},
        hint="tanh(w1*x1 + w2*x2 + b): start the sum from the bias",
        where=located(nn.Neuron.__call__),
    )


def test_neuron_parameters_are_weights_then_bias():
    n = nn.Neuron(3)
    got = n.parameters()
    if [id(p) for p in got] != [id(p) for p in n.w + [n.b]]:
        want = "[w0, w1, w2, b] (the Value objects themselves)"
        fail("Neuron(3).parameters()", {}, want, got, ORDER_HINT, located(nn.Neuron.parameters))


def test_layer_returns_a_list_or_a_single_value():
    x = [0.5, -1.0]
    many, one = nn.Layer(2, 3)(x), nn.Layer(2, 1)(x)
    where = located(nn.Layer.__call__)
    if not isinstance(many, list) or len(many) != 3:
        fail("Layer(2, 3)(x)", {"x": x}, "a list of 3 Values", many, "return one output per neuron", where)
    if not isinstance(one, engine.Value):
        hint = "a layer with one neuron returns that Value itself"
        fail("Layer(2, 1)(x)", {"x": x}, "a single Value", one, hint, where)


@pytest.mark.parametrize("sizes", [(3, 4, 4, 1), (2, 3), (4, 5, 2)])
def test_mlp_parameter_count(sizes):
    model = nn.MLP(sizes[0], list(sizes[1:]))
    want = sum((nin + 1) * nout for nin, nout in zip(sizes, sizes[1:]))
    got = len(model.parameters())
    if got != want:
        fail(
            f"len(MLP({sizes[0]}, {list(sizes[1:])}).parameters())",
            {},
            want,
            got,
            "each neuron has one weight per input plus a bias; collect every layer's parameters",
            located(nn.MLP.parameters),
        )


@pytest.mark.parametrize("activation", ["tanh", "relu", "linear"])
@pytest.mark.parametrize("sizes", [(3, 4, 4, 1), (2, 3, 2)])
def test_mlp_forward_with_set_weights(sizes, activation):
    model = nn.MLP(sizes[0], list(sizes[1:]), activation=activation)
    weights = seeded_weights(model, seed=len(sizes))
    x = [0.5, -1.5, 2.0][: sizes[0]]
    want = mlp_on_floats(sizes, weights, x, activation)
    got = [v.data for v in as_list(model(x))]
    if len(got) != len(want):
        hint = "the last layer decides the output count"
        fail(f"MLP{sizes} output", {"x": x}, f"{len(want)} outputs", got, hint, located(nn.MLP.__call__))
    for i, (g, w) in enumerate(zip(got, want)):
        expect_close(
            g,
            w,
            what=f"MLP({sizes[0]}, {list(sizes[1:])}, activation={activation!r}) output {i}",
            inputs={"x": x, "weights": "seeded, set through parameters()"},
            hint=ORDER_HINT + f"; every layer applies {activation}, the last one included",
            where=located(nn.MLP.__call__),
        )


LOSSES = {
    "mse_loss": (
        [0.5, -0.2, 0.9],
        [1.0, -1.0, 1.0],
        lambda p, t: (p - t) ** 2,
        lambda p, t: 2 * (p - t),
        "the mean over samples of (pred - target)**2",
    ),
    "hinge_loss": (
        [0.5, -2.0, 0.3],
        [1.0, -1.0, -1.0],
        lambda s, y: max(0.0, 1 - y * s),
        lambda s, y: -y if 1 - y * s > 0 else 0.0,
        "the mean over samples of relu(1 - label * score)",
    ),
    "binary_cross_entropy": (
        [0.8, 0.3, 0.6],
        [1.0, 0.0, 1.0],
        lambda p, t: -(t * math.log(p) + (1 - t) * math.log(1 - p)),
        lambda p, t: -(t / p) + (1 - t) / (1 - p),
        "the mean over samples of -(t*log(p) + (1 - t)*log(1 - p))",
    ),
}


@pytest.mark.parametrize("name", LOSSES)
def test_loss_value_and_gradient(name):
    preds, targets, per_sample, slope, hint = LOSSES[name]
    loss_fn = getattr(nn, name)
    values = [engine.Value(p) for p in preds]
    loss = loss_fn(values, targets)
    inputs = {"preds": preds, "targets": targets}
    n = len(preds)
    want, where = sum(map(per_sample, preds, targets)) / n, located(loss_fn)
    expect_close(loss.data, want, what=f"{name} value", inputs=inputs, hint=hint, where=where)
    loss.backward()
    for i, (v, p, t) in enumerate(zip(values, preds, targets)):
        expect_close(
            v.grad,
            slope(p, t) / n,
            what=f"{name}: gradient of preds[{i}]",
            inputs=inputs,
            hint="a mean divides every sample's gradient by the number of samples",
            where=where,
        )


def test_sgd_step_moves_against_the_gradient():
    params = [engine.Value(1.0), engine.Value(-2.0)]
    params[0].grad, params[1].grad = 0.5, -4.0
    nn.SGD(params, lr=0.1).step()
    for p, want in zip(params, (0.95, -1.6)):
        expect_close(
            p.data,
            want,
            what="SGD(lr=0.1).step()",
            inputs={"data": [1.0, -2.0], "grad": [0.5, -4.0]},
            hint="data -= lr * grad: step against the gradient, downhill",
            where=located(nn.SGD.step),
        )


def test_train_returns_each_steps_loss_and_the_loss_falls():
    xs, ys = datasets.four_samples()
    model = nn.MLP(3, [4, 4, 1])
    weights = seeded_weights(model, seed=1)
    first = sum((mlp_on_floats((3, 4, 4, 1), weights, x, "tanh")[0] - y) ** 2 for x, y in zip(xs, ys)) / len(xs)
    history = nn.train(model, xs, ys, loss_fn=nn.mse_loss, lr=0.05, steps=20)
    if not isinstance(history, list) or len(history) != 20 or not all(type(h) is float for h in history):
        fail(
            "train(..., steps=20)",
            {"data": "four_samples()"},
            "a list of 20 floats",
            history,
            "append float(loss.data) once per step",
            located(nn.train),
        )
    expect_close(
        history[0],
        first,
        what="train: loss of step 0 (before any update)",
        inputs={"weights": "seeded"},
        hint="record the loss of the forward pass that starts each step",
        where=located(nn.train),
    )
    if not history[-1] < history[0] / 2:
        fail(
            "train on four_samples(), 20 steps, lr 0.05",
            {},
            "the loss at least halves",
            history,
            "zero the gradients before backward(), then step against the gradient",
            located(nn.train),
        )


def test_train_zeroes_the_gradients_every_step():
    """With lr = 0 every step sees the same loss, so after 3 steps each gradient must be one
    step's gradient, not three steps' gradients added up."""
    xs, ys = datasets.four_samples()
    trained, fresh = nn.MLP(3, [4, 1]), nn.MLP(3, [4, 1])
    seeded_weights(trained, seed=2)
    seeded_weights(fresh, seed=2)
    nn.train(trained, xs, ys, loss_fn=nn.mse_loss, lr=0.0, steps=3)
    nn.mse_loss([fresh(x) for x in xs], ys).backward()
    for i, (got, want) in enumerate(zip(trained.parameters(), fresh.parameters())):
        expect_close(
            got.grad,
            want.grad,
            what=f"train(..., lr=0.0, steps=3): gradient of parameter {i} after training",
            inputs={"data": "four_samples()", "model": "MLP(3, [4, 1]), seeded weights"},
            hint="zero the gradients before every backward(): otherwise each step adds its gradient to the last",
            where=located(nn.train),
        )


def draw_milestone(model, xs, ys, history, folder) -> str:
    """Draw the milestone's pictures; where they are, or why there are none."""
    return draw(
        folder,
        lambda plots: [
            plots.loss_curve(history, folder / "two-moons-loss.png", "two moons: loss of each step"),
            plots.decision_boundary(
                model, xs, ys, folder / "two-moons-boundary.png", "two moons: what the model learned"
            ),
        ],
    )


# These 40 points are chosen so that a straight line gets at most 36 of them (90%): a model
# without a hidden layer fails, whatever its weights. The hidden layer's bend gets them all.
MILESTONE = {"samples": 40, "noise": 0.1, "seed": 44, "hidden": 8, "steps": 60, "lr": 3.0, "accuracy": 0.95}
BEST_LINE = 0.9  # the best accuracy any straight line gets on the milestone's points


def milestone_data():
    return datasets.two_moons(MILESTONE["samples"], noise=MILESTONE["noise"], seed=MILESTONE["seed"])


def test_milestone_two_moons_is_learned(pictures, record_property):
    """Two moons cannot be split by a line: this passes only when everything works together.
    Its pictures (the loss of each step, the boundary learned) are drawn either way."""
    xs, ys = milestone_data()
    model = nn.MLP(2, [MILESTONE["hidden"], 1])
    seeded_weights(model, seed=0)
    history = nn.train(model, xs, ys, loss_fn=nn.hinge_loss, lr=MILESTONE["lr"], steps=MILESTONE["steps"])
    record_property("pictures", ("two-moons milestone", draw_milestone(model, xs, ys, history, pictures)))
    correct = sum((model(x).data > 0) == (y > 0) for x, y in zip(xs, ys))
    accuracy = correct / len(xs)
    if accuracy < MILESTONE["accuracy"]:
        fail(
            f"MLP(2, [8, 1]) trained on two moons with hinge_loss for {MILESTONE['steps']} steps",
            {key: MILESTONE[key] for key in ("samples", "noise", "seed", "lr")},
            f"accuracy >= {MILESTONE['accuracy']:.0%} (no straight line gets more than {BEST_LINE:.0%} of these)",
            f"{accuracy:.1%} (losses {history[0]:.3f} -> {history[-1]:.3f})",
            "if the loss does not fall, check SGD.step's sign and that train zeroes gradients every step; "
            f"if it falls but stays near {BEST_LINE:.0%}, check that every layer applies tanh",
        )
