"""The wire between the parent and the child: what one line of a child's answer may say.

The child runs the student's code, so everything it sends is untrusted: a line is accepted
only in exactly the expected shape, and every string in it is trimmed here, in the parent,
to TEXT_LIMIT characters. A line in any other shape, however malformed or deep, is garbage
(the child loop then treats the program as unanswered).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

TEXT_LIMIT = 300  # characters kept of any string the child sends
DEPTH_LIMIT = 8  # nesting of lists in an answer
WORDS = ("type", "message", "where")  # every error's
LOCATION = {  # where a submission's error starts, when it has a frame or a line; each field's check
    "function": lambda x: isinstance(x, str) and re.fullmatch(r"[\w<>]+(\.[\w<>]+)*", x) is not None,
    "file": lambda x: isinstance(x, str) and re.fullmatch(r"\w+\.py", x) is not None,
    "line": lambda x: type(x) is int and 0 < x < 10**7,
    "code": lambda x: isinstance(x, str),
}


@dataclass
class Outcome:
    """What one program produced: its reads, or why it has none; for a measured program, the
    CPU seconds its child used, as the parent counted them (never a number the child sent)."""

    out: list
    error: dict | None
    cpu: float | None = None


def failure(message: str, kind: str = "ChildFailure") -> dict:
    return {"type": kind, "message": message, "where": None}


def parse_line(line: bytes, count: int) -> tuple[int, Outcome] | None:
    """Accept exactly {"i": int, "out": list, "error": null|{"type","message","where",...}};
    anything else, however malformed or deep, is garbage. Strings are trimmed here, in the
    parent: the child is never trusted to trim."""
    try:
        data = json.loads(line, parse_constant=_reject)
        if not isinstance(data, dict) or set(data) != {"i", "out", "error"}:
            return None
        if type(data["i"]) is not int or not 0 <= data["i"] < count or not isinstance(data["out"], list):
            return None
        return data["i"], Outcome(clean(data["out"], DEPTH_LIMIT), clean_error(data["error"]))
    except (ValueError, RecursionError, TypeError):
        return None


def clean(value: object, depth: int) -> object:
    """The answer with every string trimmed; nesting deeper than `depth` is garbage."""
    if isinstance(value, list):
        if depth == 0:
            raise ValueError("nested too deep")
        return [clean(v, depth - 1) for v in value]
    if isinstance(value, dict):
        return {str(k)[:TEXT_LIMIT]: clean(v, depth - 1) for k, v in value.items()} if depth else {}
    return value[:TEXT_LIMIT] if isinstance(value, str) else value


def clean_error(error: object) -> dict | None:
    """The error with its strings trimmed. Its three words ("type", "message", "where") are
    always there; where the trouble starts in the submission may follow, each field checked
    here as untrusted: `function` a Python qualified name, `file` a .py file's name, `line` a
    positive int, `code` any text (trimmed; made visible where it is shown)."""
    if error is None:
        return None
    if not isinstance(error, dict) or not set(WORDS) <= set(error) <= set(WORDS) | set(LOCATION):
        raise ValueError("malformed error")
    if not all(isinstance(error[key], (str, type(None))) for key in WORDS):
        raise ValueError("malformed error")
    cleaned = {k: v if v is None else v[:TEXT_LIMIT] for k, v in error.items() if k in WORDS}
    for key, valid in LOCATION.items():
        if key in error and valid(error[key]):
            cleaned[key] = error[key][:TEXT_LIMIT] if isinstance(error[key], str) else error[key]
    return cleaned


def _reject(token: str):
    raise ValueError(f"non-finite number {token}")
