"""Hangs and exits, seen from the parent: where a stopped program was, which module a child
exited while importing, and the one message for each.

Near a program's deadline the child says which function of the submission it is in
(graders/child/hangs.py). The line is the submission's own process talking, so it is read
only in its exact shape and believed only for a program that then timed out: a forged line
can at most name, in the student's own grade, a function that did not hang. Once a hang is
named, every later program that calls that function is stopped at once by the fresh child,
and fails here with the same message, so a hang costs its time once per grading, not once
per test or part. Likewise a module whose import ended the child (it called exit): every later
import of it fails at once, with the message of that first exit, instead of costing a fresh
child each time. Only an exit the child chose counts (a signal may be the machine's doing).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .protocol import LOCATION, Outcome, failure

KNOWN = "KnownFailure"  # the error the child raises in place of a known hang or exit
MODULE = re.compile(r"minigrad(\.[A-Za-z_]\w*)*")
NAME_LIMIT = 200


@dataclass(frozen=True)
class Stuck:
    """The innermost submission function a program was running near its deadline."""

    module: str
    name: str
    file: str
    line: int

    @property
    def replaceable(self) -> bool:
        """A plain function or method; a nested one is remade by each call of its parent."""
        return "<" not in self.name

    @property
    def key(self) -> str:
        """How the child names the hang when it stops a call at once (child/hangs.py)."""
        return f"{self.module}:{self.name}"

    def where(self) -> str:
        return f"{self.name} ({self.file}, line {self.line})"


@dataclass(frozen=True)
class Import:
    """A module of the submission the child began (or, `done`, ended) importing."""

    module: str
    done: bool


def parse(line: bytes, due: int) -> Stuck | Import | None:
    """The child's note on program `due`, or None for any other line."""
    try:
        data = json.loads(line)
        if not isinstance(data, dict) or len(data) != 2 or data.get("i") != due:
            return None
        for kind in ("importing", "imported"):
            if isinstance(module := data.get(kind), str) and len(module) <= NAME_LIMIT and MODULE.fullmatch(module):
                return Import(module, kind == "imported")
        stuck = data["stuck"]
        module, name, file, number = (stuck[key] for key in ("module", "name", "file", "line"))
    except (ValueError, RecursionError, TypeError, KeyError):
        return None
    if not all(isinstance(text, str) and len(text) <= NAME_LIMIT for text in (module, name, file)):
        return None
    where = {"function": name, "file": file, "line": number}  # checked as any error's place is
    if not (MODULE.fullmatch(module) and all(LOCATION[key](value) for key, value in where.items())):
        return None
    return Stuck(module, name, file, number)


def message(timeout: float, stuck: Stuck | None) -> str:
    where = f" in {stuck.where()}" if stuck else ""
    return f"took too long (over {timeout:g} s); look for an endless loop{where}"


HUNG = re.compile(
    r"took too long \(over [\d.e+]+ s\); look for an endless loop in ([\w<>.]+) \((\w+\.py), line (\d+)\)"
)


def hung_in(error: dict) -> tuple[str, str, int] | None:
    """(function, file, line) of the hang a program's failure names: the first program that hung
    there and every later one stopped at once (`Known`) fail with the same message, and are one
    root cause. Read back from the message `message` made, in its exact shape; a child that
    forges it as its own error can at most misname, in its own grade, where it hung."""
    found = HUNG.fullmatch(str(error.get("message") or "")) if error.get("type") == "ChildFailure" else None
    if found is None or not all(LOCATION[key](value) for key, value in (("function", found[1]), ("file", found[2]))):
        return None
    return found[1], found[2], int(found[3])


class Known:
    """What earlier children of a grading hung in or exited importing, and the message that
    each later call or import gets."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}  # a function's key or a module's name -> message
        self.hanging: list[dict] = []
        self.exiting: list[str] = []

    def hang(self, stuck: Stuck, message: str) -> None:
        if stuck.key not in self.messages and stuck.replaceable:
            self.hanging.append({"module": stuck.module, "name": stuck.name})
        self.messages[stuck.key] = message

    def exit(self, module: str, message: str) -> None:
        if module not in self.messages:
            self.exiting.append(module)
        self.messages[module] = message

    def request(self) -> dict:
        """What a fresh child must stop at once."""
        return {"hanging": self.hanging, "exiting": self.exiting}

    def stopped(self, outcome: Outcome) -> Outcome:
        """A program the child stopped at a known hang or exit fails with its first message."""
        error = outcome.error
        if error is None or error.get("type") != KNOWN or error.get("message") not in self.messages:
            return outcome
        return Outcome([], failure(self.messages[error["message"]]))
