"""The class report from hand-made grades, without grading anything: the totals keep the
bonus apart, the students whose code was not graded come first, and item analysis leaves
out an upload that did not load."""

from __future__ import annotations

import csv
from pathlib import Path

from graders.class_grading import report, tables
from graders.class_grading.loaded_class import load
from graders.class_grading.records import StoredGrade
from graders.class_grading.standing import Roll
from graders.reporting.escape import markdown

FLAG = "notes: code found but not graded (graded 0): no minigrad/ folder with .py files and no engine.py"


def grade(value: float, mlp: float, bonus: float, output: str = "") -> dict:
    """A results.json with one test per part worth 2, and one bonus test worth 1."""
    tests = [
        {"name": "v", "tags": ["value"], "score": value, "max_score": 2.0, "status": "passed" if value else "failed"},
        {"name": "m", "tags": ["mlp"], "score": mlp, "max_score": 2.0, "status": "passed" if mlp else "failed"},
        {
            "name": "b",
            "tags": ["value", "bonus"],
            "score": bonus,
            "max_score": 0.0,
            "status": "passed" if bonus else "failed",
        },
    ]
    return {"score": value + mlp + bonus, "max_score": 4.0, "output": output, "tests": tests}


CLASS = {
    "ann": StoredGrade("ann", grade(2.0, 2.0, 1.0), {}),
    "bob": StoredGrade("bob", grade(2.0, 0.0, 0.0), {}),
    "cat": StoredGrade("cat", grade(0.0, 2.0, 1.0), {}),
    "notes": StoredGrade("notes", grade(0.0, 0.0, 0.0, "no minigrad/ folder found in the submission"), {}),
}
LOADED = load(Roll(sorted(CLASS), CLASS, [], {}, {}, [], {}))
FACTS = {
    "layout": "folders",
    "seed": 0,
    "isolation": "bwrap",
    "submissions": 4,
    "graded": 4,
    "kept": 0,
    "errors": 0,
    "missing": [],
    "not_on_roster": [],
    "warnings": ["copies: several copies of the package", FLAG],
}


def test_the_summary_lists_code_not_graded_first_and_its_totals_keep_the_bonus_apart(tmp_path: Path) -> None:
    items = tables.item_analysis(tmp_path, LOADED)
    lines = report.summary(tmp_path, FACTS, LOADED, items).splitlines()
    flag = f"- {markdown(FLAG)}"  # escaped as every warning is: it quotes file names from the upload
    assert lines[:5] == ["# minigrad: class summary", "", "## Code found but not graded", "", flag]
    assert sum(FLAG in line for line in lines) == 1  # not said again among the warnings
    assert f"- warning: {markdown('copies: several copies of the package')}" in lines
    totals = lines.index("## Totals")
    assert lines[totals + 2].endswith("Class mean: 2 / 4 + 0.5 bonus.")  # the base, the bonus apart
    assert lines[totals + 4 : totals + 9] == [
        "| | mean | median | min | max | out of |",
        "|---|---|---|---|---|---|",
        "| total | 2.00 | 2 | 0 | 4 | 4 |",
        "| bonus_points | 0.50 | 0.5 | 0 | 1 | 1 |",
        "| total_with_bonus | 2.50 | 2.5 | 0 | 5 | 4 + 1 bonus |",
    ]


def test_item_analysis_leaves_out_the_upload_without_a_package_and_marks_the_bonus(tmp_path: Path) -> None:
    tables.item_analysis(tmp_path, LOADED)
    rows = list(csv.DictReader((tmp_path / "item_analysis.csv").open(newline="")))
    assert [(r["test"], r["bonus"], r["pass_rate"], r["students"]) for r in rows] == [
        ("v", "", "0.667", "3"),
        ("m", "", "0.667", "3"),
        ("b", "bonus", "0.667", "3"),
    ]


def test_every_student_is_in_the_histogram_bonus_and_all() -> None:
    totals = [CLASS[s].results["score"] for s in sorted(CLASS)]
    assert totals == [5.0, 2.0, 3.0, 0.0]
    edges, counts = report.bins(totals, 4.0 + report.bonus_most(CLASS), 5)
    assert (edges, counts) == ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [1, 0, 1, 1, 1])
