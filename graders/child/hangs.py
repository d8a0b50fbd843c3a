"""Hangs, seen from inside the child: say where a program is stuck, and stop a known hang at once.

A program that never ends is stopped by the parent at its deadline; from outside, the parent
cannot tell where. So the child sets an alarm a little before each program's deadline, and if
the program is still running then, it sends one extra line naming the innermost function of
the submission on the stack: {"i": index, "stuck": {"module", "name", "file", "line"}}. The
parent trusts it only for a program that did then time out (graders/hang_report.py).

A fresh child is told the functions earlier children were stopped in ("hanging" in its
request). Each is replaced, as its module is imported, by a stand-in that raises `KnownHang`
at once: a test or part that calls it again fails without spending its own time budget.
Only plain functions and methods can be replaced (a nested function is remade by each call of
its parent); a hang elsewhere is just stopped at its deadline, as before.
"""

import importlib.machinery
import json
import os
import signal
import sys
import types

REPORT_AT = 0.8  # share of a program's time after which the child says where it is


class KnownHang(BaseException):
    """Raised in place of a function an earlier child was stopped in. A BaseException, so that
    an `except Exception` of the submission cannot swallow it and go on as if it had returned."""


def watch(channel: int, index: int, seconds: float | None, folder: str) -> None:
    """Arm the alarm for program `index`, which the parent stops after `seconds`."""
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
            "name": getattr(code, "co_qualname", code.co_name),
            "file": os.path.basename(code.co_filename),
            "line": frame.f_lineno,
        }
        os.write(channel, (json.dumps({"i": index, "stuck": stuck}) + "\n").encode())

    signal.signal(signal.SIGALRM, report)
    signal.setitimer(signal.ITIMER_REAL, seconds * REPORT_AT)


def unwatch() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def stop_at_once(hanging: list[dict]) -> None:
    """Replace each `{"module", "name"}` in `hanging` as soon as its module is imported."""
    names: dict[str, list[str]] = {}
    for entry in hanging:
        names.setdefault(entry["module"], []).append(entry["name"])
    if names:
        sys.meta_path.insert(0, _Finder(names))


class _Finder:
    """Finds the named modules as Python would, and has their loader replace the functions
    after the module's code has run."""

    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self.names[fullname])
        return spec


class _Loader:
    """A module's own loader, which then replaces the named functions (no importlib.abc: it
    would cost every child 30 ms to import)."""

    def __init__(self, loader: object, names: list[str]) -> None:
        self.loader, self.names = loader, names

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
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
        raise KnownHang(key)

    return stopped
