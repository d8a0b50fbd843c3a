"""The committed allow-list of equivalent mutants (graders/audit/equivalent.toml).

An equivalent mutant computes what the reference computes on every input a student's code
can meet (swapping the factors of a product, say), so no test can kill it and it must not
count against the suites. Each entry names one mutant by its id, with its function and the
reason; the report leaves listed mutants out of the percentages and lists any entry that no
longer matches a mutant, or whose mutant a test killed after all (then it was not equivalent).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomllib is tomli, taken into the standard library in 3.11; the instructor extra installs it before
    import tomli as tomllib

ALLOW_LIST = Path(__file__).resolve().parent / "equivalent.toml"


@dataclass(frozen=True)
class Equivalent:
    id: str
    function: str
    reason: str


def load(path: Path = ALLOW_LIST) -> dict[str, Equivalent]:
    """The entries by mutant id; raises ValueError on an entry without a reason or a repeated id."""
    entries: dict[str, Equivalent] = {}
    for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", []):
        if not all(str(entry.get(key, "")).strip() for key in ("id", "function", "reason")):
            raise ValueError(f"{path.name}: every entry needs an id, a function and a reason: {entry}")
        if entry["id"] in entries:
            raise ValueError(f"{path.name}: mutant {entry['id']} is listed twice")
        entries[entry["id"]] = Equivalent(entry["id"], entry["function"], entry["reason"])
    return entries
