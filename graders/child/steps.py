"""The program vocabulary: named steps, read kinds, and what every step shares.

A program is a list of steps, and a step is `[name, {argument: value, ...}]`, for example
`["chain", {"into": "y", "start": "x", "op": "+", "operand": 0.5, "times": 100000}]`. The
name is a function registered with `@step`, called as `function(run, **arguments)`:

    @step
    def chain(run: Run, *, into: str, start: str, op: str, operand: float, times: int) -> None:
        '''y = ((x op c) op c) ... n times: deep graphs without huge programs.'''

Every argument is keyword-only, so a misspelt, missing or extra one is a TypeError that names
it, and the first line of the docstring says what the step does. A step keeps what it makes in
`run.slots` under the name it was given (`into` by convention), looks up the submission's
modules with `run.module(name)` and turns slot names into objects with `run.resolve(arg)`.
Only the `read` step sends anything back: it appends what a read kind (a function registered
with `@reader`, as `def grad(run, obj)`) makes of a slot, built with `number()` or `array()`,
so nothing but plain numbers, strings and lists leaves the child.

The child reports observations; the parent decides. A step or read kind sends back what it
saw (numbers, arrays, the slot names of nodes, an error's type name), never a verdict: no pass
or fail, accuracy, gap, bound or validity is computed here, and no expected value ever reaches
this process. The parent compares each read with the reference's read of the same program, or
checks it itself against what only the parent holds (the edges of the graph it sent, the
digits' test labels), and first validates the structure of everything that came back (one
list where it asked for one, numbers where numbers belong). The submission runs in this
process and may replace any answer, `run_program` itself included, so an answer must be
worth nothing unless it is the answer to this very program: tests/test_forged_verdicts.py
answers every program with the reference's answers at another seed, and the specimen
attack-forge-verdicts forges what a program alone gives away; neither gains a point.

The steps themselves live in the `steps_*.py` modules beside this file, one per group of parts
(`steps_scalar.py`: parts 1-3 and the checkpoint); the interpreter imports every one of them,
so a new part is a new module. They import nothing heavy at import time (NumPy only inside the
functions that use it): every child imports them all before its first program.
"""

import importlib
import math
import os
import traceback
from collections.abc import Callable
from types import ModuleType

import order

# Modules that build no Values, so they never import the engine: the quiz stands alone, and
# part 4's tensors must not depend on what engine.py does (or fails to do) when imported.
WITHOUT_VALUES = {"checkpoint", "tensor", "layers", "datasets"}
STEPS: dict[str, Callable[..., None]] = {}
READS: dict[str, Callable[["Run", object], object]] = {}
HERE = os.path.dirname(os.path.abspath(__file__))
_VARIABLE_ARGUMENTS = 0x04 | 0x08  # CO_VARARGS | CO_VARKEYWORDS: *args or **kwargs


def step(function: Callable[..., None]) -> Callable[..., None]:
    """Register `function` as the step of its own name. Checked here, once, so that a step
    written any other way fails when the child starts, not halfway through a grading."""
    code = function.__code__
    if code.co_argcount != 1 or code.co_flags & _VARIABLE_ARGUMENTS or not function.__doc__:
        raise TypeError(f"step {function.__name__}: write it as `def name(run, *, argument, ...)` with a docstring")
    if function.__name__ in STEPS:
        raise ValueError(f"two steps are named {function.__name__!r}")
    STEPS[function.__name__] = function
    return function


def reader(function: Callable[["Run", object], object]) -> Callable[["Run", object], object]:
    """Register `function(run, obj)` as the read kind of its own name."""
    if function.__name__ in READS:
        raise ValueError(f"two read kinds are named {function.__name__!r}")
    READS[function.__name__] = function
    return function


class Missing(Exception):
    """A file of the package that the grader imports is not in the submission."""


class Run:
    """One program as it runs: the objects made so far by name (`slots`), the reads sent back
    so far (`out`), and the folder holding the submission's `minigrad/` (`folder`)."""

    def __init__(self, folder: str, slots: dict | None = None) -> None:
        self.folder = folder
        self.slots: dict = {} if slots is None else slots
        self.out: list = []

    def perform(self, program_step: list) -> None:
        """Run one step, `[name, {argument: value, ...}]`."""
        if not (isinstance(program_step, list) and len(program_step) == 2 and isinstance(program_step[1], dict)):
            raise ValueError(f"a step is [name, {{argument: value}}], not {str(program_step)[:100]}")
        name, arguments = program_step
        if name not in STEPS:
            raise ValueError(f"unknown step {name!r}")
        STEPS[name](self, **arguments)

    def function(self, steps: list, inputs: list[str]) -> Callable:
        """The steps as a function of Values (numerical_grad and descend call it): each call
        binds `inputs` to the Values given, runs the steps, and returns what the last one made."""

        def f(*values):
            inner = Run(self.folder, dict(zip(inputs, values)))
            for program_step in steps:
                inner.perform(program_step)
            return inner.slots[steps[-1][1]["into"]]

        return f

    def module(self, name: str) -> ModuleType:
        """The submission's `minigrad.<name>`; a file it lacks is `Missing`, said as such."""
        if name not in WITHOUT_VALUES:
            _engine_first()
        try:
            return importlib.import_module(f"minigrad.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"minigrad.{name}":  # the file itself, not something it imports
                raise Missing(f"minigrad/{name}.py") from None
            raise

    def resolve(self, arg: object) -> object:
        """A string names a slot, a list is resolved element-wise, `{"literal": x}` is x itself
        (a string or list to pass as it is), a number stays a number."""
        if isinstance(arg, str):
            return self.slots[arg]
        if isinstance(arg, list):
            return [self.resolve(a) for a in arg]
        if isinstance(arg, dict):
            return arg["literal"]
        return arg


def _engine_first() -> None:
    """Import the engine before anything can hash a Value, and number its hashes (order.py)."""
    try:
        engine = importlib.import_module("minigrad.engine")
    except Exception:  # noqa: BLE001 - said by the step that needs the engine, with its reason
        return
    order.stabilize(getattr(engine, "Value", None))


def number(x: object) -> object:
    """Only real numbers leave the child; anything else is reported by its type name, and a
    non-finite number by its repr (JSON has no inf or nan, and the parent refuses them)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return {"not_a_number": type(x).__name__}
    if not math.isfinite(x):
        return {"not_finite": repr(x)}
    return x


def array(x: object) -> object:
    """An array answer, `{"shape": [3, 1], "values": [[...], [...], [...]]}`, each number sent
    as `number()` sends it; what NumPy cannot read as an array (ragged lists), or reads only as
    one object (a Value, None, a string), is reported by its type name, as `number()` does."""
    import numpy  # here, not at the top: parts 1-3 never pay for importing NumPy

    try:
        values = numpy.asarray(x)
    except (TypeError, ValueError):
        return {"not_a_number": type(x).__name__}
    if values.ndim == 0 and values.dtype.kind not in "iuf":
        return {"not_a_number": type(x).__name__}
    return {"shape": list(values.shape), "values": _numbers(values.tolist())}


def _numbers(values: object) -> object:
    return [_numbers(v) for v in values] if isinstance(values, list) else number(values)


def error_type(action: Callable[[], object]) -> str:
    """The type name of the error `action()` raises, or "no error": the answer of a step that
    checks what bad input does. A name the submission lacks (a `log` never written) is no
    answer: it stops the program, to be said as missing, not as the wrong error."""
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the type of error is the answer
        if grader_lookup(exc):
            raise
        return type(exc).__name__
    return "no error"


def grader_lookup(exc: BaseException) -> tuple[str, str | None] | None:
    """(what, file) when the grader's own code looked up a name the submission lacks, as
    ("Value._prev", "engine.py"); None when the error came from inside the submission's code.

    An AttributeError raised in a file of this folder (a step), about an object the submission
    made, means the grader needed that attribute: the student is told which one, not "your code
    raised".
    """
    if isinstance(exc, Missing):
        return str(exc), None
    if not isinstance(exc, AttributeError) or not exc.name:
        return None
    innermost = list(traceback.walk_tb(exc.__traceback__))[-1][0]
    if os.path.dirname(innermost.f_code.co_filename) != HERE:
        return None
    owner = exc.obj
    if isinstance(owner, ModuleType):
        home, what = owner.__name__, exc.name
    else:
        home, what = type(owner).__module__, f"{type(owner).__name__}.{exc.name}"
    if home.split(".")[0] != "minigrad":
        return None
    return what, f"{home.rsplit('.', 1)[-1]}.py"


@step
def measured(run: Run, *, what: str, limit: float, stop_after: float) -> None:
    """Nothing here: a program that starts with this step is timed by the parent, which runs it
    alone in a fresh child and counts the CPU of everything that child does (graders/grading/cases.py)."""


@step
def raises(run: Run, *, action: list) -> None:
    """Send back the type name of the error the step `action` raises, or "no error"."""
    run.out.append(error_type(lambda: run.perform(action)))


@step
def read(run: Run, *, kind: str, ref: str) -> None:
    """Send back what the read kind `kind` makes of the object in slot `ref`."""
    if kind not in READS:
        raise ValueError(f"unknown read {kind!r}")
    run.out.append(READS[kind](run, run.slots[ref]))


@step
def imports(run: Run, *, module: str) -> None:
    """Send back "imports" or the error that stops `minigrad.<module>` importing, with the file
    and line it was raised at. The quiz is only compiled: its unanswered stubs raise at import,
    and its answers are read one by one."""
    try:
        if module == "checkpoint":
            with open(f"{run.folder}/minigrad/checkpoint.py", encoding="utf-8") as f:
                compile(f.read(), "checkpoint.py", "exec")
        else:
            importlib.import_module("minigrad" if module == "__init__" else f"minigrad.{module}")
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: whatever stops the import is the answer
        run.out.append(_import_error(exc, run.folder))
        return
    run.out.append("imports")


def _import_error(exc: BaseException, folder: str) -> str:
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{type(exc).__name__}: {exc.msg} ({exc.filename.rsplit('/', 1)[-1]}, line {exc.lineno})"
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename.startswith(folder):
            found = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}, line {line}"
    return f"{type(exc).__name__}: {str(exc)[:200]}" + (f" ({found})" if found else "")
