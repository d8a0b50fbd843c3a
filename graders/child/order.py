"""Set order that follows the program, not the memory layout.

A `Value` hashes by its id() unless its author says otherwise, so iterating a node's `_prev`
set visits parents in the order of their memory addresses, and so does a buggy `backward()`
that overwrites gradients instead of adding them. Addresses follow whatever the child ran
before: the same submission would score differently after a restart, a retried program or a
new version of this kit. Numbering each Value when it is first hashed, afresh for every
program, makes set order a function of the program alone; the reference is run the same way.
"""

import itertools

ATTRIBUTE = "_minigrad_grader_order"
numbers = itertools.count()


def restart() -> None:
    """Number from 0 again: called before each program."""
    global numbers
    numbers = itertools.count()


def _numbered_hash(self) -> int:
    # Called several times per node by every set operation of backward(), so it reads the
    # instance's dict directly: one lookup, no exception on the first call.
    try:
        attributes = object.__getattribute__(self, "__dict__")
    except AttributeError:  # __slots__ without a __dict__: keep the id
        return object.__hash__(self)
    number = attributes.get(ATTRIBUTE)
    if number is None:
        number = attributes[ATTRIBUTE] = next(numbers)
    return number


def stabilize(value_class: object) -> None:
    """Give `value_class` numbered hashes, if it still hashes by identity."""
    if isinstance(value_class, type) and value_class.__hash__ is object.__hash__:
        value_class.__hash__ = _numbered_hash
