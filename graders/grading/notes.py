"""Problems said once, not once per test: a name the grader needs and cannot find, a module
the submission imports that grading does not have.

Such a problem stops every program that meets it, so repeating it under each test (45 copies
of "No module named 'torch'") buries it; each test points here instead, and the grade's
summary says it once: per part for a missing name, once per grading for a missing module.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from graders.reporting import root_cause
from graders.reporting.cause import Cause
from graders.reporting.escape import untrusted

from .protocol import LOCATION, Outcome

NEEDS = "GraderNeeds"  # the child's error type when the grader's own lookup failed
MISSING_MODULE = "ModuleNotFoundError"

# What each name of the fixed API is, in the student's words; the docstrings of the release
# say the same where the name is defined.
DESCRIPTIONS = {
    "Value": "the scalar node class",
    "Value.data": "the node's number",
    "Value.grad": "the gradient of the final output with respect to the node",
    "Value._prev": "the set of a node's inputs",
    "Value._backward": "the function that passes a node's gradient on to its inputs",
    "Value.backward": "the method that fills in every gradient of the graph",
    "Value.exp": "the operator exp",
    "Value.log": "the operator log",
    "Value.tanh": "the operator tanh",
    "Value.relu": "the operator relu",
    "Value.sigmoid": "the operator sigmoid",
    "topological_order": "the function that lists every node under a root, inputs first",
    "zero_grad": "the function that sets the given values' gradients to 0.0",
    "numerical_grad": "the central-difference gradient",
    "MLP": "the multilayer perceptron",
    "MLP.parameters": "the method that lists every weight and bias in order",
    "SGD": "the optimizer",
    "train": "the training loop",
    "mse_loss": "the mean squared error",
    "hinge_loss": "the hinge loss",
    "binary_cross_entropy": "the binary cross-entropy",
    "minigrad/engine.py": "the file of parts 1 and 2",
    "minigrad/gradcheck.py": "the file of numerical_grad",
    "minigrad/nn.py": "the file of part 3",
    "Tensor": "the array class of part 4",
    "Tensor.backward": "the method that fills in the gradients of the leaves",
    "Tensor.grad": "the gradient of a leaf, None until a backward pass reaches it",
    "unbroadcast": "the function that sums a gradient back to an input's shape",
    "Linear": "the fully connected layer",
    "Sequential": "the container that chains modules",
    "cross_entropy": "the softmax cross-entropy",
    "batches": "the mini-batch generator",
    "fit": "the mini-batch training loop",
    "minigrad/tensor.py": "the file of part 4's Tensor and Functions",
    "minigrad/layers.py": "the file of part 4's layers, losses and training",
}


def grader_needs(what: str, file: str | None) -> str:
    """The full sentence, e.g. "the grader needs `Value._prev`, the set of a node's inputs
    (see engine.py's docstring)"."""
    description = DESCRIPTIONS.get(what, "a name the assignment fixes")
    where = f"see {untrusted(file)}'s docstring" if file else "the release has it"
    return f"the grader needs `{untrusted(what)}`, {description} ({where})"


def missing_module(message: str, where: str | None) -> str:
    """The note for a module grading lacks; the child's words are shown as one visible line,
    since the note is printed under the score table."""
    place = f", at {untrusted(where)}" if where else ""
    return (
        f"your code imports a module that grading does not have: {untrusted(message)}{place}; grading has the "
        "standard library and NumPy, and copies only the .py files of minigrad/"
    )


def per_test(error: dict) -> str | None:
    """What a test that met a once-said problem shows instead of the problem itself."""
    if error["type"] == NEEDS:
        missing = untrusted(error["message"])
        return f"`{missing}` is missing, so this could not run (see the notes under the score table)"
    if error["type"] == MISSING_MODULE and error.get("where"):
        return "your code imports a module that grading does not have (see the notes under the score table)"
    return None


def called_but_missing(error: dict) -> str | None:
    """`Value.tanh` when the submission's own code calls a name of the API that it lacks (the
    given `ACTIVATIONS` of nn.py calling a tanh never written, say): that name's own test
    scores it, so this test says which, instead of a bare AttributeError."""
    found = re.fullmatch(r"'(\w+)' object has no attribute '(\w+)'", error["message"] or "")
    if error["type"] != "AttributeError" or not found:
        return None
    name = f"{found[1]}.{found[2]}"
    return name if name in DESCRIPTIONS else None


def collect(outcomes: Iterable[tuple[str, Outcome]]) -> list[str]:
    """The notes for a grading, from (part, submission outcome) pairs, each said once, in the
    order first met."""
    said: dict[str, None] = {}
    for part, outcome in outcomes:
        error = outcome.error
        if error is None:
            continue
        if error["type"] == NEEDS:
            said[f"{part}: {grader_needs(error['message'], error['where'])}"] = None
        elif error["type"] == MISSING_MODULE and error.get("where"):
            said[missing_module(error["message"], error["where"])] = None
    return list(said)


# The course's Value, as the API probe checks it; the words a likely match of the student's own
# is found by, for each name.
COURSE_VALUE = {
    "data": (),
    "grad": (),
    "_prev": ("prev", "child", "parent", "input", "operand"),
    "_backward": ("_back", "grad_fn", "local"),
    "backward": ("back", "prop", "grad"),
}
# What a method does, by the names its code uses: one that walks `_prev` and calls `_backward`
# is the student's `backward`, whatever its name holds.
DOES = {"backward": ("_prev", "_backward")}
OPERATORS = ("exp", "log", "tanh", "relu", "sigmoid")  # said missing only beside a near name
SPELLING = 0.8  # difflib's ratio from which a name of the student's is a misspelling of the course's
VALUE_NAMES = (*COURSE_VALUE, *OPERATORS)
VALUE_PROBE = 11  # the reads of the Value probe (child/steps_api.py's `api`)


def api(outcome: Outcome) -> list[str]:
    """The API probe's mismatches with the course's `Value`, each said once, with a likely match
    among the student's own names ("`data` is missing; your `Value` stores its number in `val`"),
    and a flag that switches gradients off. A probe that could not run (engine.py does not load)
    says nothing: its own note says why."""
    if outcome.error is not None or len(outcome.out) != VALUE_PROBE:
        return []
    names, holding, data_type, grad_set, _, _, used, flags, grads, _, _ = outcome.out
    if not all(isinstance(found, list) for found in (names, holding)):
        return []
    names = [untrusted(str(name)) for name in names]
    used = used if isinstance(used, dict) else {}
    said = []
    for name, clues in COURSE_VALUE.items():
        if name in names:
            continue
        if name == "data" and holding:
            said.append(f"`data` is missing; your `Value` stores its number in `{untrusted(str(holding[0]))}`")
            continue
        mine = _does(names, used, name) or _spelt(names, name, VALUE_NAMES) or _likely(names, COURSE_VALUE, clues)
        said.append(f"`{name}` is missing" + (f"; you have `{mine}`" if mine else ""))
    said += [
        f"`{name}` is missing; you have `{mine}`"
        for name in OPERATORS
        if name not in names and (mine := _spelt(names, name, VALUE_NAMES))
    ]
    if "data" in names and data_type not in ("float", "int"):
        said.append(f"your `Value` holds a {untrusted(str(data_type))} in `data`; the course's holds one number")
    if "grad" in names and grad_set != "no error":
        said.append("`grad` cannot be set: the course sets `out.grad`")
    said += _switched_off(flags, grads)
    return [f"course API: {words}" for words in said]


def _does(names: list[str], used: dict, name: str) -> str | None:
    """The first of the student's own methods whose code uses every name `DOES` lists for `name`."""
    needs = DOES.get(name)
    if not needs:
        return None
    return next((mine for mine in names if isinstance(used.get(mine), list) and set(needs) <= set(used[mine])), None)


def _spelt(names: list[str], name: str, course: Iterable[str]) -> str | None:
    """ "reLU" for "relu": the student's name nearest by spelling (case aside), if near enough,
    among those that are not the course's own (`backward` is no misspelling of `_backward`)."""
    lowered = {mine.lower(): mine for mine in reversed(names) if mine not in course}
    near = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=SPELLING)
    return lowered[near[0]] if near else None


def _likely(names: list[str], course: dict[str, tuple[str, ...]], clues: tuple[str, ...]) -> str | None:
    """ "backprop": the first of the student's names (not the course's) with a clue."""
    return next((mine for mine in names if mine not in course and any(clue in mine.lower() for clue in clues)), None)


def _switched_off(flags: object, grads: object) -> list[str]:
    """The note on a flag that switches gradients off (`gradients_off`)."""
    if not (flag := gradients_off(flags, grads)):
        return []
    return [
        f"a new `Value` has `{flag}` False, and after `(a * b + a).backward()` the gradients of a and b are "
        f"still 0: the course's `Value` passes gradients to every input, with no flag to switch them on"
    ]


def gradients_off(flags: object, grads: object) -> str | None:
    """A flag of a new Value, named for gradients and False (`requires_grad`), when the
    student's own (a * b + a).backward() then left the gradients of a and b at 0."""
    if not isinstance(flags, list) or not isinstance(grads, list) or len(grads) != 3:
        return None
    off = [untrusted(str(flag[0])) for flag in flags if isinstance(flag, list) and len(flag) == 2 and flag[1] is False]
    off = [name for name in off if "grad" in name.lower() and re.fullmatch(r"\w+", name)]
    return off[0] if off and grads[:2] == [0.0, 0.0] else None


PLACE = re.compile(r"(Value\.\w+(?:'s backward)?|\w+(?:\.\w+)?)")


def locations(found: object) -> dict[str, list]:
    """Where a probe found each function ({"Value.__mul__'s backward": ["engine.py", 61],
    "SGD.step": ["nn.py", 151]}), only entries of exactly that shape: root_cause.py names the line
    of a function whose result was wrong, which no traceback gives."""
    return {
        name: [file, line]
        for name, place in (found.items() if isinstance(found, dict) else ())
        if PLACE.fullmatch(name)
        and isinstance(place, list)
        and len(place) == 2
        and isinstance(file := place[0], str)
        and re.fullmatch(r"\w+\.py", file)
        and type(line := place[1]) is int
        and line > 0
    }


def calls(found: object) -> dict[str, list[str]]:
    """What each function a probe ran ran in turn, by the qualified names the child saw, a
    nested function (`Value.backward.<locals>.build`) as the function that holds it; only
    names of Python's shape. root_cause.py blames an operator built from others where they fail."""
    ran = {}
    for name, names in found.items() if isinstance(found, dict) else ():
        if PLACE.fullmatch(name) and isinstance(names, list):
            held = (str(n).partition(".<locals>.")[0] for n in names if isinstance(n, str))
            ran[name] = list(dict.fromkeys(n for n in held if n != name and re.fullmatch(r"\w+(\.\w+)?", n)))
    return ran


def evidence(part: str, outcome: Outcome, found: root_cause.Evidence) -> None:
    """Add what a part's probe saw (child/steps_api.py's `api` and `api_nn`) to `found`, each
    read checked in its shape, and what it shows of the gradients, in root_cause.py's words."""
    size = {"value": VALUE_PROBE, "mlp": 2}.get(part)
    if size is None or outcome.error is not None or len(outcome.out) != size:
        return
    if part == "mlp":
        found.locations.update(locations(outcome.out[0]))
        found.calls.update(calls(outcome.out[1]))
        return
    _, _, _, _, places, ran, _, flags, grads, refused, closures = outcome.out
    found.locations.update(locations(places))
    found.calls.update(calls(ran))
    if flag := gradients_off(flags, grads):
        found.gradients = Cause("Value.__init__", f"'s `{flag}=False` default switches gradients off")
    found.backward = _backward_fault(ran.get("Value.backward") if isinstance(ran, dict) else None, grads)
    if isinstance(closures, dict) and isinstance(default := closures.get("Value"), str):
        found.unattached = tuple(name for name, made in closures.items() if name != "Value" and made == default)
    found.refusals = {
        name: said
        for name, said in (refused.items() if isinstance(refused, dict) else ())
        if isinstance(said, list)
        and len(said) == 4
        and isinstance(said[0], str)
        and re.fullmatch(r"\w+", said[0])
        and all(LOCATION[key](value) for key, value in zip(("function", "file", "line"), said[1:]))
    }


def _backward_fault(ran: object, grads: object) -> str:
    """What the student's own (a * b + a).backward() shows it does wrong: the root's grad is not
    1.0 after it (never seeded), or it ran `*`'s `_backward` before `+`'s (inputs first)."""
    if not isinstance(grads, list) or len(grads) != 3:
        return ""
    if type(grads[2]) in (int, float) and grads[2] != 1.0:
        return f" leaves the root's grad at {untrusted(str(grads[2]))}: set it to 1.0 before passing gradients back"
    names = [str(name) for name in ran] if isinstance(ran, list) else []
    first = {
        op: next((i for i, n in enumerate(names) if n.startswith(f"Value.{op}.<locals>.")), None)
        for op in ("__add__", "__mul__")
    }
    if None not in first.values() and first["__mul__"] < first["__add__"]:
        return " runs the `_backward`s inputs first: run them output first (reverse topological order)"
    return ""


def api_nn(outcome: Outcome) -> list[str]:
    """The network probe says nothing to the student: it only places blame (`evidence`)."""
    return []


# The course's Tensor, as its API probe checks it, with the words a likely match is found by.
COURSE_TENSOR = {
    "data": ("array", "value", "val"),
    "grad": ("gradient",),
    "requires_grad": ("requires", "need", "track"),
    "backward": ("back", "prop"),
    "shape": ("size", "dim"),
}


def api_tensor(outcome: Outcome) -> list[str]:
    """The Tensor probe's mismatches with the course's `Tensor([1.0, 2.0])`: a NumPy array in
    `data`, `requires_grad` False and `grad` None until asked for, `grad` that can be set."""
    if outcome.error is not None or len(outcome.out) != 5 or not isinstance(outcome.out[0], list):
        return []
    names = [untrusted(str(name)) for name in outcome.out[0]]
    data_type, requires_grad, grad, grad_set = (untrusted(str(found)) for found in outcome.out[1:])
    said = []
    for name, clues in COURSE_TENSOR.items():
        if name not in names:
            mine = _spelt(names, name, COURSE_TENSOR) or _likely(names, COURSE_TENSOR, clues)
            said.append(f"`{name}` is missing" + (f"; you have `{mine}`" if mine else ""))
    if data_type not in ("missing", "ndarray"):
        said.append(f"your `Tensor` holds a {data_type} in `data`; the course's holds a NumPy array")
    if requires_grad not in ("missing", "False"):
        said.append(f"`Tensor([1.0, 2.0]).requires_grad` is {requires_grad}; the course's is False unless asked for")
    if grad not in ("missing", "NoneType"):
        said.append(f"a new `Tensor`'s `grad` is a {grad}; the course's is None until backward() reaches it")
    if grad_set not in ("no error",) and "grad" in names:
        said.append("`grad` cannot be set: the course sets `tensor.grad`")
    return [f"course API (Tensor): {words}" for words in said]
