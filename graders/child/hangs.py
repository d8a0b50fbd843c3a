"""Hangs and exits, seen from inside the child: say where a program is stuck or which module
it is importing, and stop a known hang or exit at once.

A program that never ends is stopped by the parent at its deadline; from outside, the parent
cannot tell where. So the child sets an alarm a little before each program's deadline, and if
the program is still running then, it sends one extra line naming the innermost function of
the submission on the stack: {"i": index, "stuck": {"module", "name", "file", "line"}}. The
parent trusts it only for a program that did then time out (graders/grading/hang_report.py).

A fresh child is told the functions earlier children were stopped in ("hanging" in its
request). Each is replaced, as its module is imported, by a stand-in that raises `KnownFailure`
at once: a test or part that calls it again fails without spending its own time budget.
Only plain functions and methods can be replaced (a nested function is remade by each call of
its parent); a hang elsewhere is just stopped at its deadline, as before.

A module of the submission that ends the process when imported (`os._exit` in nn.py) would
cost a fresh child for every later program that imports it. So the child says when it starts
and ends importing each module of the submission ({"i", "importing": name} and {"i",
"imported": name}); a fresh child is told the modules ("exiting") whose import a child never
came back from, and importing one raises `KnownFailure` at once.
"""

import importlib.machinery
import json
import os
import signal
import sys
import types

from code_names import qualified

REPORT_AT = 0.8  # share of a program's time after which the child says where it is


PACKAGE = "minigrad"
_now = {"channel": 1, "index": 0}  # the answer channel, and the program running


class KnownFailure(BaseException):
    """Raised in place of a function an earlier child was stopped in, or of importing a module
    an earlier child exited in. A BaseException, so that an `except Exception` of the submission
    cannot swallow it and go on as if it had returned."""


def _say(note: dict) -> None:
    os.write(_now["channel"], (json.dumps({"i": _now["index"], **note}) + "\n").encode())


def start(channel: int, hanging: list[dict], exiting: list[str]) -> None:
    """Before any program: watch every import of the submission's modules, replacing each
    `{"module", "name"}` in `hanging` as its module is imported, and stopping at once the
    import of each module in `exiting`."""
    _now["channel"] = channel
    names: dict[str, list[str]] = {name: [] for name in exiting}
    for entry in hanging:
        names.setdefault(entry["module"], []).append(entry["name"])
    sys.meta_path.insert(0, _Finder(names, set(exiting)))


def watch(index: int, seconds: float | None, folder: str) -> None:
    """Arm the alarm for program `index`, which the parent stops after `seconds`."""
    _now["index"] = index
    if not seconds:
        return

    def report(signum: int, frame: types.FrameType | None) -> None:
        while frame is not None and not frame.f_code.co_filename.startswith(folder):
            frame = frame.f_back
        if frame is None:  # not in the submission's code: nothing to name
            return
        code = frame.f_code
        stuck = {
            "module": frame.f_globals.get("__name__"),
            "name": qualified(code),
            "file": os.path.basename(code.co_filename),
            "line": frame.f_lineno,
        }
        _say({"stuck": stuck})

    signal.signal(signal.SIGALRM, report)
    signal.setitimer(signal.ITIMER_REAL, seconds * REPORT_AT)


def unwatch() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


class _Finder:
    """Finds the submission's modules as Python would, and has their loader say the import."""

    def __init__(self, names: dict[str, list[str]], exiting: set[str]) -> None:
        self.names, self.exiting = names, exiting

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] != PACKAGE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self.names.get(fullname, []), fullname in self.exiting)
        return spec


class _Loader:
    """A module's own loader, which then replaces the named functions (no importlib.abc: it
    would cost every child 30 ms to import)."""

    def __init__(self, loader: object, names: list[str], exits: bool) -> None:
        self.loader, self.names, self.exits = loader, names, exits

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        if self.exits:
            raise KnownFailure(module.__name__)
        _say({"importing": module.__name__})
        try:
            self.loader.exec_module(module)
        finally:
            _say({"imported": module.__name__})
        for name in self.names:
            _replace(module, name)


def _replace(module: types.ModuleType, name: str) -> None:
    """Put a stand-in wherever the owner of `name` (its module or class) holds that function,
    under every attribute name (`__radd__ = __add__` is the same hang)."""
    *path, _ = name.split(".")
    owner: object = module
    for part in path:
        owner = getattr(owner, part, None)
        if not isinstance(owner, type):
            return
    for attribute, value in list(vars(owner).items()):
        function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(function, types.FunctionType) and function.__qualname__ == name:
            stand_in = _stand_in(f"{module.__name__}:{name}")
            setattr(owner, attribute, type(value)(stand_in) if function is not value else stand_in)


def _stand_in(key: str) -> types.FunctionType:
    def stopped(*args: object, **kwargs: object) -> None:
        raise KnownFailure(key)

    return stopped
