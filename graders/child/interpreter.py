"""Turn a grading program (plain data) into calls on the student's minigrad, and read results.

A program is a list of steps; each step is a list [name, *args]. Slots hold the objects
made so far. `read` steps append plain numbers or strings to the output; nothing else is
sent back. The parent runs the same program on the reference and compares the outputs.
"""

import ast
import importlib
import math
import operator
import os
import traceback
import types

import order

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}
UNARY = {"neg": operator.neg, "exp": "exp", "log": "log", "tanh": "tanh", "relu": "relu", "sigmoid": "sigmoid",
         "sin": "sin", "cos": "cos", "sqrt": "sqrt"}  # fmt: skip
MAX_NODES = 1_000_000


class Missing(Exception):
    """A file of the package that the grader imports is not in the submission."""


def module(name):
    if name != "checkpoint":  # the quiz stands alone; every other module builds Values
        _engine_first()
    try:
        return importlib.import_module(f"minigrad.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"minigrad.{name}":  # the file itself, not something it imports
            raise Missing(f"minigrad/{name}.py") from None
        raise


def _engine_first():
    """Import the engine before anything can hash a Value, and number its hashes (order.py)."""
    try:
        engine = importlib.import_module("minigrad.engine")
    except Exception:  # noqa: BLE001 - said by the step that needs the engine, with its reason
        return
    order.stabilize(getattr(engine, "Value", None))


def resolve(slots, arg):
    """A string names a slot, a list is resolved element-wise, a number stays a number."""
    if isinstance(arg, str):
        return slots[arg]
    if isinstance(arg, list):
        return [resolve(slots, a) for a in arg]
    if isinstance(arg, dict):
        return arg["literal"]
    return arg


def apply(op, args):
    if op in BINARY:
        return BINARY[op](args[0], args[1])
    if op == "neg":
        return -args[0]
    return getattr(args[0], UNARY[op])()


def local_backward(root):
    """Run `_backward` on the graph under root in our own reverse topological order."""
    order, seen, stack = [], {id(root)}, [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        stack.append((node, True))
        for parent in list(node._prev):
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append((parent, False))
        if len(seen) > MAX_NODES:
            raise RuntimeError("graph too large")
    for node in reversed(order):
        node._backward()


def number(x):
    """Only real numbers leave the child; anything else is reported by its type name."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return {"not_a_number": type(x).__name__}
    if not math.isfinite(x):
        return {"not_finite": repr(x)}
    return x


def read(slots, kind, ref):
    obj = slots[ref]
    if kind == "data":
        return number(obj.data)
    if kind == "grad":
        return number(obj.grad)
    if kind == "datas":
        return [number(v.data) for v in (obj if isinstance(obj, list) else [obj])]
    if kind == "shape":
        return "Value" if type(obj).__name__ == "Value" else f"list of {len(obj)}" if isinstance(obj, list) else "other"
    if kind == "param_data":
        return [number(p.data) for p in obj.parameters()]
    if kind == "param_grad":
        return [number(p.grad) for p in obj.parameters()]
    if kind == "param_count":
        return len(obj.parameters())
    if kind == "points":  # a path of (x, y) pairs
        if not isinstance(obj, (list, tuple)):
            return number(obj)
        return [[number(c) for c in p] if isinstance(p, (list, tuple)) else number(p) for p in obj]
    if kind == "floats":
        return [number(x) if type(x) is float else {"not_a_number": type(x).__name__} for x in obj]
    if kind == "order":
        names = {id(v): k for k, v in slots.items() if not isinstance(v, (list, int, float, str))}
        return [names.get(id(v), "?") for v in obj]
    if kind == "answer":
        return obj if isinstance(obj, str) else number(obj)
    raise ValueError(f"unknown read {kind}")


def load_answers(folder):
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


def import_status(name, folder):
    """ "imports", or the error with the file and line it was raised at. The quiz is only
    compiled: its unanswered stubs raise at import, and its answers are read one by one."""
    try:
        if name == "checkpoint":
            with open(f"{folder}/minigrad/checkpoint.py", encoding="utf-8") as f:
                compile(f.read(), "checkpoint.py", "exec")
        else:
            importlib.import_module("minigrad" if name == "__init__" else f"minigrad.{name}")
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: whatever stops the import is the answer
        if isinstance(exc, SyntaxError) and exc.filename:
            return f"{type(exc).__name__}: {exc.msg} ({exc.filename.rsplit('/', 1)[-1]}, line {exc.lineno})"
        found = None
        for frame, line in traceback.walk_tb(exc.__traceback__):
            if frame.f_code.co_filename.startswith(folder):
                found = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}, line {line}"
        return f"{type(exc).__name__}: {str(exc)[:200]}" + (f" ({found})" if found else "")
    return "imports"


def step(slots, out, folder, name, *args):
    if name == "import":
        out.append(import_status(args[0], folder))
    elif name == "value":
        slots[args[0]] = module("engine").Value(args[1])
    elif name == "apply":
        slots[args[0]] = apply(args[1], resolve(slots, list(args[2:])))
    elif name == "chain":  # out = ((x op c) op c) ... n times: deep graphs without huge programs
        node = slots[args[1]]
        for _ in range(args[4]):
            node = apply(args[2], [node, args[3]])
        slots[args[0]] = node
    elif name == "error":
        try:
            apply(args[0], resolve(slots, list(args[1:])))
            out.append("no error")
        except Exception as exc:  # noqa: BLE001 - the type of error is the answer
            out.append(type(exc).__name__)
    elif name == "error_or_gradients":  # bad input: the error's type, or what an extension computes
        operands = resolve(slots, list(args[1:]))
        try:
            result = apply(args[0], operands)
        except Exception as exc:  # noqa: BLE001 - the type of error is the answer
            out.append(type(exc).__name__)
        else:
            result.grad = 1.0
            local_backward(result)
            out.append([number(result.data), *(number(v.grad) for v in operands)])
    elif name == "unpack":
        outputs = slots[args[0]]
        for key, value in zip(args[1], outputs if isinstance(outputs, list) else [outputs]):
            slots[key] = value
    elif name == "set_grad":
        slots[args[0]].grad = args[1]
    elif name == "local_backward":
        local_backward(slots[args[0]])
    elif name == "backward":
        slots[args[0]].backward()
    elif name == "topo":
        slots[args[0]] = list(module("engine").topological_order(slots[args[1]]))
    elif name == "zero_grad":
        module("engine").zero_grad(resolve(slots, args[0]))
    elif name == "numerical_grad":
        slots[args[0]] = module("gradcheck").numerical_grad(subprogram(args[1], args[2], folder), args[3], h=args[4])
    elif name == "descend":  # the function is a subprogram of two Values, as for numerical_grad
        descend = module("warmup").descend
        slots[args[0]] = descend(subprogram(args[1], args[2], folder), tuple(args[3]), lr=args[4], steps=args[5])
    elif name == "count_nodes":
        slots[args[0]] = module("memory").count_nodes(slots[args[1]])
    elif name == "mlp":
        slots[args[0]] = module("nn").MLP(args[1], args[2], activation=args[3])
    elif name == "set_params":
        for p, w in zip(slots[args[0]].parameters(), args[1]):
            p.data = w
    elif name == "call":
        slots[args[0]] = slots[args[1]](resolve(slots, args[2]))
    elif name == "loss":
        slots[args[0]] = getattr(module("nn"), args[1])(resolve(slots, args[2]), args[3])
    elif name == "sgd_step":
        module("nn").SGD(slots[args[0]].parameters(), lr=args[1]).step()
    elif name == "train":
        nn = module("nn")
        slots[args[0]] = nn.train(slots[args[1]], args[2], args[3], getattr(nn, args[4]), lr=args[5], steps=args[6])
    elif name == "accuracy":
        model, xs, ys = slots[args[1]], args[2], args[3]
        slots[args[0]] = sum((model(x).data > 0) == (y > 0) for x, y in zip(xs, ys)) / len(xs)
    elif name == "answers":
        namespace = load_answers(folder)
        for key in args[0]:
            slots[key] = namespace.get(key, "not answered")
    elif name == "read":
        out.append(read(slots, args[0], args[1]))
    else:
        raise ValueError(f"unknown step {name}")


def subprogram(steps, inputs, folder):
    """A function of Values for numerical_grad: binds the inputs, runs steps, returns the last slot."""

    def f(*values):
        slots = dict(zip(inputs, values))
        for s in steps:
            step(slots, [], folder, *s)
        return slots[steps[-1][1]]

    return f


def where(exc, folder):
    """`Class.method (file, line n)` of the innermost submission frame, so a message can name
    the hole; code run at import is named by its file alone."""
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        if code.co_filename.startswith(folder):
            file = os.path.basename(code.co_filename)
            name = getattr(code, "co_qualname", code.co_name)
            found = f"{file} (line {line})" if name == "<module>" else f"{name} ({file}, line {line})"
    return found


def grader_lookup(exc):
    """(what, file) when the grader's own code looked up a name the submission lacks, as
    ("Value._prev", "engine.py"); None when the error came from inside the submission's code.

    An AttributeError raised in this file, about an object the submission made, means the
    grader needed that attribute: the student is told which one, not "your code raised".
    """
    if isinstance(exc, Missing):
        return str(exc), None
    if not isinstance(exc, AttributeError) or not exc.name:
        return None
    innermost = list(traceback.walk_tb(exc.__traceback__))[-1][0]
    if innermost.f_code.co_filename != __file__:
        return None
    owner = exc.obj
    if isinstance(owner, types.ModuleType):
        home, what = owner.__name__, exc.name
    else:
        home, what = type(owner).__module__, f"{type(owner).__name__}.{exc.name}"
    if home.split(".")[0] != "minigrad":
        return None
    return what, f"{home.rsplit('.', 1)[-1]}.py"


def explain(exc, folder):
    """The error as plain data for the parent, which words it for the student."""
    looked_up = grader_lookup(exc)
    if looked_up:
        return {"type": "GraderNeeds", "message": looked_up[0], "where": looked_up[1]}
    return {"type": type(exc).__name__, "message": str(exc)[:300], "where": where(exc, folder)}


def run_program(program, folder):
    order.restart()
    slots, out = {}, []
    try:
        for s in program:
            step(slots, out, folder, *s)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the submission may call sys.exit
        return out, explain(exc, folder)
    return out, None
