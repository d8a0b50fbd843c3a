"""The submission's minigrad, as the checks reach it: through this one loader.

No check file imports minigrad at its top. It names the files it uses (`engine =
module("engine")`) and reaches into them only while a check runs (`engine.Value(2.0)`). So a
missing file, a file that does not load, or a file without a name the checks need (a
`datasets.py` from before part 4 has no `digits`) fails only the checks that use it, each
saying which file and what to do, and never stops the whole run before the first check.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from feedback import CheckFailure

# Files that come complete with the assignment: a problem in one is fixed by copying it again.
GIVEN = ("__init__", "datasets", "draw", "plots")
FOLDER = Path(".")  # the folder holding the checked minigrad/: conftest sets it


class NotLoaded(CheckFailure):
    """The check could not reach the code it needs; the message says which file and why."""

    def __init__(self, name: str, wanted: str, got: str, hint: str):
        super().__init__(f"load minigrad/{name}.py\n    expected: {wanted}\n    got:      {got}\n    hint:     {hint}")
        self.got, self.hint = got, hint


def shown_path(path: Path) -> str:
    """`path` as the student can type it where `make check` runs: relative to the current
    folder when it is inside it (`assignments/minigrad/engine.py` from the repository's top,
    `minigrad/engine.py` in a student repository), else in full."""
    path, here = Path(os.path.abspath(path)), Path.cwd()
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


def located(function: object) -> str:
    """Where `function` is in the submission, as a failure names it: "`Value.__mul__`
    (minigrad/engine.py:72)", and "`Value.__mul__`'s `_backward` (minigrad/engine.py:76)" for a
    closure an operator made. '' for anything not written in the submission's minigrad/ (a
    check's own helper, a builtin): a wrong value is then not pinned on the student's code."""
    code = getattr(function, "__code__", None)
    if code is None or not Path(code.co_filename).resolve().is_relative_to((FOLDER / "minigrad").resolve()):
        return ""
    outer, _, inner = getattr(function, "__qualname__", code.co_name).partition(".<locals>.")
    name = f"`{outer}`'s `{inner}`" if inner else f"`{outer}`"
    return f"{name} ({Path(code.co_filename).resolve().relative_to(FOLDER.resolve())}:{code.co_firstlineno})"


def restore_hint(name: str) -> str:
    """How to get a file back from the release (`name` without `.py`)."""
    path = shown_path(FOLDER / "minigrad" / f"{name}.py")
    if name == "datasets":  # its digits come in a folder of their own
        path += " " + shown_path(FOLDER / "minigrad" / "data")
    if name in GIVEN:
        return f"copy `{name}.py` from the release: it is given, not a hole (`git checkout -- {path}`)"
    return f"the assignment comes with it; restore it (`git checkout -- {path}`)"


def load(name: str):
    """`minigrad.<name>`, imported; a NotLoaded that says why not."""
    try:
        return importlib.import_module(f"minigrad.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"minigrad.{name}":
            raise NotLoaded(name, "the file", f"minigrad/{name}.py is missing", restore_hint(name)) from None
        if name not in GIVEN:
            raise
        got = f"it imports a module that is not there: {exc}"
        raise NotLoaded(name, "a file that loads", got, restore_hint(name)) from None
    except SyntaxError as exc:
        if name not in GIVEN:
            raise
        got = f"line {exc.lineno}: SyntaxError: {exc.msg}"
        raise NotLoaded(name, "a file Python can read", got, restore_hint(name)) from None
    except Exception as exc:  # noqa: BLE001 - anything that stops a given file loading says the same
        if name not in GIVEN:
            raise
        got = f"{type(exc).__name__} while it loads: {exc}"
        raise NotLoaded(name, "a file that loads", got, restore_hint(name)) from None


class Module:
    """One file of minigrad/, imported when a check first reaches into it."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        loaded = load(self._name)
        try:
            return getattr(loaded, attr)
        except AttributeError:
            if self._name in GIVEN:
                got = f"no `{attr}` in it: an older copy, from before the part that uses it?"
                raise NotLoaded(self._name, f"`{attr}`", got, restore_hint(self._name)) from None
            hint = f"the checks call `{attr}` by the name the assignment gives it: keep that name"
            raise NotLoaded(self._name, f"`{attr}`", f"no `{attr}` in it", hint) from None


def module(name: str) -> Module:
    return Module(name)
