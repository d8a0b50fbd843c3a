"""Whether a submission's answer matches the reference's: exact types, finite numbers within
tolerance, the same shapes. Answers arrive through the protocol (protocol.py), so they are
plain JSON values: numbers, strings, lists and arrays as the child's `array()` sends them.
"""

from __future__ import annotations

import math


def is_number(x: object) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def is_array(x: object) -> bool:
    """An array answer as the child's `array()` sends it: {"shape": [3, 1], "values": [...]}."""
    return (
        isinstance(x, dict)
        and set(x) == {"shape", "values"}
        and isinstance(x["shape"], list)
        and all(type(n) is int and n >= 0 for n in x["shape"])
    )


def close(got: object, want: object, rtol: float, atol: float) -> bool:
    """Exact types, finite numbers, |got - want| <= atol + rtol * |want|, same shapes for lists
    and for arrays (whose shapes are compared first, then their values element by element)."""
    if is_array(want):
        return is_array(got) and got["shape"] == want["shape"] and close(got["values"], want["values"], rtol, atol)
    if isinstance(want, list):
        return (
            isinstance(got, list) and len(got) == len(want) and all(close(g, w, rtol, atol) for g, w in zip(got, want))
        )
    if isinstance(want, str):
        return type(got) is str and got == want
    if not is_number(want):
        return False
    if not is_number(got):
        return False
    try:
        return abs(got - want) <= atol + rtol * abs(want)
    except OverflowError:
        return False
