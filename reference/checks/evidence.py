"""What the student's graph shows about a wrong gradient, said as where and why.

A gradient of 0.0 has several causes that give the same numbers: a root whose `grad` was never
set to 1.0, an operator that never attached its `_backward` to `out`, or a backward pass that
runs the `_backward`s inputs first. The same three messages for all three send a student to
the wrong line, so the graph the student's code left is read instead: the root's own `grad`,
the `_backward` each node holds, and (run again, each `_backward` recorded) the order in which
`backward()` calls them.
"""

from __future__ import annotations

from feedback import close, fail
from student import located

SEED = (
    "after backward() the root's own grad is {got!r}, not 1.0: set `self.grad = 1.0` before running "
    "the `_backward`s (d root / d root = 1); every other gradient starts from it, so without it they stay 0"
)
UNATTACHED = (
    "the node made by {op} still holds the `_backward` every Value starts with, which does nothing: "
    "attach the operator's own with `out._backward = _backward` before `return out`"
)
ORDER = (
    "backward() ran the `_backward` of {child} before the `_backward` of the node made by {node} it feeds, "
    "so the gradient had not reached it yet: run them over `topological_order(self)` reversed, output first"
)
MISSED = (
    "backward() ran the `_backward` of {ran} of the graph's {count} computed nodes: "
    "run it once for every node of `topological_order(self)`"
)


def nodes(root) -> list:
    """Every node under `root` through `_prev`, root first, each once (no recursion: part 2's
    graphs are thousands of nodes deep)."""
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            found.append(node)
            stack.extend(getattr(node, "_prev", ()))
    return found


def _made_by(node) -> str:
    op = getattr(node, "_op", "")
    return f"`{op}`" if op else "an operator"


def _idle(graph: list) -> list:
    """The computed nodes whose `_backward` is still the do-nothing one a new Value gets."""
    if not graph:
        return []
    try:
        default = type(graph[0])(0.0)._backward.__code__
    except Exception:  # noqa: BLE001 - a Value that cannot be made this way shows nothing here
        return []
    held = ((n, getattr(n, "_backward", None)) for n in graph if getattr(n, "_prev", ()))
    return [n for n, backward in held if getattr(backward, "__code__", None) is default]


def expect_local(got, want, out, method: object, *, what, inputs, hint, rtol=1e-6, atol=1e-9) -> None:
    """expect_close for a gradient that one operator's `_backward`s left (the checks' own walk
    ran them): a wrong one names the student's `_backward` that ran, or says none was
    attached, as a crash names its line."""
    if not close(got, want, rtol, atol):
        where, seen = local(out, method)
        fail(what, inputs, want, got, seen or hint, where)


def local(out, method: object) -> tuple[str, str | None]:
    """For a wrong gradient of one operator (`method`, the student's `Value.__sub__`): where it
    came from (the operator, and the `_backward`s of the operators it is built from) and, when
    its graph shows one was never attached, a hint that says so. A graph this cannot read (a
    `_prev` that is not a collection) names the operator alone: the failure is said all the same."""
    try:
        return _local(out, method)
    except Exception:  # noqa: BLE001 - the student's objects: anything may go wrong reading them
        return located(method), None


def _local(out, method: object) -> tuple[str, str | None]:
    graph = nodes(out)
    whole = located(method)
    if idle := _idle(graph):
        return whole, UNATTACHED.format(op=_made_by(idle[0]))
    own = f"{getattr(method, '__qualname__', '')}.<locals>."
    closures = [n._backward for n in graph if getattr(n, "_prev", ())]
    ran = sorted({where for f in closures if (where := located(f))})
    if ran and all(getattr(f, "__qualname__", "").startswith(own) for f in closures):
        return ran[0], None
    return (f"{whole}, built from {' and '.join(ran)}" if whole and ran else whole or ", ".join(ran)), None


def after_backward(root) -> str | None:
    """Why `root.backward()` left a wrong gradient, when the graph shows it: the root not
    seeded, a `_backward` never attached, the `_backward`s run inputs first or not at all.
    Runs the student's backward() once more, recording each `_backward` it calls; None when
    nothing in the graph explains the wrong value, or the graph cannot be read (a crash in
    backward() is a different mistake, that its own check says)."""
    try:
        return _after_backward(root)
    except Exception:  # noqa: BLE001 - the student's objects: anything may go wrong reading them
        return None


def _after_backward(root) -> str | None:
    if not close(getattr(root, "grad", None), 1.0):
        return SEED.format(got=getattr(root, "grad", None))
    graph = nodes(root)
    if idle := _idle(graph):
        return UNATTACHED.format(op=_made_by(idle[0]))
    calls: list[int] = []
    for node in graph:
        node._backward = _recording(node._backward, id(node), calls)
    root.backward()
    first = {}
    for position, key in enumerate(calls):
        first.setdefault(key, position)
    computed = [n for n in graph if getattr(n, "_prev", ())]
    for node in computed:
        for child in sorted(node._prev, key=lambda c: not getattr(c, "_prev", ())):  # a computed node says more
            if first.get(id(child), len(calls)) < first.get(id(node), -1):
                shown = f"the node made by {_made_by(child)}" if getattr(child, "_prev", ()) else "an input"
                return ORDER.format(child=shown, node=_made_by(node))
    if missed := [n for n in computed if id(n) not in first]:
        return MISSED.format(ran=f"only {len(computed) - len(missed)}", count=len(computed))
    return None


def _recording(backward, key: int, calls: list[int]):
    def recorded() -> None:
        calls.append(key)
        backward()

    return recorded
