"""Hangs, seen from the parent: where a stopped program was, and the one message for that hang.

Near a program's deadline the child says which function of the submission it is in
(graders/child/hangs.py). The line is the submission's own process talking, so it is read
only in its exact shape and believed only for a program that then timed out: a forged line
can at most name, in the student's own grade, a function that did not hang. Once a hang is
named, every later program that calls that function is stopped at once by the fresh child,
and fails here with the same message, so a hang costs its time once per grading, not once
per test or part.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .protocol import Outcome, failure

KNOWN = "KnownHang"  # the error the child raises in place of a function that hangs
MODULE = re.compile(r"minigrad(\.[A-Za-z_]\w*)*")
NAME = re.compile(r"[A-Za-z_<][\w<>.]*")
FILE = re.compile(r"[\w.-]+\.py")
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


def parse(line: bytes, due: int) -> Stuck | None:
    """The child's report for program `due`, or None for any other line."""
    try:
        data = json.loads(line)
        if not isinstance(data, dict) or set(data) != {"i", "stuck"} or data["i"] != due:
            return None
        stuck = data["stuck"]
        module, name, file, number = (stuck[key] for key in ("module", "name", "file", "line"))
    except (ValueError, RecursionError, TypeError, KeyError):
        return None
    texts = (module, name, file)
    if not all(isinstance(text, str) and len(text) <= NAME_LIMIT for text in texts) or type(number) is not int:
        return None
    if not (MODULE.fullmatch(module) and NAME.fullmatch(name) and FILE.fullmatch(file)):
        return None
    return Stuck(module, name, file, number)


def message(timeout: float, stuck: Stuck | None) -> str:
    where = f" in {stuck.where()}" if stuck else ""
    return f"took too long (over {timeout:g} s); look for an endless loop{where}"


def request(hangs: dict[str, tuple[Stuck, str]]) -> list[dict]:
    """The functions a fresh child must stop at once."""
    return [{"module": stuck.module, "name": stuck.name} for stuck, _ in hangs.values() if stuck.replaceable]


def stopped(outcome: Outcome, hangs: dict[str, tuple[Stuck, str]]) -> Outcome:
    """A program the child stopped in a known hang fails with that hang's own message."""
    error = outcome.error
    if error is None or error.get("type") != KNOWN or error.get("message") not in hangs:
        return outcome
    return Outcome([], failure(hangs[error["message"]][1]))
