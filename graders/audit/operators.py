"""The single changes a mutant makes, as a table over Python's own syntax tree.

Each operator looks at one node and proposes `Change`s: the node to replace, the node the
syntax tree should hold instead (to verify the edit, see mutants.py), and the new source text
of the node's span. The text is spliced into the original source rather than regenerated with
`ast.unparse`, so a mutant's diff shows the one change and nothing else.

Why not a mutation library: cosmic-ray's operators can be called without its runner, but the
package brings aiohttp, SQLAlchemy, GitPython and ten more for a few tables, and has neither a
dropped statement nor swapped arguments; mutmut's operators are internal to its trampoline
runner (libcst, Textual). Both would still need this package's hole finding and grading.

    arithmetic  + - * / ** @ // % swapped for a neighbour; a unary minus dropped
    comparison  < <= > >= == != is in swapped for their boundary or negation; and/or; not dropped
    constant    a number n -> n + 1, True <-> False, a one-letter answer A -> B (the quiz)
    augmented   x += y -> x = y (any augmented assignment)
    statement   a statement -> pass (not a return, a def or a docstring)
    swap        two neighbouring call arguments, the operands of a non-commutative operator,
                two neighbouring values of a returned tuple or names of an unpacking
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    operator: str
    target: ast.AST  # the node replaced
    new: ast.AST  # what the syntax tree holds in its place
    text: str  # the new source of the target's span


class Source:
    """A file's text with node positions turned into offsets (columns count UTF-8 bytes)."""

    def __init__(self, text: str):
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def start(self, node: ast.AST) -> int:
        return self.starts[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.starts[node.end_lineno - 1] + node.end_col_offset

    def segment(self, node: ast.AST) -> str:
        return self.data[self.start(node) : self.end(node)].decode("utf-8")

    def rewrite(self, node: ast.AST, edits: list[tuple[int, int, str]]) -> str:
        """`node`'s text with each (start, end, text) edit made; edits in order, not overlapping."""
        pieces, at = [], self.start(node)
        for start, end, text in edits:
            pieces += [self.data[at:start].decode("utf-8"), text]
            at = end
        return "".join(pieces) + self.data[at : self.end(node)].decode("utf-8")

    def gap(self, left: ast.AST, right: ast.AST) -> tuple[int, int, str]:
        """The text between two nodes (an operator and its spaces, maybe parentheses)."""
        start, end = self.end(left), self.start(right)
        return start, end, self.data[start:end].decode("utf-8")


# The three tables below are unformatted (fmt: skip): each swap reads as a pair, several to a line.
ARITHMETIC = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.Pow: ast.Mult, ast.MatMult: ast.Mult, ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv,
}  # fmt: skip
NOT_COMMUTATIVE = (ast.Sub, ast.Div, ast.Pow, ast.MatMult, ast.FloorDiv, ast.Mod)
COMPARISON = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}  # fmt: skip
SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.MatMult: "@",
    ast.FloorDiv: "//", ast.Mod: "%", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
    ast.NotIn: "not in", ast.And: "and", ast.Or: "or",
}  # fmt: skip
ANSWERS = "ABCD"  # the quiz's multiple-choice answers


def _with(node: ast.AST, **fields) -> ast.AST:
    new = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


def _swap_symbol(gap: tuple[int, int, str], old: type, new: type) -> tuple[int, int, str]:
    start, end, text = gap
    return start, end, text.replace(SYMBOLS[old], SYMBOLS[new], 1)


def arithmetic(node: ast.AST, src: Source) -> Iterator[Change]:
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        new_op = ARITHMETIC[type(node.op)]
        edit = _swap_symbol(src.gap(node.left, node.right), type(node.op), new_op)
        yield Change("arithmetic", node, _with(node, op=new_op()), src.rewrite(node, [edit]))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield Change("arithmetic", node, copy.deepcopy(node.operand), src.segment(node.operand))


def comparison(node: ast.AST, src: Source) -> Iterator[Change]:
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            new_op = COMPARISON[type(op)]
            ops = [*node.ops[:i], new_op(), *node.ops[i + 1 :]]
            edit = _swap_symbol(src.gap(operands[i], operands[i + 1]), type(op), new_op)
            yield Change("comparison", node, _with(node, ops=ops), src.rewrite(node, [edit]))
    if isinstance(node, ast.BoolOp):
        new_op = ast.Or if isinstance(node.op, ast.And) else ast.And
        edits = [_swap_symbol(src.gap(a, b), type(node.op), new_op) for a, b in zip(node.values, node.values[1:])]
        yield Change("comparison", node, _with(node, op=new_op()), src.rewrite(node, edits))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield Change("comparison", node, copy.deepcopy(node.operand), src.segment(node.operand))


def constant(node: ast.AST, src: Source) -> Iterator[Change]:
    if not isinstance(node, ast.Constant):
        return
    value = node.value
    if isinstance(value, bool):
        new = not value
    elif isinstance(value, int | float):
        new = value + 1
    elif isinstance(value, str) and len(value) == 1 and value in ANSWERS:
        new = ANSWERS[(ANSWERS.index(value) + 1) % len(ANSWERS)]
    else:
        return
    yield Change("constant", node, ast.Constant(new), repr(new))


def augmented(node: ast.AST, src: Source) -> Iterator[Change]:
    if isinstance(node, ast.AugAssign):
        new = ast.Assign(targets=[copy.deepcopy(node.target)], value=copy.deepcopy(node.value))
        yield Change("augmented", node, new, f"{src.segment(node.target)} = {src.segment(node.value)}")


def statement(node: ast.AST, src: Source) -> Iterator[Change]:
    kept = (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass, ast.Global, ast.Nonlocal)
    docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    if isinstance(node, ast.stmt) and not isinstance(node, kept) and not docstring:
        yield Change("statement", node, ast.Pass(), "pass")


def swap(node: ast.AST, src: Source) -> Iterator[Change]:
    if isinstance(node, ast.Call):
        yield from _swap_neighbours(node, "args", src)
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
        yield from _swap_neighbours(node.value, "elts", src)
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
        yield from _swap_neighbours(node.targets[0], "elts", src)
    if isinstance(node, ast.BinOp) and isinstance(node.op, NOT_COMMUTATIVE):
        left, right = src.segment(node.left), src.segment(node.right)
        edits = [(src.start(node.left), src.end(node.left), right), (src.start(node.right), src.end(node.right), left)]
        new = _with(node, left=copy.deepcopy(node.right), right=copy.deepcopy(node.left))
        yield Change("swap", node, new, src.rewrite(node, edits))


def _swap_neighbours(node: ast.AST, field: str, src: Source) -> Iterator[Change]:
    items = getattr(node, field)
    for i in range(len(items) - 1):
        a, b = items[i], items[i + 1]
        if isinstance(a, ast.Starred) or isinstance(b, ast.Starred) or ast.dump(a) == ast.dump(b):
            continue
        swapped = [*items[:i], copy.deepcopy(b), copy.deepcopy(a), *items[i + 2 :]]
        edits = [(src.start(a), src.end(a), src.segment(b)), (src.start(b), src.end(b), src.segment(a))]
        yield Change("swap", node, _with(node, **{field: swapped}), src.rewrite(node, edits))


OPERATORS: dict[str, Callable[[ast.AST, Source], Iterator[Change]]] = {
    "arithmetic": arithmetic,
    "comparison": comparison,
    "constant": constant,
    "augmented": augmented,
    "statement": statement,
    "swap": swap,
}
