"""results.json is written and read in one module (graders/results.py): what the writer puts
in, every reader gets back, with one rule for a bonus test."""

from __future__ import annotations

from graders.class_grading import report, tables
from graders.class_grading.records import StoredGrade
from graders.results import Verdict, gradescope, part_totals, read, summary, total_text


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


def test_the_total_says_the_base_and_the_bonus_apart_and_the_parts_add_up_to_the_base():
    verdicts = [
        Verdict("value: add [a]", "value", 1.0, True, "", "after_due_date"),
        Verdict("value: mul [b]", "value", 0.5, False, "wrong", "after_due_date"),
        Verdict("extensions: tanh [d]", "value", 4.0, True, "", "after_due_date", bonus=True),
    ]
    grade = read(gradescope(verdicts, 1.0, "", {}))
    assert (grade.score, grade.base, grade.total) == (5.0, 1.0, "1 / 1.5 + 4 bonus")
    assert sum(got for got, _ in grade.parts.values()) == grade.base
    assert summary(verdicts, []).splitlines()[-2:] == [
        "total                1 / 1.5 + 4 bonus",
        "bonus                  4 / 4",
    ]
    assert total_text(106.5, 122, 0, False) == "106.5 / 122"


def test_the_histogram_bins_reach_the_highest_score_with_bonus_so_no_student_is_left_out():
    edges, counts = report.bins([0.0, 61.0, 122.0, 126.9, 127.0], 127.0, 4)
    assert edges == [0.0, 31.75, 63.5, 95.25, 127.0]
    assert counts == [1, 1, 0, 3]
    assert report.bins([130.0], 127.0, 2) == ([0.0, 65.0, 130.0], [0, 1])  # above the top: the top grows


def test_item_analysis_leaves_out_an_upload_that_did_not_load():
    def results(output: str, *passed: tuple[str, bool]) -> dict:
        tests = [
            {"name": part, "tags": [part], "score": float(ok), "max_score": 1.0, "status": "passed" if ok else "failed"}
            for part, ok in passed
        ]
        return {"score": 0.0, "max_score": 1.0, "output": output, "tests": tests}

    assert not tables.loaded(results("no minigrad/ folder found in the submission", ("checkpoint", True)))
    assert not tables.loaded(results("", ("checkpoint", True), ("value", False), ("mlp", False)))
    assert tables.loaded(results("", ("checkpoint", False), ("value", False), ("mlp", True)))
    assert tables.loaded(results("", ("checkpoint", False)))  # the quiz alone was graded
