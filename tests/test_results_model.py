"""results.json is written and read in one module (graders/results.py): what the writer puts
in, every reader gets back, with one rule for a bonus test."""

from __future__ import annotations

from graders.class_grading import report
from graders.class_grading.records import StoredGrade
from graders.results import Verdict, gradescope, part_totals, read


def test_a_grade_reads_back_as_it_was_written():
    verdicts = [
        Verdict("value: add [a]", "value", 1.0, True, "", "after_due_date"),
        Verdict("value: mul [b]", "value", 0.5, False, "wrong", "after_due_date"),
        Verdict("mlp: fit [c]", "mlp", 2.0, True, "", "after_due_date"),
        Verdict("extensions: tanh [d]", "extensions", 1.0, True, "", "after_due_date", bonus=True),
    ]
    grade = read(gradescope(verdicts, 1.0, "", {"seed": 0}))
    assert grade.parts == part_totals(verdicts) == {"value": (1.0, 1.5), "mlp": (2.0, 2.0)}
    assert (grade.score, grade.max_score, grade.bonus, grade.has_bonus) == (4.0, 3.5, 1.0, True)
    assert [test.bonus for test in grade.tests] == [False, False, False, True]
    assert grade.tests[1].output == "wrong" and not grade.tests[1].passed and grade.extra == {"seed": 0}


def test_a_bonus_tag_on_a_test_that_counts_in_the_maximum_is_no_bonus():
    test = {"name": "t", "tags": ["value", "bonus"], "score": 1.0, "max_score": 1.0, "status": "passed", "output": ""}
    grade = read({"score": 1.0, "max_score": 1.0, "tests": [test]})
    assert grade.parts == {"value": (1.0, 1.0)} and grade.bonus == 0.0


def test_the_class_summary_counts_each_hint_once_per_student_ties_in_the_order_tests_ran():
    def failed(*hints: str) -> dict:
        tests = [
            {
                "name": h,
                "tags": ["value"],
                "score": 0.0,
                "max_score": 1.0,
                "status": "failed",
                "output": f"wrong\nhint: {h}\nhint: {h}",
            }
            for h in hints
        ]
        return {"score": 0.0, "max_score": float(len(hints)), "tests": tests}

    class_ = {"a": StoredGrade("a", failed("z", "y"), {}), "b": StoredGrade("b", failed("y", "x", "z"), {})}
    assert report.common_hints(class_) == [("z", 2), ("y", 2), ("x", 1)]
