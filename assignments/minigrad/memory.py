"""How big is the graph? Counting the `Value` nodes that one computation builds.

An optional extension (bonus points only), at the end of lesson 3. A scalar engine makes one
node per number it computes: every product and sum of every neuron, for every sample, in
every step. Each node is a Python object with a set of inputs and a closure, a few hundred
bytes, so counting nodes tells you where the memory and time of training go, and why a
tensor engine (part 4), which makes one node per array operation, needs far fewer.
"""

from __future__ import annotations

from .engine import Value


def count_nodes(root: Value) -> int:
    """How many distinct `Value` nodes the graph under `root` holds, `root` included.

    A node used twice (in `a * a`, or a weight shared by every sample) counts once, and a
    node that does not feed `root` is not counted. The walk uses a loop and an explicit
    stack, not recursion, so graphs deeper than Python's recursion limit work too.

    Example: in e = (a * b + a) * (a * b + a), the nodes are a, b, a * b, a * b + a and e.
        >>> a, b = Value(2.0), Value(3.0)
        >>> d = a * b + a
        >>> count_nodes(d * d)
        5
    """
    # YOUR CODE HERE
    raise NotImplementedError()
