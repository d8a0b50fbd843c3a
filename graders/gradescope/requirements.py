"""What each audience installs, read from pyproject.toml (as installed) so it is said once.

The student repository's pyproject.toml gets the project's own dependencies (what `make check`
needs); Gradescope's requirements.txt gets the `grader` extra. Read from the installed
metadata rather than the TOML file, which Python 3.10 cannot parse; the Makefile reinstalls
the kit whenever pyproject.toml changes, so the two never disagree.
"""

from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "minigrad-problem-sets"


def requirements(extra: str | None = None) -> list[str]:
    """The requirements of `extra`, or with None those needed by everyone."""
    wanted = []
    for requirement in metadata.requires(DISTRIBUTION) or []:
        name, _, marker = requirement.partition(";")
        words = marker.replace("'", '"').split()
        if (extra is None and not words) or (extra is not None and words == ["extra", "==", f'"{extra}"']):
            wanted.append(name.strip())
    if not wanted:
        raise SystemExit(
            f"no requirements found for {extra or 'students'}: is the kit installed (make .venv/.instructor)?"
        )
    return wanted
