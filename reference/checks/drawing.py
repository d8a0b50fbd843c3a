"""Pictures of a milestone: drawn when matplotlib is there, never a reason for a check to fail."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from student import NotLoaded, load


def draw(folder: Path | None, pictures: Callable[[object], list[Path]]) -> str:
    """Call `pictures(minigrad.plots)`; say where the pictures are, or why there are none
    ('' when no folder was asked for)."""
    if folder is None:
        return ""
    try:
        plots = load("plots")
        drawn = pictures(plots)
    except NotLoaded as exc:
        return f"no pictures: {exc.got} ({exc.hint})"
    except ModuleNotFoundError as exc:
        return f"no pictures: {exc} (the pictures need matplotlib: `pip install matplotlib`)"
    except Exception as exc:  # noqa: BLE001 - a model that cannot be drawn is for the milestone check to explain
        return f"no pictures: drawing failed ({type(exc).__name__}: {exc})"
    return ", ".join(map(str, drawn))
