"""Problems said once, not once per test: a name the grader needs and cannot find, a module
the submission imports that grading does not have.

Such a problem stops every program that meets it, so repeating it under each test (45 copies
of "No module named 'torch'") buries it; each test points here instead, and the grade's
summary says it once: per part for a missing name, once per grading for a missing module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from graders.reporting.escape import untrusted

from .protocol import Outcome

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


def api(outcome: Outcome) -> list[str]:
    """The API probe's mismatches with the course's `Value`, each said once, with a likely match
    among the student's own names ("`data` is missing; your `Value` stores its number in `val`").
    A probe that could not run (engine.py does not load) says nothing: its own note says why."""
    if outcome.error is not None or len(outcome.out) != 5:
        return []
    names, holding, data_type, grad_set, _ = outcome.out
    if not all(isinstance(found, list) for found in (names, holding)):
        return []
    names = [untrusted(str(name)) for name in names]
    said = []
    for name, clues in COURSE_VALUE.items():
        if name in names:
            continue
        if name == "data" and holding:
            said.append(f"`data` is missing; your `Value` stores its number in `{untrusted(str(holding[0]))}`")
            continue
        said.append(f"`{name}` is missing{_likely(names, COURSE_VALUE, clues)}")
    if "data" in names and data_type not in ("float", "int"):
        said.append(f"your `Value` holds a {untrusted(str(data_type))} in `data`; the course's holds one number")
    if "grad" in names and grad_set != "no error":
        said.append("`grad` cannot be set: the course sets `out.grad`")
    return [f"course API: {words}" for words in said]


def _likely(names: list[str], course: dict[str, tuple[str, ...]], clues: tuple[str, ...]) -> str:
    """ "; you have `backprop`": the first of the student's names (not the course's) with a clue."""
    likely = [mine for mine in names if mine not in course and any(clue in mine.lower() for clue in clues)]
    return f"; you have `{likely[0]}`" if likely else ""


def locations(outcome: Outcome) -> dict[str, list]:
    """Where the probe found each operator and its backward ({"Value.__mul__'s backward":
    ["engine.py", 61]}), only entries of exactly that shape: root_cause.py names the line of an
    operator whose result was wrong, which no traceback gives."""
    found = outcome.out[4] if outcome.error is None and len(outcome.out) == 5 else {}
    return {
        name: [file, line]
        for name, place in (found.items() if isinstance(found, dict) else ())
        if re.fullmatch(r"Value\.\w+(?:'s backward)?", name)
        and isinstance(place, list)
        and len(place) == 2
        and isinstance(file := place[0], str)
        and re.fullmatch(r"\w+\.py", file)
        and type(line := place[1]) is int
        and line > 0
    }


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
    said = [
        f"`{name}` is missing{_likely(names, COURSE_TENSOR, clues)}"
        for name, clues in COURSE_TENSOR.items()
        if name not in names
    ]
    if data_type not in ("missing", "ndarray"):
        said.append(f"your `Tensor` holds a {data_type} in `data`; the course's holds a NumPy array")
    if requires_grad not in ("missing", "False"):
        said.append(f"`Tensor([1.0, 2.0]).requires_grad` is {requires_grad}; the course's is False unless asked for")
    if grad not in ("missing", "NoneType"):
        said.append(f"a new `Tensor`'s `grad` is a {grad}; the course's is None until backward() reaches it")
    if grad_set not in ("no error",) and "grad" in names:
        said.append("`grad` cannot be set: the course sets `tensor.grad`")
    return [f"course API (Tensor): {words}" for words in said]
