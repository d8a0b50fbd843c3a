"""minigrad: a small scalar autograd engine, built one part at a time."""

from .engine import Value

__all__ = ["Value"]
