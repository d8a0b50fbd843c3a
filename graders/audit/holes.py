"""Where the students write code: the reference's solution regions, by function.

A hole is a `### BEGIN SOLUTION` / `### END SOLUTION` region (course/markers.py, the markers
the release strips). The audit mutates only the code inside holes: the given code around them
is the course's, not the students'. A hole belongs to the function that holds it (its
qualified name, `Value.__add__`); a hole at the top of a file (the quiz's answers) is named by
the variable it assigns.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course.markers import find_regions


@dataclass(frozen=True)
class Hole:
    file: str  # the file's name inside minigrad/, e.g. "engine.py"
    function: str  # the qualified name of the function holding it, or the answer it assigns
    begin: int  # 1-based line of the BEGIN marker
    end: int  # 1-based line of the END marker

    def holds(self, node: ast.AST) -> bool:
        """Whether `node` lies wholly between the markers."""
        return self.begin < node.lineno and node.end_lineno < self.end


def holes(file: str, source: str) -> list[Hole]:
    """Every solution region of `source`, named by its function."""
    tree = ast.parse(source)
    found = []
    for region in find_regions(source, file):
        if region.kind != "SOLUTION":
            continue
        name = _enclosing(tree, region.begin) or _assigned(tree, region.begin, region.end)
        found.append(Hole(file, name, region.begin, region.end))
    return found


def package_holes(package: Path) -> list[Hole]:
    """The holes of every Python file of a minigrad package, file by file."""
    return [hole for path in sorted(package.glob("*.py")) for hole in holes(path.name, path.read_text())]


def _enclosing(tree: ast.Module, line: int) -> str | None:
    """The qualified name of the innermost function around `line`, or None at the top."""
    best = None
    for qualname, node in _definitions(tree.body, ""):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno < line <= node.end_lineno:
            best = qualname
    return best


def _definitions(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.stmt]]:
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            qualname = f"{prefix}{node.name}"
            yield qualname, node
            if isinstance(node, ast.ClassDef):
                yield from _definitions(node.body, f"{qualname}.")


def _assigned(tree: ast.Module, begin: int, end: int) -> str:
    """The names a top-level region assigns (the quiz: one answer per region)."""
    names = [
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign) and begin < node.lineno < end
        for target in node.targets
        if isinstance(target, ast.Name)
    ]
    return ", ".join(names) or f"<lines {begin}-{end}>"
