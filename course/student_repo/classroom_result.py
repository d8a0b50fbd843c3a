"""One part's GitHub Classroom result: points in proportion to the part's checks passed.

    python3 .github/classroom_result.py PART MAX_SCORE MINUTES

Runs `make check PART=...` (so the log shows what `make check` prints on your machine), reads
which checks passed from pytest's JUnit report, and writes the step's `result` output as
Classroom's reporter reads it: base64 JSON with the part's `max_score` and one test, the
part's line, e.g. "value: 70 of 71 checks, 27 / 28", scored the part's points. A command step
can only give all of its points or none, so 70 of 71 checks scored 0; here they score
MAX_SCORE * 70 // 71. Classroom's points are whole numbers, so the share is rounded down. One
test per check would list 71 lines for one part, and the reporter prints no score beside them.
The step always succeeds: a failing step would stop the reporter, and with it every part's
points.

The result's fields are those the command grader writes (classroom-resources/
autograding-command-grader, src/main.js: generateResult): line_no 0, or the reporter
(autograding-grading-reporter, src/console-results.js) prints "- line undefined" after the name.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

NOT_PASSED = {"failure", "error", "skipped"}  # a check not attempted yet is skipped: no points


def checks(junit: Path) -> list[tuple[str, bool]]:
    """(name, passed) of each check in a JUnit report, in the order they ran."""
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    return [(case.get("name", ""), not any(child.tag in NOT_PASSED for child in case)) for case in cases]


def points(passed: int, total: int, most: int) -> int:
    """The part's points for `passed` of `total` checks, rounded down to a whole point."""
    return most * passed // total if total else 0


def line(part: str, passed: int, total: int, most: int) -> str:
    """What the student reads for the part: its checks passed and its points."""
    said = f"{part}: {passed} of {total} checks, {points(passed, total, most)} / {most}"
    return said if most else f"{said} (its answers are graded by the hidden tests)"


def result(part: str, found: list[tuple[str, bool]], most: int) -> dict:
    """The step's result: one test, the part's line, scored the part's points."""
    passed, total = sum(ok for _, ok in found), len(found)
    check = f"make check PART={part}"
    if not found:  # the checks did not run at all (the checks' own folder changed?)
        name, status, message = f"{part}: no check ran, 0 / {most}", "error", f"no check of {part} ran: see `{check}`"
    else:
        status = "pass" if passed == total else "fail"
        name, message = line(part, passed, total, most), "" if passed == total else f"see `{check}` for why"
    score = points(passed, total, most)
    test = {"name": name, "status": status, "score": score, "message": message}
    test |= {"test_code": check, "filename": "", "line_no": 0}
    return {"version": 1, "status": status, "max_score": most, "tests": [test]}


def encoded(results: dict) -> str:
    return base64.b64encode(json.dumps(results).encode()).decode()


def main(argv: list[str]) -> int:
    part, most, minutes = argv[0], int(argv[1]), int(argv[2])
    with tempfile.TemporaryDirectory() as work:
        junit = Path(work) / "checks.xml"
        env = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit}"}
        try:
            subprocess.run(["make", "--no-print-directory", "check", f"PART={part}"], env=env, timeout=minutes * 60)
        except subprocess.TimeoutExpired:
            print(f"{part}: the checks took longer than {minutes} minutes (an endless loop?)")
        found = checks(junit) if junit.is_file() else []
    results = result(part, found, most)
    print(results["tests"][0]["name"])
    with open(os.environ.get("GITHUB_OUTPUT", os.devnull), "a") as output:
        output.write(f"result={encoded(results)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
