"""Checking nbgrader region markers before anything is stripped.

nbgrader already refuses nested and unclosed regions, but it silently drops an `END` that has
no `BEGIN` and cannot say which file or line is at fault. This check names both.
"""

from __future__ import annotations

from dataclasses import dataclass

REGIONS = {"SOLUTION": "### BEGIN SOLUTION", "HIDDEN TESTS": "### BEGIN HIDDEN TESTS"}


class MarkerError(ValueError):
    """A solution or hidden-tests region that is not well formed."""


@dataclass(frozen=True)
class Region:
    kind: str
    begin: int  # 1-based line of the BEGIN marker
    end: int  # 1-based line of the END marker


def find_regions(text: str, path: str = "<text>") -> list[Region]:
    """Every region in `text`, in order; raises `MarkerError` on any malformed marker."""
    regions, open_kind, open_line = [], None, 0
    for number, line in enumerate(text.splitlines(), start=1):
        for kind in REGIONS:
            if f"BEGIN {kind}" in line:
                if open_kind is not None:
                    raise MarkerError(
                        f"{path}:{number}: BEGIN {kind} inside the {open_kind} region "
                        f"opened at line {open_line}; regions cannot nest"
                    )
                open_kind, open_line = kind, number
            elif f"END {kind}" in line:
                if open_kind != kind:
                    raise MarkerError(f"{path}:{number}: END {kind} without a matching BEGIN {kind}")
                regions.append(Region(kind, open_line, number))
                open_kind = None
    if open_kind is not None:
        raise MarkerError(f"{path}:{open_line}: BEGIN {open_kind} is never closed")
    return regions
