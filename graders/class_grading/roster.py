"""The class roster: who should have submitted.

A CSV with a header; the id is taken from the column nbgrader's roster uses (`id`), else
`student`, `sid` or `login`, else the first column. Ids get the same reduction as the
submissions' (students.safe_id), so `--roster` and the layouts agree on names.
"""

from __future__ import annotations

import csv
from pathlib import Path

from .students import safe_id

ID_COLUMNS = ("id", "student", "student_id", "sid", "login", "username")


def read(path: Path) -> list[str]:
    """The roster's student ids, in file order, without blanks or repeats."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            rows = list(csv.reader(file))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SystemExit(f"{path}: cannot read the roster ({exc})") from exc
    if not rows:
        raise SystemExit(f"{path}: the roster is empty")
    header = [cell.strip().lower() for cell in rows[0]]
    column = next((header.index(name) for name in ID_COLUMNS if name in header), 0)
    ids = [safe_id(row[column]) for row in rows[1:] if len(row) > column and row[column].strip()]
    return list(dict.fromkeys(ids))
