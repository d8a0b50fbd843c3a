"""The steps and read kinds of parts 1-3 and the checkpoint: Values and their operators,
backpropagation, networks, losses, training, and the quiz's answers (see steps.py)."""

import ast
import operator

from steps import Run, error_type, number, reader, step

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}
UNARY = {
    "neg": operator.neg,
    "exp": "exp",
    "log": "log",
    "tanh": "tanh",
    "relu": "relu",
    "sigmoid": "sigmoid",
    "sin": "sin",
    "cos": "cos",
    "sqrt": "sqrt",
}
MAX_NODES = 1_000_000


def operate(op: str, operands: list) -> object:
    """`a op b`, `-a`, `a.op()` or `square` on the operands, as the submission's Value computes it."""
    if op in BINARY:
        return BINARY[op](operands[0], operands[1])
    if op == "neg":
        return -operands[0]
    if op == "square":
        return square(operands[0])
    return getattr(operands[0], UNARY[op])()


def square(x: object) -> object:
    """`x ** 2`, as the lessons write a square; `x * x` for an engine without `**` (no operator,
    or its stub), so that part 2's worked example needs nothing of part 1 but `+` and `*`."""
    try:
        return x**2
    except (TypeError, NotImplementedError):
        return x * x


class NotIterable(Exception):
    """The grader could not iterate a name of the API: reported by its name, as an observation."""


def inputs_of(node: object) -> list:
    """`node._prev` as a list; one that cannot be iterated (a method, a None) is `NotIterable`."""
    prev = node._prev
    try:
        return list(prev)
    except TypeError:
        raise NotIterable(f"{type(node).__name__}._prev") from None


def backward_in_our_order(root: object) -> None:
    """Run `_backward` on the graph under root in our own reverse topological order, so a
    local derivative is graded without the submission's backward()."""
    found, seen, stack = [], {id(root)}, [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            found.append(node)
            continue
        stack.append((node, True))
        for parent in inputs_of(node):
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append((parent, False))
        if len(seen) > MAX_NODES:
            raise RuntimeError("graph too large")
    for node in reversed(found):
        node._backward()


@step
def value(run: Run, *, into: str, x: float) -> None:
    """A new Value holding x."""
    run.slots[into] = run.module("engine").Value(x)


@step
def apply(run: Run, *, into: str, op: str, operands: list) -> None:
    """The result of an operator (`+`, `-`, `*`, `/`, `**`, `neg`, `square`, or a method such as
    `tanh`) on the operands (slot names or numbers)."""
    run.slots[into] = operate(op, run.resolve(operands))


@step
def chain(run: Run, *, into: str, start: str, op: str, operand: float | str, times: int) -> None:
    """((start op operand) op operand) ... `times` times: deep graphs without huge programs.
    The operand is a number, or a slot name: then every link shares that one Value, and the
    graph is as deep with half the nodes."""
    node, operand = run.slots[start], run.resolve(operand)
    for _ in range(times):
        node = operate(op, [node, operand])
    run.slots[into] = node


@step
def error(run: Run, *, op: str, operands: list) -> None:
    """Send back the type name of the error the operator raises on bad input, or "no error"."""
    run.out.append(error_type(lambda: operate(op, run.resolve(operands))))


@step
def error_or_gradients(run: Run, *, op: str, operands: list) -> None:
    """Bad input that an extension may accept: send back the error's type name, or the result's
    data followed by each operand's gradient after a local backward pass."""
    resolved = run.resolve(operands)
    try:
        result = operate(op, resolved)
    except Exception as exc:  # noqa: BLE001 - the type of error is the answer
        run.out.append(type(exc).__name__)
    else:
        result.grad = 1.0
        backward_in_our_order(result)
        run.out.append([number(result.data), *(number(v.grad) for v in resolved)])


@step
def unpack(run: Run, *, outputs: str, into: list[str]) -> None:
    """Name each element of a list of outputs (a single output is a list of one)."""
    found = run.slots[outputs]
    for key, item in zip(into, found if isinstance(found, list) else [found]):
        run.slots[key] = item


@step
def set_grad(run: Run, *, ref: str, grad: float) -> None:
    """Set a node's gradient."""
    run.slots[ref].grad = grad


@step
def local_backward(run: Run, *, root: str) -> None:
    """Run each `_backward` under root in the grader's own order, not through backward()."""
    backward_in_our_order(run.slots[root])


@step
def backward(run: Run, *, root: str) -> None:
    """Call the submission's root.backward()."""
    run.slots[root].backward()


@step
def topo(run: Run, *, into: str, root: str) -> None:
    """The submission's topological_order(root), as a list."""
    run.slots[into] = list(run.module("engine").topological_order(run.slots[root]))


@step
def zero_grad(run: Run, *, values: list) -> None:
    """Call the submission's zero_grad on the values named."""
    run.module("engine").zero_grad(run.resolve(values))


@step
def numerical_grad(run: Run, *, into: str, body: list, inputs: list[str], at: list[float], h: float) -> None:
    """The submission's numerical_grad of the function the steps of `body` compute from the
    Values named `inputs`, at the point `at`."""
    run.slots[into] = run.module("gradcheck").numerical_grad(run.function(body, inputs), at, h=h)


@step
def descend(run: Run, *, into: str, body: list, inputs: list[str], start: list[float], lr: float, steps: int) -> None:
    """The submission's descend (an extension) on the function of two Values that `body` computes."""
    walk = run.module("warmup").descend
    run.slots[into] = walk(run.function(body, inputs), tuple(start), lr=lr, steps=steps)


@step
def count_nodes(run: Run, *, into: str, root: str) -> None:
    """The submission's count_nodes(root) (an extension)."""
    run.slots[into] = run.module("memory").count_nodes(run.slots[root])


@step
def mlp(run: Run, *, into: str, nin: int, nouts: list[int], activation: str) -> None:
    """A new MLP(nin, nouts, activation=activation)."""
    run.slots[into] = run.module("nn").MLP(nin, nouts, activation=activation)


@step
def set_params(run: Run, *, model: str, weights: list[float]) -> None:
    """Set a model's parameters, in parameters() order."""
    for p, w in zip(run.slots[model].parameters(), weights):
        p.data = w


@step
def call(run: Run, *, into: str, model: str, x: list) -> None:
    """model(x), x a list of numbers or slot names."""
    run.slots[into] = run.slots[model](run.resolve(x))


@step
def loss(run: Run, *, into: str, name: str, preds: list, targets: list[float]) -> None:
    """The submission's loss function `name` of predictions (slot names) and plain targets."""
    run.slots[into] = getattr(run.module("nn"), name)(run.resolve(preds), targets)


@step
def sgd_step(run: Run, *, model: str, lr: float) -> None:
    """One SGD(model.parameters(), lr=lr).step()."""
    run.module("nn").SGD(run.slots[model].parameters(), lr=lr).step()


@step
def train(run: Run, *, into: str, model: str, xs: list, ys: list, loss: str, lr: float, steps: int) -> None:
    """The submission's train(model, xs, ys, its loss function `loss`, lr, steps): the losses it returns."""
    nn = run.module("nn")
    run.slots[into] = nn.train(run.slots[model], xs, ys, getattr(nn, loss), lr=lr, steps=steps)


@step
def answers(run: Run, *, names: list[str]) -> None:
    """The checkpoint's answers by name ("not answered" for a question left out)."""
    namespace = load_answers(run.folder)
    for key in names:
        run.slots[key] = namespace.get(key, "not answered")


def load_answers(folder: str) -> dict:
    """The checkpoint answers, one top-level statement at a time (stubs raise at import)."""
    with open(f"{folder}/minigrad/checkpoint.py", encoding="utf-8") as f:
        tree = ast.parse(f.read())
    namespace = {}
    for statement in tree.body:
        try:
            exec(compile(ast.Module(body=[statement], type_ignores=[]), "checkpoint.py", "exec"), namespace)
        except Exception:  # noqa: BLE001 - an unanswered question loses only its own answer
            continue
    return namespace


@reader
def data(run: Run, obj: object) -> object:
    """A node's number."""
    return number(obj.data)


@reader
def grad(run: Run, obj: object) -> object:
    """A node's gradient."""
    return number(obj.grad)


@reader
def datas(run: Run, obj: object) -> list:
    """The numbers of a list of nodes (a single node is a list of one)."""
    return [number(v.data) for v in (obj if isinstance(obj, list) else [obj])]


@reader
def shape(run: Run, obj: object) -> str:
    """What a call returned: "Value", "list of n" or "other"."""
    return "Value" if type(obj).__name__ == "Value" else f"list of {len(obj)}" if isinstance(obj, list) else "other"


@reader
def param_data(run: Run, obj: object) -> list:
    """Every parameter's number, in parameters() order."""
    return [number(p.data) for p in obj.parameters()]


@reader
def param_grad(run: Run, obj: object) -> list:
    """Every parameter's gradient, in parameters() order."""
    return [number(p.grad) for p in obj.parameters()]


@reader
def param_count(run: Run, obj: object) -> int:
    """How many parameters a model has."""
    return len(obj.parameters())


@reader
def points(run: Run, obj: object) -> object:
    """A path of (x, y) pairs."""
    if not isinstance(obj, (list, tuple)):
        return number(obj)
    return [[number(c) for c in p] if isinstance(p, (list, tuple)) else number(p) for p in obj]


@reader
def floats(run: Run, obj: object) -> list:
    """A list of Python floats (a Value where a float belongs is reported by its type)."""
    return [number(x) if type(x) is float else {"not_a_number": type(x).__name__} for x in obj]


def slot_names(run: Run) -> dict[int, str]:
    """The name of the slot holding each node the program made, by the node's id()."""
    return {id(v): k for k, v in run.slots.items() if not isinstance(v, (list, int, float, str))}


@reader
def order(run: Run, obj: object) -> list:
    """A list of nodes as the names of their slots ("?" for a node the program never named)."""
    names = slot_names(run)
    return [names.get(id(v), "?") for v in obj]


@reader
def reachable(run: Run, obj: object) -> list:
    """The names of the nodes a node reaches through `_prev`, sorted. Nodes the program never
    named (a wrapped constant, the -1 of a subtraction) are left out: engines differ in those."""
    seen, stack = {id(obj)}, [obj]
    while stack:
        for parent in inputs_of(stack.pop()):
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
        if len(seen) > MAX_NODES:
            raise RuntimeError("graph too large")
    names = slot_names(run)
    return sorted(names[node] for node in seen - {id(obj)} if node in names)


@reader
def answer(run: Run, obj: object) -> object:
    """A quiz answer: a string, or a number."""
    return obj if isinstance(obj, str) else number(obj)
