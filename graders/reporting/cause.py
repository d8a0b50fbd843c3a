"""Where one failed test's trouble starts, as the judge finds it and results.json keeps it.

Its own module because both sides need it: the results model stores a `Cause` with each graded
test, and root_cause.py groups tests by theirs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """Where one failed test's trouble starts. `name` is the group ("Value.__mul__", "nn.py");
    it is empty for a wrong result of several operators, grouped by what it `uses`."""

    name: str = ""
    said: str = ""  # after the name: "'s backward", " is missing", " does not load"
    file: str | None = None
    line: int | None = None
    detail: str = ""  # for a file that does not load: the error and the line of code
    uses: tuple[str, ...] = ()
    loads: bool = True

    def title(self, locations: dict[str, list] | None = None) -> str:
        """`Value.__mul__`'s backward (engine.py:61): the line from the error, or else where the
        API probes found the function (`locations`, by "Value.__mul__'s backward" or "SGD.step")."""
        file, line = self.file, self.line
        places = locations or {}
        backward = self.said.startswith("'s backward")  # "'s backward takes arguments...": the closure's line
        found = places.get(f"{self.name}{self.said}") or places.get(
            f"{self.name}'s backward" if backward else self.name
        )
        if file is None and found:
            file, line = found
        return f"`{self.name}`{self.said}" + (f" ({file}:{line})" if file and line else "")
