"""Student ids as they may be used for folder names, CSV cells and gradebook keys.

Ids come from folder names, zip entries, YAML and CSV files that students or an LMS wrote.
An id keeps a name's letters and digits in any script (`José García` -> `José-García`, NFC
first, so the two ways of writing `é` agree); every other run of characters becomes one `-`,
and none is kept at either end. So an id never names a hidden file, never leaves `--out`,
never starts a spreadsheet formula (`= + - @`) and never equals one of the class's own
outputs (each has a `.` in its name, `grades.csv` or `.reference-cache`, and an id never has
one). Two students whose ids come out alike are numbered, never merged, and said.
"""

from __future__ import annotations

import re
import unicodedata

OTHER = re.compile(r"(?:[^\w]|_)+")  # \w: Unicode letters and digits (and `_`, replaced too)
MAX_LENGTH = 64  # characters; the rest of a long name adds nothing but risk


def safe_id(raw: str) -> str:
    """`raw` reduced to an id that is safe as a folder under `--out` and as a CSV cell."""
    text = unicodedata.normalize("NFC", raw)
    cleaned = OTHER.sub("-", text).strip("-")[:MAX_LENGTH].rstrip("-")
    return cleaned or "student"


def unique(ids: list[str]) -> list[str]:
    """`ids` with repeats numbered in the order given (`alice`, `alice-2`; letter case does not
    tell two apart), so no two students share a folder. The caller sorts by a stable key."""
    seen = {name.casefold() for name in ids}
    taken: set[str] = set()
    result = []
    for raw in ids:
        name, n = raw, 1
        while name.casefold() in taken or (n > 1 and name.casefold() in seen):
            n += 1
            name = f"{raw}-{n}"
        taken.add(name.casefold())
        result.append(name)
    return result
