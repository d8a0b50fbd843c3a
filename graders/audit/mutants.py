"""Every mutant of the reference's holes: one change each, verified, deduplicated, capped.

A change is spliced into the source text (operators.py); the mutant is kept only when the
mutated file parses to exactly the syntax tree the change meant (if operator precedence would
regroup the spliced text, the text is put in parentheses and checked again), and when no
earlier mutant of the file has the same tree. Its id is a hash of its file, function and
changed lines, so it survives edits elsewhere in the file (the allow-list names mutants by it).
"""

from __future__ import annotations

import ast
import difflib
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .holes import Hole, holes
from .operators import OPERATORS, Change, Source


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    function: str
    operator: str
    line: int  # where the change starts
    source: str  # the whole mutated file
    diff: str  # a unified diff against the reference, one line of context

    @property
    def changed(self) -> list[str]:
        """The removed and added lines of the diff, as they read."""
        return [line for line in self.diff.splitlines() if line[:1] in "-+" and not line.startswith(("---", "+++"))]


def file_mutants(file: str, source: str) -> list[Mutant]:
    """Every verified, distinct mutant of the holes of one file, in source order."""
    tree, src = ast.parse(source), Source(source)
    places = _places(tree)
    made, ids, seen = [], set(), set()
    for hole in holes(file, source):
        scope = _scope(tree, hole)
        # Keyed by where the function starts too: Div.forward changed to `a * b` reads as Mul.forward.
        line = scope.lineno if scope is not tree else 0
        seen.add((line, ast.dump(scope)))
        for change in _changes(tree, hole, src):
            with _replaced(places, change):
                wanted = ast.dump(scope)
            key = (line, wanted)
            if key in seen or (mutated := _splice(src, change, scope, wanted)) is None:
                continue
            seen.add(key)
            mutant = _mutant(hole, change, source, mutated, ids)
            ids.add(mutant.id)
            made.append(mutant)
    return made


def package_mutants(package: Path) -> list[Mutant]:
    return [m for path in sorted(package.glob("*.py")) for m in file_mutants(path.name, path.read_text())]


def capped(mutants: list[Mutant], cap: int | None) -> tuple[list[Mutant], dict[str, int]]:
    """At most `cap` mutants per function: a stable sample (the lowest ids, which are hashes),
    and how many each capped function had ("fit (layers.py)": 20)."""
    by_function: dict[tuple[str, str], list[Mutant]] = {}
    for mutant in mutants:
        by_function.setdefault((mutant.file, mutant.function), []).append(mutant)
    kept, dropped = [], {}
    for (file, function), group in by_function.items():
        if cap is not None and len(group) > cap:
            dropped[f"{function} ({file})"] = len(group)
            chosen = {m.id for m in sorted(group, key=lambda m: m.id)[:cap]}
            group = [m for m in group if m.id in chosen]
        kept += group
    return kept, dropped


def _changes(tree: ast.Module, hole: Hole, src: Source) -> Iterator[Change]:
    for node in _nodes(tree, hole):
        for operator in OPERATORS.values():
            yield from operator(node, src)


def _nodes(tree: ast.Module, hole: Hole) -> Iterator[ast.AST]:
    """The hole's nodes, outside f-strings (their messages are not graded)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(inner) for inner in ast.walk(node))
            continue
        if hasattr(node, "lineno") and hole.holds(node):
            yield node


def _splice(src: Source, change: Change, scope: ast.AST, wanted: str) -> str | None:
    """The mutated file, or None when no spelling of the change parses to the meant tree
    (`wanted`: the dump of the function holding the change, once changed)."""
    start, end = src.start(change.target), src.end(change.target)
    spellings = [change.text] if isinstance(change.target, ast.stmt) else [change.text, f"({change.text})"]
    for text in spellings:
        mutated = (src.data[:start] + text.encode("utf-8") + src.data[end:]).decode("utf-8")
        try:
            if ast.dump(_same_place(ast.parse(mutated), scope)) == wanted:
                return mutated
        except SyntaxError:
            continue
    return None


def _scope(tree: ast.Module, hole: Hole) -> ast.AST:
    """The innermost function holding the hole (a change cannot reach outside it), or the
    whole file for a hole at its top."""
    inner: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno < hole.begin <= node.end_lineno:
            if inner is tree or node.lineno > inner.lineno:
                inner = node
    return inner


def _same_place(tree: ast.Module, scope: ast.AST) -> ast.AST:
    """`scope`'s node in another parse of the file: the function that starts where it starts."""
    if isinstance(scope, ast.Module):
        return tree
    for node in ast.walk(tree):
        if type(node) is type(scope) and (node.lineno, node.col_offset) == (scope.lineno, scope.col_offset):
            return node
    raise SyntaxError("the function moved")


def _places(tree: ast.Module) -> dict[int, tuple[ast.AST, str, int | None]]:
    """Where each node sits: its parent, the parent's field, the index in that field's list."""
    places = {}
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                places.update(
                    {id(item): (parent, name, i) for i, item in enumerate(value) if isinstance(item, ast.AST)}
                )
            elif isinstance(value, ast.AST):
                places[id(value)] = (parent, name, None)
    return places


@contextmanager
def _replaced(places: dict, change: Change) -> Iterator[None]:
    """The tree with the change's target swapped for its new node, for the block only."""
    parent, name, index = places[id(change.target)]
    field = getattr(parent, name)
    if index is None:
        setattr(parent, name, change.new)
    else:
        field[index] = change.new
    try:
        yield
    finally:
        if index is None:
            setattr(parent, name, field)
        else:
            field[index] = change.target


def _mutant(hole: Hole, change: Change, source: str, mutated: str, taken: set[str]) -> Mutant:
    diff = "".join(
        difflib.unified_diff(
            source.splitlines(keepends=True),
            mutated.splitlines(keepends=True),
            f"reference/minigrad/{hole.file}",
            f"mutant/minigrad/{hole.file}",
            n=1,
        )
    )
    changed = "\n".join(line.strip() for line in diff.splitlines()[2:] if line[:1] in "-+")
    digest = hashlib.sha1(f"{hole.file}\n{hole.function}\n{changed}".encode()).hexdigest()
    mutant_id, n = digest[:10], 2
    while mutant_id in taken:  # the same change on two identical lines of one function
        mutant_id, n = f"{digest[:10]}-{n}", n + 1
    return Mutant(mutant_id, hole.file, hole.function, change.operator, change.target.lineno, mutated, diff)
