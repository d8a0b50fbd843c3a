"""Part 4's steps: tensors, layers, losses, the optimizer and training, on the student's
`minigrad.tensor` and `minigrad.layers`.

An array travels in a program as {"array": nested lists}; a string names a slot, as in every
step. NumPy is imported on the first step that needs it, so the child of a grading without
part 4 never loads it.

The rule for every step and read kind here: the child reports observations, the parent
decides. A read sends back what the student's code made (arrays, the parameters a training
left), never a verdict or a digest of one: no accuracy, no gradient gap, no "within bounds",
no time (the parent counts a measured program's CPU itself). The suite
(graders/suites/test_tensor.py) compares what comes back with the reference, or checks it
itself with data this folder never holds (the digits' test images and labels), after checking
its shape and types. A forging `minigrad/__init__.py` can answer any program, but then it must
compute what a working engine would: a made-up answer fails there.
"""

import operator
import os
import warnings

from steps import Run, array, error_type, reader, step

DIGITS = "digits-training.csv"  # the training rows alone, handed to the child by the parent, beside runner.py
BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "@": operator.matmul,
    "**": operator.pow,
}
METHODS = {"exp", "log", "tanh", "relu", "sigmoid", "sum", "mean", "reshape", "transpose"}


def _numpy():
    import numpy

    return numpy


def operand(run, arg):
    """A slot's object, an array from {"array": ...}, or a plain number."""
    if isinstance(arg, str):
        return run.slots[arg]
    if isinstance(arg, dict) and "array" in arg:
        return _numpy().array(arg["array"], dtype=float)
    return arg


def operate(run, op, args, options):
    values = [operand(run, a) for a in args]
    if op in BINARY:  # a number or array on the left runs the tensor's reverse operator
        return BINARY[op](*values)
    if op == "neg":
        return -values[0]
    if op == "reshape":  # reshape(*shape), as NumPy's
        return values[0].reshape(*options["shape"])
    if op == "transpose":  # transpose(*axes): no axes reverses them all, as NumPy's .T
        return values[0].transpose(*options.get("axes", ()))
    if isinstance(options.get("axis"), list):  # a tuple of axes, which JSON carries as a list
        options = {**options, "axis": tuple(options["axis"])}
    if op in METHODS:
        return getattr(values[0], op)(*values[1:], **options)
    raise ValueError(f"unknown tensor operation {op}")


@step
def tensor(run, *, into, data, requires_grad=False):
    """into = Tensor(data, requires_grad=requires_grad)."""
    run.slots[into] = run.module("tensor").Tensor(operand(run, data), requires_grad=requires_grad)


@step
def tensor_op(run, *, into, op, args, options=None):
    """into = the operation `op` on the operands (`a + b`, `a @ b`, `a.sum(axis=0)`, `a.transpose()`)."""
    run.slots[into] = operate(run, op, args, options or {})


@step
def runtime_warnings(run, *, action):
    """Run the step `action` and send back the RuntimeWarnings it gave (NumPy's overflow,
    invalid value, divide by zero), as "RuntimeWarning: message" in the order given, [] for none."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        run.perform(action)
    run.out.append([f"RuntimeWarning: {w.message}" for w in caught if issubclass(w.category, RuntimeWarning)])


@step
def tensor_backward(run, *, of, grad=None):
    """of.backward(grad), or of.backward() when no gradient is given."""
    target = run.slots[of]
    target.backward() if grad is None else target.backward(operand(run, grad))


@step
def zero_grad_of(run, *, of):
    """of.zero_grad(): a tensor's, or a module's for all its parameters."""
    run.slots[of].zero_grad()


@step
def central_differences(run, *, into, inputs, output, steps, h=1e-6):
    """into = d(output)/d(input) for each input, by central differences: the `steps` that made
    the one-element `output` rerun on copies of the inputs with one entry moved by +-h."""
    np = _numpy()
    tensor_class = run.module("tensor").Tensor
    gradients = []
    for name in inputs:
        base = np.array(run.slots[name].data, dtype=float)
        gradient = np.zeros_like(base)
        for index in np.ndindex(base.shape):
            sides = []
            for sign in (1, -1):
                moved = base.copy()
                moved[index] += sign * h
                inner = Run(run.folder, {**run.slots, name: tensor_class(moved)})
                for program_step in steps:
                    inner.perform(program_step)
                sides.append(float(np.asarray(inner.slots[output].data).reshape(-1)[0]))
            gradient[index] = (sides[0] - sides[1]) / (2 * h)
        gradients.append((name, gradient))
    run.slots[into] = gradients


@step
def parameter(run, *, into, model, index):
    """into = model.parameters()[index]."""
    run.slots[into] = run.slots[model].parameters()[index]


@step
def unbroadcast(run, *, into, grad, shape):
    """into = unbroadcast(grad, shape)."""
    run.slots[into] = run.module("tensor").unbroadcast(operand(run, grad), tuple(shape))


@step
def layer(run, *, into, kind, args=()):
    """into = minigrad.layers.<kind>(*args): Linear(nin, nout), ReLU(), Tanh()."""
    run.slots[into] = getattr(run.module("layers"), kind)(*args)


@step
def sequential(run, *, into, modules):
    """into = Sequential(*modules), the modules named by their slots."""
    run.slots[into] = run.module("layers").Sequential(*(run.slots[m] for m in modules))


@step
def set_parameters(run, *, model, values):
    """Overwrite each parameter's data, in parameters() order."""
    np = _numpy()
    for parameter, value in zip(run.slots[model].parameters(), values):
        parameter.data = np.array(value, dtype=float)


@step
def set_gradients(run, *, model, values):
    """Give each parameter a gradient (None leaves it without one), in parameters() order."""
    np = _numpy()
    for parameter, value in zip(run.slots[model].parameters(), values):
        parameter.grad = None if value is None else np.array(value, dtype=float)


@step
def forward(run, *, into, model, x):
    """into = model(x)."""
    run.slots[into] = run.slots[model](operand(run, x))


@step
def tensor_loss(run, *, into, loss, pred, target):
    """into = minigrad.layers.<loss>(pred, target)."""
    run.slots[into] = getattr(run.module("layers"), loss)(run.slots[pred], operand(run, target))


@step
def optimizer(run, *, into, model, lr, momentum=0.0, weight_decay=0.0):
    """into = SGD(model.parameters(), lr, momentum=momentum, weight_decay=weight_decay)."""
    sgd = run.module("layers").SGD
    run.slots[into] = sgd(run.slots[model].parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)


@step
def optimizer_step(run, *, optimizer):
    """optimizer.step()."""
    run.slots[optimizer].step()


@step
def batch_order(run, *, into, n, batch_size, seed):
    """into = each batch of batches(xs, ys, batch_size, seed) as the sample numbers its xs and
    its ys hold, [[x numbers], [y numbers]], where sample i is [i, -i] with label i: which
    samples went where, and whether xs and ys stayed paired, for the parent to compare."""
    np = _numpy()
    xs = np.stack([np.arange(n), -np.arange(n)], axis=1).astype(float)
    run.slots[into] = [
        [[int(x) for x in np.asarray(xb)[:, 0]], [int(y) for y in yb]]
        for xb, yb in run.module("layers").batches(xs, np.arange(n), batch_size, seed)
    ]


@step
def batches_raise(run, *, n_xs, n_ys, batch_size):
    """Append the type of the error batches() raises on bad input, or "no error"."""
    np = _numpy()
    run.out.append(
        error_type(lambda: list(run.module("layers").batches(np.zeros((n_xs, 2)), np.zeros(n_ys), batch_size, 0)))
    )


@step
def fit(run, *, into, model, xs, ys, loss, lr, momentum, weight_decay, epochs, batch_size, seed):
    """into = fit(model, xs, ys, loss, SGD(...), epochs, batch_size, seed): the epoch losses."""
    layers = run.module("layers")
    sgd = layers.SGD(run.slots[model].parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    data, labels = operand(run, xs), operand(run, ys)
    if loss == "cross_entropy":
        labels = labels.astype(int)
    run.slots[into] = layers.fit(run.slots[model], data, labels, getattr(layers, loss), sgd, epochs, batch_size, seed)


@step
def digits(run, *, into, rows):
    """The first `rows` 8x8 digits (pixels / 16) in slot `<into>_xs` and their labels in
    `<into>_ys`: the training set. The test images never reach the child."""
    np = _numpy()
    with open(os.path.join(os.path.dirname(run.folder), DIGITS)) as f:
        table = np.loadtxt(f, delimiter=",", max_rows=rows)
    run.slots[f"{into}_xs"], run.slots[f"{into}_ys"] = table[:, :-1] / 16.0, table[:, -1].astype(int)


@step
def numpy_seed(run, *, seed):
    """numpy.random.seed(seed): a layer that draws with NumPy's global generator draws the same
    numbers in the reference and in the submission."""
    _numpy().random.seed(seed)


@reader
def tensor_data(run, obj):
    """A tensor's data (or an array itself), as an array answer."""
    return array(getattr(obj, "data", obj))


@reader
def tensor_grad(run, obj):
    """A tensor's gradient: an array answer, or the words "None" where it has none."""
    return "None" if obj.grad is None else array(obj.grad)


@reader
def parameter_arrays(run, obj):
    """Every parameter's data, in parameters() order."""
    return [array(p.data) for p in obj.parameters()]


@reader
def requires_grad(run, obj):
    """Each parameter's requires_grad, "True" or "False" (anything else by its type name), in
    parameters() order."""
    flags = [p.requires_grad for p in obj.parameters()]
    return [str(flag) if isinstance(flag, bool) else type(flag).__name__ for flag in flags]


@reader
def numeric_gradients(run, obj):
    """The gradients of a central_differences slot, one array per input, in its order."""
    return [array(gradient) for _, gradient in obj]


@reader
def labels(run, obj):
    """Plain data a step already made of whole numbers and words (batch_order's)."""
    return obj
