"""The class's CSV files: grades, errors, changes on a regrade, and item analysis.

Rows are sorted by student and numbers written the same way every run, so two gradings of
one class differ only in `graded_at`: `--jobs 1` and `--jobs N`, or
a regrade of unchanged work, give the same bytes otherwise.
"""

from __future__ import annotations

import csv
import io
import statistics
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import csv_cell
from graders.uploads import intake

from .loaded_class import LoadedClass
from .records import StoredGrade
from .standing import MISSING


def number(x: float) -> str:
    return f"{round(x, 6):g}"


def write_csv(out: Path, name: str, header: list[str], rows: list[list]) -> None:
    """The one way a CSV of the class is written: every cell through `csv_cell`, since ids,
    problems and test names may carry student text that a spreadsheet would run as a formula."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow([csv_cell(cell) for cell in header])
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    output_files.write_new(out, name, text.getvalue().encode())


def grades(out: Path, parts: list[str], loaded: LoadedClass) -> None:
    """grades.csv: one row per student who submitted or is on the roster; status says whether
    they were graded (with a flag in errors.csv: code found but no package), the upload was
    refused, the grader failed, they submitted nothing (0 everywhere), or Ctrl-C came first.
    `total` is the base score, what the parts add up to out of `max_score`, as every text and
    LMS export gives it; `bonus_points` (the optional extensions' points) and `total_with_bonus`
    are their own columns, so a student who lost points never reads as full marks. (Not named
    `bonus`: readers of the older grades.csv, whose `total` held the bonus, took `total - bonus`
    for the base, and would now read 117 for full marks.) The roll's
    `columns` (LMS keys, lateness, the total after the late policy) come last."""
    write_csv(out, "grades.csv", *grade_rows(parts, loaded))


def grade_rows(parts: list[str], loaded: LoadedClass) -> tuple[list[str], list[list]]:
    """grades.csv's header and rows, as the file has them (summary.html shows the same cells)."""
    header = ["student", "total", "max_score", *parts, "bonus_points", "total_with_bonus", "seed", "isolation"]
    columns = loaded.roll.columns
    header += ["graded_at", "submission", "status", *columns]
    rows = []
    for student, standing in loaded.standings.items():
        own = [standing.key(column) for column in columns]
        record = loaded.graded.get(student)
        if record is None:
            if standing.status == MISSING:
                own = ["0" if column == "total_after_late" else value for column, value in zip(columns, own)]
                scores = ["0", number(standing.max_score), *(["0"] * len(parts)), "0", "0"]
            else:
                scores = [""] * (len(parts) + 4)
            rows.append([student, *scores, "", "", "", "", standing.status, *own])
            continue
        extra = record.grade.extra
        rows.append(
            [
                student,
                number(standing.base or 0.0),
                number(standing.max_score),
                *(number(standing.parts.get(part, (0.0, 0.0))[0]) for part in parts),
                number(standing.bonus),
                number((standing.base or 0.0) + standing.bonus),
                extra.get("seed", ""),
                extra.get("isolation", ""),
                record.grading.get("graded_at", ""),
                record.grading.get("submission", ""),
                standing.status,
                *own,
            ]
        )
    return header, rows


def errors(out: Path, failed: dict[str, str]) -> None:
    """errors.csv: every student the grader could not grade this run, and why."""
    write_csv(out, "errors.csv", ["student", "problem"], [[s, failed[s]] for s in sorted(failed)])


def changes(out: Path, before: dict[str, StoredGrade], loaded: LoadedClass) -> int:
    """changes.csv on a regrade: each student whose grade changed (`before`: their earlier
    grade), and which tests did. Returns how many changed."""
    rows = []
    for student in sorted(before):
        record = loaded.graded.get(student)
        if record is None:
            continue
        old, new = _by_test(before[student]), _by_test(record)
        changed = sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
        if changed or before[student].results.get("score") != record.results["score"]:
            rows.append(
                [
                    student,
                    number(before[student].results.get("score", 0.0)),
                    number(record.results["score"]),
                    "; ".join(changed),
                ]
            )
    write_csv(out, "changes.csv", ["student", "old", "new", "tests_changed"], rows)
    return len(rows)


def _by_test(record: StoredGrade) -> dict[str, float]:
    return {test.name: test.score for test in record.grade.tests}


def has_code(record: StoredGrade) -> bool:
    """Whether the student's code was there to test: a package was found, and unless no code
    part was graded (the checkpoint's quiz alone), at least one test of a code part passed. An
    empty upload, or one whose every code test failed (a syntax error, a missing file), says
    nothing about which tests tell strong students from weak ones, and would make every test
    look discriminating."""
    if intake.NOT_FOUND in record.results.get("output", ""):
        return False
    code = [test.passed for test in record.grade.tests if test.part != "checkpoint"]
    return not code or any(code)


def item_analysis(out: Path, loaded: LoadedClass) -> list[dict]:
    """item_analysis.csv: per hidden test, its pass rate and its discrimination (the
    correlation of passing it with the rest of the score: near 0 or negative flags a test
    that good students fail as often as weak ones), over the submissions that loaded (see
    `has_code`; `students` says how many); a bonus test is marked in `bonus`. Returns the rows
    for the summary."""
    graded = [record.grade for _, record in sorted(loaded.graded.items()) if has_code(record)]
    items: dict[str, dict] = {}
    for grade in graded:
        for test in grade.tests:
            new = {"test": test.name, "part": test.part, "points": test.max_score, "bonus": test.bonus}
            item = items.setdefault(test.name, {**new, "passed": [], "scores": []})
            item["passed"].append(test.passed)
            item["scores"].append(test.score)  # a bonus test's points too, though its max_score is 0
    totals = [grade.score for grade in graded]
    rows = []
    for item in items.values():
        passed = item["passed"]
        rest = [total - score for total, score in zip(totals, item["scores"])]
        item["pass_rate"] = sum(passed) / len(passed)
        item["discrimination"] = correlation([float(ok) for ok in passed], rest)
        rows.append(item)
    write_csv(
        out,
        "item_analysis.csv",
        ["test", "part", "points", "bonus", "pass_rate", "discrimination", "students"],
        [
            [
                r["test"],
                r["part"],
                number(r["points"]),
                "bonus" if r["bonus"] else "",
                f"{r['pass_rate']:.3f}",
                "" if r["discrimination"] is None else f"{r['discrimination']:.3f}",
                len(r["passed"]),
            ]
            for r in rows
        ],
    )
    return rows


def correlation(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r; None when either side does not vary (a test everyone passed)."""
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:
        return None
