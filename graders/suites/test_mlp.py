"""Hidden suite, part 3: networks with every weight set explicitly, losses, SGD, training.

Networks are linear (`activation="linear"`) wherever the activation is not what a test is
about, so an engine missing tanh or relu loses those operators' own tests and nothing else.
"""

from graders.course_facts.kit import reference_module
from graders.grading.cases import Case, Program, cases

ORDER_HINT = "parameters() order: layer by layer, neuron by neuron, the weights in input order, then the bias"
SHAPES = [(3, [4, 4, 1]), (2, [3, 2]), (4, [5]), (1, [3, 3, 1])]
ACTIVATIONS = ["tanh", "relu", "linear"]


def parameter_count(nin: int, nouts: list[int]) -> int:
    sizes = [nin, *nouts]
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def model(p: Program, rng, nin: int, nouts: list[int], activation: str = "linear") -> list[float]:
    weights = [round(rng.uniform(-1, 1), 4) for _ in range(parameter_count(nin, nouts))]
    p.add("mlp", into="m", nin=nin, nouts=nouts, activation=activation)
    p.add("set_params", model="m", weights=weights)
    p.inputs["weights"] = f"{len(weights)} seeded numbers, set in parameters() order"
    return weights


def summed_output(p: Program, ref: str, n: int) -> str:
    names = [f"o{i}" for i in range(n)]
    p.add("unpack", outputs=ref, into=names)
    total = names[0]
    for name in names[1:]:
        total = p.apply("+", total, name)
    return total


def forward_cases(rng) -> list[Case]:
    made = []
    for nin, nouts in SHAPES:
        for activation in ACTIVATIONS:
            p = Program(
                shown=f"MLP({nin}, {nouts}, activation={activation!r})(x), then backward() on its summed outputs"
            )
            model(p, rng, nin, nouts, activation)
            x = [round(rng.uniform(-2, 2), 4) for _ in range(nin)]
            p.inputs["x"] = x
            p.add("call", into="y", model="m", x=x)
            p.read("datas", "y", "outputs")
            p.add("backward", root=summed_output(p, "y", nouts[-1]))
            p.read("param_grad", "m", "gradients of every parameter, in parameters() order")
            what = f"MLP({nin}, {nouts}, activation={activation!r}) forward and gradients"
            hint = ORDER_HINT + f"; every layer applies {activation}, the last one included"
            made.append(Case(f"mlp-{nin}-{'-'.join(map(str, nouts))}-{activation}", "mlp", what, hint, [p]))
    return made


def structure_cases(rng) -> list[Case]:
    made = []
    for nin, nouts in [(3, [4, 4, 1]), (5, [2, 7]), (2, [1])]:
        p = Program(shown=f"len(MLP({nin}, {nouts}).parameters())")
        p.add("mlp", into="m", nin=nin, nouts=nouts, activation="tanh")
        p.read("param_count", "m", "number of parameters")
        made.append(
            Case(
                f"count-{nin}-{'-'.join(map(str, nouts))}",
                "mlp",
                p.shown,
                "each neuron has one weight per input plus a bias",
                [p],
                points=0.5,
            )
        )
    for nout in (1, 3):
        p = Program(shown=f"MLP(2, [{nout}], activation='linear')(x)")
        p.add("mlp", into="m", nin=2, nouts=[nout], activation="linear")
        p.add("call", into="y", model="m", x=[0.5, -0.5])
        p.read("shape", "y", "what the call returns")
        hint = "a layer with one neuron returns that Value itself; otherwise a list"
        made.append(Case(f"returns-{nout}", "mlp", p.shown, hint, [p], points=0.5))
    return made


LOSSES = {
    "mse_loss": (
        "the mean over samples of (pred - target)**2",
        lambda rng: rng.choice([-1.0, 1.0]),
        lambda rng: round(rng.uniform(-1.5, 1.5), 4),
    ),
    "hinge_loss": (
        "the mean over samples of relu(1 - label * score)",
        lambda rng: rng.choice([-1.0, 1.0]),
        lambda rng: round(rng.uniform(-2, 2), 4),
    ),
    "binary_cross_entropy": (
        "the mean over samples of -(t*log(p) + (1 - t)*log(1 - p))",
        lambda rng: rng.choice([0.0, 1.0, 0.25]),
        lambda rng: round(rng.uniform(0.05, 0.95), 4),
    ),
}


def loss_program(name: str, preds: list[float], targets: list[float], shown: str) -> Program:
    """`name(preds, targets)` on Values holding `preds`, then backward(): the loss and each
    prediction's gradient."""
    p = Program(shown=f"{name}(preds, targets){shown}, then backward()")
    names = [p.value(x, f"p{i}") for i, x in enumerate(preds)]
    p.inputs["targets"] = targets
    p.add("loss", into="L", name=name, preds=names, targets=targets)
    p.read("data", "L", "loss")
    p.add("backward", root="L")
    for i, slot in enumerate(names):
        p.read("grad", slot, f"gradient of preds[{i}]")
    return p


def clipped_ends(rng) -> Program:
    """Binary cross-entropy where a probability is exactly 1 for a target of 1, or 0 for a
    target of 0 (lesson 3: a term whose factor is 0 is left out, so log(0) is never asked)."""
    _, target, pred = LOSSES["binary_cross_entropy"]
    preds, targets = [1.0, 0.0, pred(rng), pred(rng)], [1.0, 0.0, target(rng), target(rng)]
    p = loss_program("binary_cross_entropy", preds, targets, " with p = 1 where t = 1 and p = 0 where t = 0")
    p.hint = "leave out a term whose factor is 0: t = 1 needs no log(1 - p), t = 0 no log(p)"
    return p


def loss_cases(rng) -> list[Case]:
    made = []
    for name, (hint, target, pred) in LOSSES.items():
        targets = [target(rng) for _ in range(5)]
        programs = [loss_program(name, [pred(rng) for _ in range(5)], targets, "")]
        if name == "binary_cross_entropy":
            programs.append(clipped_ends(rng))
        made.append(
            Case(name, "mlp", name, hint + "; a mean divides each sample's gradient by n", programs, points=1.5)
        )
    return made


def sgd_cases(rng) -> list[Case]:
    p = Program(shown="one SGD(lr=0.1) step after backward() on MLP(2, [3, 1], activation='linear')(x)")
    model(p, rng, 2, [3, 1])
    p.add("call", into="y", model="m", x=[0.7, -1.1])
    p.add("backward", root="y")
    p.add("sgd_step", model="m", lr=0.1)
    p.read("param_data", "m", "every parameter after the step")
    return [Case("sgd-step", "mlp", "SGD.step()", "data -= lr * grad: step against the gradient", [p], points=1.5)]


def trajectory_cases(rng) -> list[Case]:
    xs, ys = reference_module("datasets").four_samples()
    # lr 0.01: three linear layers on inputs up to 3 grow without bound at 0.05 for some weights
    p = Program(shown="train(MLP(3, [4, 4, 1], activation='linear'), four_samples(), mse_loss, lr=0.01, steps=10)")
    model(p, rng, 3, [4, 4, 1])
    p.add("train", into="h", model="m", xs=xs, ys=ys, loss="mse_loss", lr=0.01, steps=10)
    p.read("floats", "h", "the loss of each step")
    p.read("param_data", "m", "every parameter after training")
    hint = "each step: forward, loss, zero the gradients, backward(), SGD step; record the loss before the update"
    return [Case("trajectory", "mlp", "a 10-step training trajectory", hint, [p], points=3.0)]


MILESTONE = {"train": 24, "test": 60, "hidden": 8, "steps": 20, "lr": 0.05}  # a linear net diverges at 0.3


def milestone_cases(rng) -> list[Case]:
    """Data and weights drawn from the grading seed, and the scores compared with the
    reference's own training run: a model that only memorises the training points (or any
    shortcut around backpropagation) cannot predict the reference's scores on new points."""
    datasets = reference_module("datasets")
    xs, ys = datasets.two_moons(MILESTONE["train"], noise=0.1, seed=rng.randrange(2**31))
    test_xs, _ = datasets.two_moons(MILESTONE["test"], noise=0.1, seed=rng.randrange(2**31))
    p = Program(
        shown=f"train MLP(2, [8, 1], activation='linear') on two moons with mse_loss for "
        f"{MILESTONE['steps']} steps, then score {MILESTONE['test']} new points"
    )
    model(p, rng, 2, [MILESTONE["hidden"], 1])
    p.add("train", into="h", model="m", xs=xs, ys=ys, loss="mse_loss", lr=MILESTONE["lr"], steps=MILESTONE["steps"])
    p.read("floats", "h", "the loss of each training step")
    for i, x in enumerate(test_xs):
        p.add("call", into=f"t{i}", model="m", x=x)
        p.read("data", f"t{i}", f"score of new point {i} after training")
    hint = "if the loss does not fall, check SGD.step's sign and that train zeroes gradients every step"
    return [Case("two-moons", "mlp", "the two-moons milestone", hint, [p], points=4.0, rtol=1e-5, atol=1e-7)]


@cases(forward_cases)
def test_mlp_forward_and_gradients(case, grade):
    grade(case)


@cases(structure_cases)
def test_mlp_structure(case, grade):
    grade(case)


@cases(loss_cases)
def test_loss(case, grade):
    grade(case)


@cases(sgd_cases)
def test_sgd_step(case, grade):
    grade(case)


@cases(trajectory_cases)
def test_training_trajectory(case, grade):
    grade(case)


@cases(milestone_cases)
def test_two_moons_milestone(case, grade):
    grade(case)


def descend_cases(rng) -> list[Case]:
    """An optional extension, worth a bonus point: `descend` on a random tilted bowl,
    a*(x - c)**2 + b*(y - d)**2 + e*x*y. The cross term makes each slope depend on both
    numbers, so a walk that mixes up x and y shows; lr 0.1 keeps every such bowl stable."""
    a, b = round(rng.uniform(0.5, 2), 3), round(rng.uniform(0.5, 2), 3)
    c, d, e = round(rng.uniform(-3, 3), 3), round(rng.uniform(-3, 3), 3), round(rng.uniform(-0.5, 0.5), 3)
    start, lr, steps = [round(rng.uniform(-2, 2), 3), round(rng.uniform(-2, 2), 3)], 0.1, 6
    f = Program()  # a function of the Values x and y, run by the submission's descend
    bowl_x = f.apply("*", a, f.apply("**", f.apply("-", "x", c), 2))
    bowl_y = f.apply("*", b, f.apply("**", f.apply("-", "y", d), 2))
    f.apply("+", f.apply("+", bowl_x, bowl_y), f.apply("*", e, f.apply("*", "x", "y")))
    shown = f"f(x, y) = {a}*(x {signed(-c)})**2 + {b}*(y {signed(-d)})**2 {signed(e)}*x*y"
    p = Program(inputs={"start": start, "lr": lr, "steps": steps}, shown=f"descend(f, start, lr, steps) for {shown}")
    p.add("descend", into="path", body=f.steps, inputs=["x", "y"], start=start, lr=lr, steps=steps)
    p.read("points", "path", "every point visited, the start first")
    hint = (
        "each step: new Values at the current point, f(x, y).backward(), then x -= lr * x.grad and "
        "y -= lr * y.grad; return steps + 1 (x, y) pairs, the start first"
    )
    return [Case("descend", "mlp", "descend (bonus)", hint, [p], bonus=True)]


def signed(x: float) -> str:
    """`+ 2.5` or `- 2.5`, so a formula never reads `x - -2.5`."""
    return f"{'-' if x < 0 else '+'} {abs(x)}"


def count_nodes_cases(rng) -> list[Case]:
    """An optional extension, worth a bonus point: `count_nodes` on a random graph with reused
    nodes and nodes beside it that do not feed its root, then on a chain deeper than the
    child's recursion limit (twice its 5,000). Built from + and * of two Values only, each of
    which makes exactly one node in any engine (a number operand may or may not get a node
    of its own, so the count would depend on the engine)."""
    p = Program()
    pool = [p.value(round(rng.uniform(-1, 1), 3), name) for name in "abc"]
    stray = p.value(0.5, "d")
    lines = []
    for _ in range(12):
        op, other = rng.choice(["+", "*"]), rng.choice(pool)
        pool.append(p.apply(op, pool[-1], other))
        lines.append(f"{pool[-1]} = {pool[-2]} {op} {other}")
    for _ in range(3):  # made from the graph, but they do not feed the root
        other = rng.choice(pool)
        lines.append(f"{p.apply('*', other, stray)} = {other} * d")
    p.add("count_nodes", into="count", root=pool[-1])
    p.shown = f"{'; '.join(lines)}; count_nodes({pool[-1]})"
    p.read("answer", "count", f"the number of nodes under {pool[-1]}")
    deep = Program(shown="y = x + x, then y = y + x again and again, 10,000 additions deep; count_nodes(y)")
    deep.value(1.5, "x")
    deep.add("chain", into="y", start="x", op="+", operand="x", times=10_000)
    deep.add("count_nodes", into="count", root="y")
    deep.read("answer", "count", "the number of nodes under y")
    hint = (
        "keep a set of the nodes seen, so a reused node counts once and nodes that do not feed the root "
        "never do; walk with a loop and an explicit stack, not recursion"
    )
    return [Case("count-nodes", "mlp", "count_nodes (bonus)", hint, [p, deep], bonus=True)]


@cases(descend_cases)
def test_descend(case, grade):
    grade(case)


@cases(count_nodes_cases)
def test_count_nodes(case, grade):
    grade(case)
