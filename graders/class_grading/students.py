"""Student ids as they may be used for folder and file names.

Ids come from folder names, zip entries, YAML and CSV files that students or an LMS wrote;
reduced to `[A-Za-z0-9._-]` with no leading dot, they can never name a hidden file, leave
`--out` or collide with the class's own output files.
"""

from __future__ import annotations

import re

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# The class's own files beside the student folders: no student folder may take their names.
RESERVED = {"grades.csv", "errors.csv", "changes.csv", "item_analysis.csv", "summary.md", "histogram.png",
            "feedback.zip"}  # fmt: skip


def safe_id(raw: str) -> str:
    """`raw` reduced to a name that is safe as a folder under `--out`."""
    cleaned = UNSAFE.sub("_", raw.strip()).lstrip(".")
    if not cleaned:
        return "student"
    return f"{cleaned}_" if cleaned in RESERVED else cleaned


def unique(ids: list[str]) -> list[str]:
    """`ids` with repeats numbered (`alice`, `alice-2`), so no two students share a folder."""
    seen: set[str] = set()
    result = []
    for raw in ids:
        name, n = raw, 1
        while name in seen:
            n += 1
            name = f"{raw}-{n}"
        seen.add(name)
        result.append(name)
    return result
