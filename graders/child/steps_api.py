"""The API probes: what the submission's `Value` and `Tensor` offer, sent back for the parent to
compare with the course's API (notes.py words each mismatch once). Observations only: names,
type names, whether an attribute can be set, where a function is defined; no verdict.

Each probe runs once per grading, after the tests of its part, so it imports nothing sooner
than those tests do.
"""

import operator
import os

from code_names import qualified
from steps import Run, error_type, step

NAMES_SENT = 100  # of an object's attribute names
OPERATORS = {
    "__add__": operator.add,
    "__mul__": operator.mul,
    "__pow__": operator.pow,
    "__sub__": operator.sub,
    "__truediv__": operator.truediv,
    "__neg__": lambda a, b: -a,
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
    error" when it can be set), and where each operator and its `_backward` are defined."""
    value = run.module("engine").Value
    made = value(2.0)
    run.out.append(names_of(made))
    fields = getattr(made, "__dict__", {})
    run.out.append([name for name, x in fields.items() if type(x) in (int, float) and x == 2.0][:NAMES_SENT])
    run.out.append(type(fields.get("data", getattr(made, "data", None))).__name__)
    run.out.append(can_set_grad(made, 1.0))
    run.out.append(locations(run.folder, value))


def locations(folder: str, value: type) -> dict:
    """{"Value.__mul__": [file, line], "Value.__mul__'s backward": [file, line], ...}: where each
    operator of the course is defined, and the `_backward` closure its result carries (when the
    operator itself made it: `a - b` written as `a + (-b)` carries `__add__`'s)."""
    found = {}
    for name, apply in OPERATORS.items():
        code = getattr(getattr(value, name, None), "__code__", None)
        if code is None or not code.co_filename.startswith(folder):
            continue
        found[f"Value.{name}"] = [os.path.basename(code.co_filename), code.co_firstlineno]
        try:
            closure = getattr(getattr(apply(value(2.0), value(3.0)), "_backward", None), "__code__", None)
        except Exception:  # noqa: BLE001 - an operator that fails here is said by its own tests
            continue
        if closure is not None and qualified(closure).startswith(f"{value.__name__}.{name}."):
            found[f"Value.{name}'s backward"] = [os.path.basename(closure.co_filename), closure.co_firstlineno]
    return found


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
