"""Pictures of a computation graph: one box per value, one small node per operation.

`to_dot` needs nothing installed and returns Graphviz DOT text. `draw` renders it to SVG or
PNG through the `graphviz` package, which needs the Graphviz `dot` program on the PATH.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .engine import Value


def _nodes_and_edges(root: Value) -> tuple[list[Value], list[tuple[Value, Value]]]:
    """Walk the graph without recursion; edges point from input to output."""
    nodes, edges, seen, stack = [], [], {root}, [root]
    while stack:
        v = stack.pop()
        nodes.append(v)
        for child in v._prev:
            edges.append((child, v))
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return nodes, edges


def _escape(text: str) -> str:
    """Backslash the characters that mean something inside a DOT record label."""
    return "".join("\\" + c if c in '{}|<>"\\' else c for c in text)


def to_dot(root: Value) -> str:
    """The graph that produced `root` as DOT text, left to right, with data and grad."""
    nodes, edges = _nodes_and_edges(root)
    lines = ["digraph minigrad {", "  rankdir=LR;"]
    for v in nodes:
        label = f"{_escape(v.label)} | " if v.label else ""
        lines.append(f'  v{id(v)} [shape=record, label="{{ {label}data {v.data:.4f} | grad {v.grad:.4f} }}"];')
        if v._op:
            lines.append(f'  v{id(v)}op [label="{v._op}"];')
            lines.append(f"  v{id(v)}op -> v{id(v)};")
    for child, parent in edges:
        lines.append(f"  v{id(child)} -> v{id(parent)}op;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(root: Value, path: str | Path, format: str = "svg") -> Path:
    """Render the graph to `path` (suffix added from `format`) and return the file written."""
    if shutil.which("dot") is None:
        raise RuntimeError(
            "drawing needs the Graphviz 'dot' program (Debian: apt-get install graphviz); "
            "to_dot(value) still gives the DOT text"
        )
    import graphviz

    source = graphviz.Source(to_dot(root))
    return Path(source.render(outfile=Path(path).with_suffix(f".{format}"), format=format, cleanup=True))
