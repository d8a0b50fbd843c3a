"""Pictures of a computation graph: one box per value, one small node per operation.

`to_dot` needs nothing installed and returns Graphviz DOT text. `draw` renders it to SVG or
PNG through the `graphviz` package, which needs the Graphviz `dot` program on the PATH.

Both take a `Value` (part 1: a node per number, its inputs in `_prev`, its operation in
`_op`) or a `Tensor` (part 4: a node per array, made by the `Function` in `_creator`, whose
`inputs` are the tensors it read). Nothing here imports either class, so a picture of one
engine never needs the other to load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

MAX_SHOWN = 6  # a tensor box shows its numbers when it has at most this many, else only its shape


def _inputs(node) -> tuple:
    """The nodes `node` was computed from: a Value's `_prev`, or the inputs of a Tensor's `_creator`."""
    if hasattr(node, "_creator"):
        return tuple(node._creator.inputs) if node._creator is not None else ()
    return tuple(node._prev)


def _operation(node) -> str:
    """What made `node`: a Value's `_op`, or the name of a Tensor's Function ('' for a leaf)."""
    if hasattr(node, "_creator"):
        return type(node._creator).__name__ if node._creator is not None else ""
    return node._op


def _nodes_and_edges(root) -> tuple[list, list[tuple]]:
    """Walk the graph without recursion; edges point from input to output."""
    nodes, edges, seen, stack = [], [], {id(root)}, [root]
    while stack:
        v = stack.pop()
        nodes.append(v)
        for child in _inputs(v):
            edges.append((child, v))
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return nodes, edges


def _escape(text: str) -> str:
    """Backslash the characters that mean something inside a DOT record label."""
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in text)


def _numbers(array) -> str:
    """A tensor's numbers when there are few, else its shape (`shape (64, 10)`)."""
    if array is None:
        return "None"
    if array.size > MAX_SHOWN:
        return f"shape {tuple(array.shape)}"
    return " ".join(f"{x:.4g}" for x in array.reshape(-1))


def _label(v) -> str:
    if hasattr(v, "_creator"):
        grad = f" | grad {_escape(_numbers(v.grad))}" if v.requires_grad else ""
        return f"{{ data {_escape(_numbers(v.data))}{grad} }}"
    label = f"{_escape(v.label)} | " if v.label else ""
    return f"{{ {label}data {v.data:.4f} | grad {v.grad:.4f} }}"


def to_dot(root) -> str:
    """The graph that produced `root` (a Value or a Tensor) as DOT text, left to right: each
    box shows a node's data and grad (a Tensor's numbers when it has a few, else its shape)."""
    nodes, edges = _nodes_and_edges(root)
    lines = ["digraph minigrad {", "  rankdir=LR;"]
    for v in nodes:
        lines.append(f'  v{id(v)} [shape=record, label="{_label(v)}"];')
        if op := _operation(v):
            lines.append(f'  v{id(v)}op [label="{op}"];')
            lines.append(f"  v{id(v)}op -> v{id(v)};")
    for child, parent in edges:
        lines.append(f"  v{id(child)} -> v{id(parent)}op;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(root, path: str | Path, format: str = "svg") -> Path:
    """Render the graph to `path` (suffix added from `format`) and return the file written."""
    if shutil.which("dot") is None:
        raise RuntimeError(
            "drawing needs the Graphviz 'dot' program (Debian: apt-get install graphviz); "
            "to_dot(value) still gives the DOT text"
        )
    import graphviz

    source = graphviz.Source(to_dot(root))
    return Path(source.render(outfile=Path(path).with_suffix(f".{format}"), format=format, cleanup=True))
