"""The API probes: what the submission's `Value`, network code and `Tensor` offer, sent back for
the parent to compare with the course's API (notes.py words each mismatch once) and to place the
blame of failed tests (root_cause.py). Observations only: names, type names, whether an
attribute can be set, where a function is defined, which of the submission's functions a call
ran, the names a method's code uses, the flags a new Value holds; no verdict.

Each probe runs once per grading, after the tests of its part, so it imports nothing sooner
than those tests do.
"""

import operator
import os
import sys
import types
from collections.abc import Callable

from code_names import qualified
from hangs import KnownFailure
from steps import Run, error_type, number, step

NAMES_SENT = 100  # of an object's attribute names
USED_SENT = 50  # of the names one method's code uses
OPERATORS = {
    "__add__": operator.add,
    "__mul__": operator.mul,
    "__pow__": lambda a, b: a**3,
    "__sub__": operator.sub,
    "__truediv__": operator.truediv,
    "__neg__": lambda a, b: -a,
    "__radd__": lambda a, b: 2.0 + a,
    "__rmul__": lambda a, b: 2.0 * a,
    "__rsub__": lambda a, b: 2.0 - a,
    "__rtruediv__": lambda a, b: 2.0 / a,
    **{name: lambda a, b, name=name: getattr(a, name)() for name in ("exp", "log", "tanh", "relu", "sigmoid")},
}


def names_of(made: object) -> list[str]:
    return [name for name in dir(made) if not name.startswith("__")][:NAMES_SENT]


def can_set_grad(made: object, value: object) -> str:
    """The type name of the error `made.grad = value` raises, or "no error"."""

    def set_grad() -> None:
        made.grad = value

    return error_type(set_grad)


@step
def api(run: Run) -> None:
    """Send back what the submission's `Value(2.0)` offers: its attribute names, the names
    holding the number 2.0, the type of its `data`, the error that setting `grad` raises ("no
    error" when it can be set), where each operator and its `_backward` are defined, the
    functions each operator ran, the names each method of its own uses, its bool fields, what
    backward() ran and left in the gradients, what wrong operands raise where, and the
    `_backward` each result carries."""
    engine = run.module("engine")
    value = engine.Value
    made = value(2.0)
    run.out.append(names_of(made))
    fields = getattr(made, "__dict__", {})
    run.out.append([name for name, x in fields.items() if type(x) in (int, float) and x == 2.0][:NAMES_SENT])
    run.out.append(type(fields.get("data", getattr(made, "data", None))).__name__)
    run.out.append(can_set_grad(made, 1.0))
    run.out.append(locations(run.folder, engine))
    builds = {
        f"Value.{name}": ran(run.folder, lambda f=f: f(value(2.0), value(3.0)))[0] for name, f in OPERATORS.items()
    }
    builds["Value.backward"], grads = backward_pass(run.folder, value)
    run.out.append(builds)
    run.out.append(uses(run.folder, made, run.out[0]))
    run.out.append([[name, x] for name, x in fields.items() if type(x) is bool][:NAMES_SENT])
    run.out.append(grads)
    run.out.append(refusals(run.folder, value))
    run.out.append(closures(value))


def attempt(action: Callable[[], object]) -> tuple[object, BaseException | None]:
    """What `action()` returns, or the error it raises: any Exception, or the stand-in of a
    function an earlier child hung in (a BaseException). An error here is no answer of the
    probe's: the tests of what raised it say it."""
    try:
        return action(), None
    except (Exception, KnownFailure) as exc:  # noqa: BLE001 - see above
        return None, exc


def locations(folder: str, engine: types.ModuleType) -> dict:
    """{"Value.__mul__": [file, line], "Value.__mul__'s backward": [file, line], ...}: where each
    function of the engine is defined, and the `_backward` closure each operator's result carries
    (when the operator itself made it: `a - b` written as `a + (-b)` carries `__add__`'s)."""
    value = engine.Value
    found = {
        name: place
        for name in ("topological_order", "zero_grad")
        if (place := defined(folder, getattr(engine, name, None))) is not None
    }
    for name in ("__init__", *OPERATORS, "backward"):
        if (place := defined(folder, getattr(value, name, None))) is not None:
            found[f"Value.{name}"] = place
    for name, apply in OPERATORS.items():
        if f"Value.{name}" not in found:
            continue
        made, _ = attempt(lambda apply=apply: apply(value(2.0), value(3.0)))
        closure = getattr(getattr(made, "_backward", None), "__code__", None)
        if isinstance(closure, types.CodeType) and qualified(closure).startswith(f"{value.__name__}.{name}."):
            found[f"Value.{name}'s backward"] = [os.path.basename(closure.co_filename), closure.co_firstlineno]
    return found


def defined(folder: str, function: object) -> list | None:
    """[file, first line] of a function of the submission; None for anything else."""
    code = getattr(function, "__code__", None)
    if not isinstance(code, types.CodeType) or not code.co_filename.startswith(folder):
        return None
    return [os.path.basename(code.co_filename), code.co_firstlineno]


def ran(folder: str, action: Callable[[], object]) -> tuple[list[str], BaseException | None]:
    """The qualified names of the submission's functions that `action()` ran, in the order first
    called (a profile hook sees every call; the actions here are a few operators on two Values),
    and the error that stopped it."""
    seen: dict[types.CodeType, str] = {}

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event == "call" and code not in seen and code.co_filename.startswith(folder) and len(seen) < NAMES_SENT:
            seen[code] = qualified(code)

    sys.setprofile(profile)
    try:
        _, error = attempt(action)
    finally:
        sys.setprofile(None)
    return list(dict.fromkeys(seen.values())), error


def backward_pass(folder: str, value: type) -> tuple[list[str], list]:
    """What the submission's own (a * b + a).backward() at a = 2, b = 3 ran (its `_backward`
    closures in the order it called them), and [a.grad, b.grad, root.grad] after it, each as
    `number()` sends it ([] when it raised)."""
    graph, _ = attempt(lambda: (a := value(2.0), b := value(3.0), a * b + a))
    if graph is None:
        return [], []
    names, error = ran(folder, lambda: graph[2].backward())
    return names, [] if error else [number(getattr(node, "grad", None)) for node in graph]


def closures(value: type) -> dict:
    """{"Value": "Value.__init__.<locals>.<lambda>", "Value.exp": ...}: the qualified name of the
    `_backward` a new Value carries, and of the one each operator's result carries (the same as
    a new Value's when the operator attaches none)."""
    found = {}
    for name, apply in {"": lambda a, b: a, **{f".{op}": f for op, f in OPERATORS.items()}}.items():
        made, _ = attempt(lambda apply=apply: apply(value(2.0), value(3.0)))
        code = getattr(getattr(made, "_backward", None), "__code__", None)
        if isinstance(code, types.CodeType):
            found[f"Value{name}"] = qualified(code)
    return found


def refusals(folder: str, value: type) -> dict:
    """{"Value.__add__": [error type, function, file, line]}: what `Value(2.0) + "2"` and
    `Value(2.0) * [1]` raise, and the innermost frame of the submission's code it was raised in
    (an `assert` in `__init__`, reached by wrapping the operand before checking its type)."""
    from interpreter import located  # here: the interpreter imports this module as it starts

    found = {}
    for name, bad in (("__add__", "2"), ("__mul__", [1])):
        _, error = attempt(lambda name=name, bad=bad: OPERATORS[name](value(2.0), bad))
        where = located(error, folder) if isinstance(error, Exception) else {}
        if "function" in where:
            found[f"Value.{name}"] = [type(error).__name__, where["function"], where["file"], where["line"]]
    return found


def uses(folder: str, made: object, names: list[str]) -> dict:
    """{"backprop": ["_backward", "_prev", ...]}: for each method of the submission's Value
    under a name of its own, the attribute and global names its code (nested functions
    included) uses: a method that walks `_prev` and calls `_backward` does what `backward` does."""
    found = {}
    for name in names:
        function = getattr(type(made), name, None)
        if defined(folder, function) is not None:
            found[name] = sorted(names_in(function.__code__))[:USED_SENT]
    return found


def names_in(code: types.CodeType) -> set[str]:
    used = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            used |= names_in(constant)
    return used


@step
def api_nn(run: Run) -> None:
    """Send back where the submission's network functions are defined, and which of its
    functions `train` ran on a two-input model for one step (`train` is expected to use
    `SGD.step` and the loss it is given)."""
    nn = run.module("nn")
    found = {}
    for name in ("MLP", "SGD", "train", "mse_loss", "hinge_loss", "binary_cross_entropy"):
        made = getattr(nn, name, None)
        for method in ("__call__", "parameters", "step") if isinstance(made, type) else ("",):
            place = defined(run.folder, getattr(made, method, None) if method else made)
            if place is not None:
                found[f"{name}.{method}" if method else name] = place
    run.out.append(found)
    model, _ = attempt(lambda: nn.MLP(2, [2, 1], activation="linear"))
    loss = getattr(nn, "mse_loss", None)
    train = getattr(nn, "train", None)
    if model is None or train is None:
        run.out.append({})
        return
    run.out.append({"train": ran(run.folder, lambda: train(model, [[1.0, -1.0]], [0.5], loss, lr=0.01, steps=1))[0]})


@step
def api_tensor(run: Run) -> None:
    """Send back what the submission's `Tensor([1.0, 2.0])` offers: its attribute names, the
    type of its `data`, its `requires_grad` and `grad` as made (type names, or "missing"), and
    the error that setting `grad` raises ("no error" when it can be set)."""
    made = run.module("tensor").Tensor([1.0, 2.0])
    run.out.append(names_of(made))
    for name in ("data", "requires_grad", "grad"):
        run.out.append(described(made, name))
    run.out.append(can_set_grad(made, None))


def described(made: object, name: str) -> str:
    """ "missing", "True" or "False" for a bool, else the type name of `made.<name>`."""
    if name not in dir(made):
        return "missing"
    found = getattr(made, name)
    return str(found) if type(found) is bool else type(found).__name__
