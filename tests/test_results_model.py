"""results.json is written and read in one module (graders/reporting/results.py): what the writer puts
in, every reader gets back, with one rule for a bonus test."""

from __future__ import annotations

import json

from graders.class_grading import report, tables
from graders.class_grading.records import StoredGrade
from graders.grading.judge import course_api
from graders.grading.protocol import TEXT_LIMIT, parse_line
from graders.reporting import root_cause
from graders.reporting.cause import Cause
from graders.reporting.results import Verdict, gradescope, part_totals, read, summary, total_text

RSUB = "unsupported operand type(s) for -: 'int' and 'Value'"


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
    def has_code(output: str, *passed: tuple[str, bool]) -> bool:
        tests = [
            {"name": part, "tags": [part], "score": float(ok), "max_score": 1.0, "status": "passed" if ok else "failed"}
            for part, ok in passed
        ]
        return tables.has_code(StoredGrade("s", {"score": 0.0, "max_score": 1.0, "output": output, "tests": tests}, {}))

    assert not has_code("no minigrad/ folder found in the submission", ("checkpoint", True))
    assert not has_code("", ("checkpoint", True), ("value", False), ("mlp", False))
    assert has_code("", ("checkpoint", False), ("value", False), ("mlp", True))
    assert has_code("", ("checkpoint", False))  # the quiz alone was graded


def _failed(name: str, cause: Cause | None, points: float = 1.0) -> Verdict:
    return Verdict(name, name.split(":")[0], points, False, f"{name} went wrong", "after_due_date", cause=cause)


def test_failures_are_grouped_root_cause_first_by_the_documented_rule():
    """A file that does not load first; then the group most tests fail through (a wrong `*`,
    found by its own test, takes the later wrong results that use it); a wrong result that uses
    no failing operator is a group of its own; the probe's line names an operator's backward."""
    syntax = Cause("nn.py", " does not load", "nn.py", 147, "nn.py, line 147: SyntaxError: expected ':'", loads=False)
    records = [
        _failed(
            "value: a * b [mul]", root_cause.of_wrong_result([["apply", {"op": "*", "operands": ["a", "b"]}]], True)
        ),
        _failed(
            "value: a - b [sub]", root_cause.of_wrong_result([["apply", {"op": "-", "operands": ["a", "b"]}]], True)
        ),
        _failed("value: 2 - b [rsub]", Cause(*course_api.requirement("TypeError", RSUB))),
        Verdict("value: a + b [add]", "value", 1.0, True, "", "after_due_date"),
        _failed(
            "backward: graph [g]", root_cause.of_wrong_result([["chain", {"op": "**"}], [["apply", {"op": "*"}]]], True)
        ),
        _failed("mlp: MLP [m]", root_cause.of_wrong_result([["mlp", {"into": "m"}], ["call", {}]], True), 2.0),
        _failed("mlp: SGD [s]", syntax),
        _failed("tensor: sum [t]", root_cause.of_wrong_result([["tensor", {}]], False)),
        _failed("mlp: loss [l]", root_cause.of_function("hinge_loss.<locals>.<genexpr>", "nn.py", 123)),
    ]
    groups = root_cause.group(records, {"Value.__mul__'s backward": ["engine.py", 80]})
    assert [(g.title, g.tests) for g in groups] == [
        ("`nn.py` does not load (nn.py:147)", ["mlp: SGD [s]"]),
        ("`Value.__mul__`'s backward (engine.py:80)", ["value: a * b [mul]", "backward: graph [g]", "mlp: MLP [m]"]),
        ("`Value.__sub__`'s backward", ["value: a - b [sub]"]),
        ("`Value.__rsub__` is missing", ["value: 2 - b [rsub]"]),
        ("`hinge_loss` (nn.py:123)", ["mlp: loss [l]"]),
        ("tensor: sum [t]", ["tensor: sum [t]"]),
    ]
    assert groups[0].note == ["nn.py, line 147: SyntaxError: expected ':'", f"hint: {root_cause.UNLOADABLE_HINT}"]
    text = root_cause.lines(groups[1:], [r.graded() for r in records])
    assert text[:5] == [
        "Start here: `Value.__mul__`'s backward (engine.py:80) — 3 tests fail through it",
        "",
        "1. `Value.__mul__`'s backward (engine.py:80) — 3 tests, -4 points",
        "  value: a * b [mul]",
        "    value: a * b [mul] went wrong",
    ]
    assert text[5] == "  also failing through it: backward: graph [g], mlp: MLP [m]"
    assert root_cause.start(groups) == "Start here: `nn.py` does not load (nn.py:147) — 1 test could not run"
    assert root_cause.read({root_cause.KEY: root_cause.saved(groups)}) == groups  # kept in results.json as made


def test_the_child_s_location_fields_are_kept_only_in_their_own_shape():
    line = {
        "i": 0,
        "out": [],
        "error": {
            "type": "TypeError",
            "message": "m",
            "where": "w",
            "function": "Value.__mul__.<locals>._backward",
            "file": "engine.py",
            "line": 61,
            "code": "x" * 400,
        },
    }
    _, outcome = parse_line(json.dumps(line).encode(), 1)
    assert outcome.error == {**line["error"], "code": "x" * TEXT_LIMIT}
    forged = {**line["error"], "function": "a b\n# heading", "file": "../etc/passwd", "line": True, "code": 3}
    _, outcome = parse_line(json.dumps({**line, "error": forged}).encode(), 1)
    assert outcome.error == {"type": "TypeError", "message": "m", "where": "w"}
    assert parse_line(json.dumps({**line, "error": {**forged, "extra": 1}}).encode(), 1) is None
