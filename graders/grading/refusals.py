"""A test that failed for want of a file the grader refused says so, with the reason.

The child sees only the files the grader copied, so to the judge a refused `minigrad/nn.py` (a
link, a file over the size cap) is simply missing. The grading knows better: before the tests
are grouped, each failure the judge blamed on that file's absence is put on its refusal instead,
so results.json (what Gradescope shows), the grade's text and every feedback page tell the
student what to upload, not that a file they did upload is missing.
"""

from __future__ import annotations

from dataclasses import replace

from graders.reporting.escape import untrusted
from graders.reporting.results import Verdict
from graders.uploads.intake import refused_files

MISSING = " is missing"  # the judge's words after a file's name (judge.cause_of_error)


def said_refused(records: list[Verdict], refused: list[str]) -> list[Verdict]:
    """`records`, each failure blamed on a missing file that was refused (as `minigrad/nn.py`, or
    as `hw1/minigrad/nn.py` in an archive) blamed on its refusal, with the reason."""
    files = {
        "minigrad/" + path.rpartition("/")[2]: (untrusted(path), reason)
        for path, reason in refused_files(refused).items()
    }
    said = []
    for record in records:
        cause = record.cause
        if cause is not None and cause.said == MISSING and cause.name in files:
            path, reason = files[cause.name]
            record = replace(
                record,
                cause=replace(cause, name=path, said=f" was refused: {reason}"),
                message=record.message.replace(f"`{cause.name}` is missing", f"`{path}` was refused"),
            )
        said.append(record)
    return said
