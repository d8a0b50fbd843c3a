"""The qualified name of running code (`Value.__mul__`, `Value.__mul__.<locals>._backward`), on
every Python the kit supports.

Hangs are named, replaced and reported by this name, and a failure's "Start here" names the
function it is in: a bare `__mul__` matches no method, so on Python 3.10 an endless loop would
cost every later test its whole time budget again, and the message would lose its function.
Code objects carry `co_qualname` from Python 3.11 on; before, only the function that runs the
code knows it, as its `__qualname__`.
"""

import gc
import types


def qualified(code: types.CodeType) -> str:
    """`code`'s qualified name: its own from 3.11 on; on 3.10 the `__qualname__` of a function
    running it (found among the objects that refer to the code), else its bare name."""
    name = getattr(code, "co_qualname", None)
    if isinstance(name, str):
        return name
    for referrer in gc.get_referrers(code):  # the child runs with gc off; the walk needs no collection
        if isinstance(referrer, types.FunctionType) and referrer.__code__ is code:
            return referrer.__qualname__
    return code.co_name
