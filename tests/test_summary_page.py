"""summary.html, the class page, as an instructor meets it in Chromium (tests/browser.py).

A small real class goes through minigrad-class with a roster, a due, file times and a late
policy, and --similarity: Ann and Ben hand in the same correct engine, Cleo a buggy one a day
and a half late, Dev only notes, Eve code outside a package, Zed nothing. The page must load
with no console error, carry exactly grades.csv's and item_analysis.csv's numbers, list every
student who needs a look (with their feedback and the command that grades them again), fold a
section open on a click and sort a column on a click; a screenshot of it is kept, at a phone's
width too. A hand-made class with hostile text checks the escaping without a browser.
"""

from __future__ import annotations

import datetime
import os
import statistics
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from test_class_grading import grade_class, package, read_csv

from graders.class_grading import summary_html, tables
from graders.class_grading.loaded_class import load
from graders.class_grading.records import StoredGrade
from graders.class_grading.standing import Roll
from tests.browser import driver, open_page  # noqa: F401

from grading import ROOT, needs_isolation

EXAMPLES = ROOT / "examples" / "submissions"
DUE = "2026-11-20T12:00:00+00:00"
ON_TIME, LATE = (
    datetime.datetime(2026, 11, day, hour, tzinfo=datetime.timezone.utc).timestamp()
    for day, hour in ((19, 11), (21, 18))
)  # the day before the due, and 30 hours after it
GRADED = ("graded", "graded (see errors.csv)")


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("summary-page")
    class_ = work / "class"
    for student, spec in (("ann", "ada-correct"), ("ben", "ada-correct"), ("cleo", "cleo-buggy")):
        package(EXAMPLES / f"{spec}.json", class_ / student / "minigrad")
    (class_ / "dev").mkdir()
    (class_ / "dev" / "notes.txt").write_text("I ran out of time\n")
    (class_ / "eve" / "work").mkdir(parents=True)
    (class_ / "eve" / "work" / "solution.py").write_text("class Value:\n    pass\n")
    for path in class_.rglob("*"):
        moment = LATE if path.parts[len(class_.parts)] == "cleo" else ON_TIME
        os.utime(path, (moment, moment))
    roster = work / "roster.csv"
    roster.write_text("id\nann\nben\ncleo\ndev\neve\nzed\n")
    flags = ["--roster", str(roster), "--due", DUE, "--file-times", "--late-policy", "per-day:10", "--similarity"]
    grade_class(class_, work / "out", "--jobs", "2", "--seed", "0", *flags)
    return work / "out"


def rows_of(page, table: str) -> list[list[str]]:
    """Each body row of the table, its cells' text (a header cell of a row included)."""
    found = page.driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
    return [
        [cell.get_attribute("textContent").strip() for cell in row.find_elements(By.CSS_SELECTOR, "th,td")]
        for row in found
    ]


def values_of(page, table: str, column: int) -> list[str]:
    cells = page.driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr > :nth-child({column + 1})")
    return [cell.get_attribute("data-value") for cell in cells]


def number(x: float) -> str:
    return f"{round(x, 6):g}"


@needs_isolation
def test_the_page_carries_the_csv_numbers_and_everyone_who_needs_a_look(out: Path, open_page) -> None:  # noqa: F811
    grades = read_csv(out / "grades.csv")
    graded = [row for row in grades if row["status"] in GRADED]
    assert {row["student"]: row["status"] for row in grades} == {
        "ann": "graded",
        "ben": "graded",
        "cleo": "graded",
        "dev": "graded (see errors.csv)",
        "eve": "graded (see errors.csv)",
        "zed": "no submission",
    }
    page = open_page(out / "summary.html")
    assert page.console_errors() == []

    def stats(column: str) -> list[str]:
        values = [float(row[column]) for row in graded]
        return [f"{statistics.mean(values):.2f}", *(number(f(values)) for f in (statistics.median, min, max))]

    totals = {row[0]: row[1:5] for row in rows_of(page, "totals-table")}
    assert totals == {name: stats(name) for name in ("total", "bonus_points", "total_with_bonus", "total_after_late")}
    assert float(next(row for row in graded if row["student"] == "cleo")["penalty"]) == 24.4  # 2 started days, 10% each

    parts = {row[0]: row[1] for row in rows_of(page, "parts-table")}
    assert parts == {part: stats(part)[0] for part in ("checkpoint", "value", "backward", "mlp", "tensor")}

    header = [
        cell.get_attribute("textContent").strip()
        for cell in page.driver.find_elements(By.CSS_SELECTOR, "#students-table thead th")
    ]
    assert header[:4] == ["student", "status", "total", "max_score"] and "total_after_late" in header
    assert rows_of(page, "students-table") == [[row[column] for column in header] for row in grades]

    items = read_csv(out / "item_analysis.csv")
    hardest = sorted(items, key=lambda item: (float(item["pass_rate"]), item["test"]))
    assert [row[0] for row in rows_of(page, "items-table")] == [item["test"] for item in hardest]
    assert values_of(page, "items-table", 4) == [item["pass_rate"] for item in hardest]
    assert values_of(page, "items-table", 5) == [item["discrimination"] for item in hardest]

    look = {
        entry.get_attribute("data-student"): entry
        for entry in page.driver.find_elements(By.CSS_SELECTOR, "#look-list > li")
    }
    assert sorted(look) == ["ann", "ben", "cleo", "dev", "eve", "zed"]
    said = {student: entry.get_attribute("textContent") for student, entry in look.items()}
    assert "late: submitted 2026-11-21T18:00:00+00:00, due 2026-11-20T12:00:00+00:00, 30 hours late" in said["cleo"]
    assert "penalty 24.4, total_after_late" in said["cleo"] and "similar code to" in said["ann"]
    assert "no minigrad code found (graded 0); the upload holds: notes.txt" in said["dev"]
    assert f"grade again: minigrad-grade {out.parent / 'class' / 'dev'} --out {out / 'dev' / 'regraded'}" in said["dev"]
    assert "to grade it from the folder you choose: minigrad-grade" in said["eve"] and "grade again" not in said["eve"]
    assert "no submission" in said["zed"] and "grade again" not in said["zed"]
    links = {s: [a.get_attribute("href") for a in e.find_elements(By.CSS_SELECTOR, "a")] for s, e in look.items()}
    assert links["cleo"][0] == (out / "cleo" / "feedback.html").as_uri() and (out / "cleo" / "feedback.html").is_file()
    assert (out / "similarity.html").as_uri() in links["ann"]
    assert links["zed"] == []
    page.screenshot("summary")


@needs_isolation
def test_a_section_folds_open_and_a_column_sorts_on_a_click(out: Path, open_page) -> None:  # noqa: F811
    page = open_page(out / "summary.html")
    students = page.driver.find_element(By.ID, "students-table")
    assert not students.is_displayed()
    page.driver.find_element(By.XPATH, "//summary[contains(., 'as grades.csv lists them')]").click()
    assert students.is_displayed()

    rates = [float(value) for value in values_of(page, "items-table", 4)]
    assert rates == sorted(rates) and rates[0] < rates[-1]  # hardest first, as written
    sort = page.driver.find_element(By.XPATH, "//table[@id='items-table']//th[5]/button")
    sort.click()
    assert [float(value) for value in values_of(page, "items-table", 4)] == sorted(rates, reverse=True)
    assert page.driver.find_element(By.XPATH, "//table[@id='items-table']//th[5]").get_attribute("aria-sort") == (
        "descending"
    )
    page.driver.find_element(By.XPATH, "//table[@id='students-table']//th[3]/button").click()  # total, ascending
    totals = [value for value in values_of(page, "students-table", 2)]
    assert totals == sorted(totals, key=lambda value: float(value) if value else -1.0)
    assert page.console_errors() == []


@needs_isolation
def test_the_page_reads_on_a_phone(out: Path, open_page) -> None:  # noqa: F811
    page = open_page(out / "summary.html", "phone")
    wide = page.driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert wide[0] <= wide[1], f"the page scrolls sideways at a phone's width: {wide}"
    assert page.console_errors() == []
    page.screenshot("summary-phone")


HOSTILE = '<img src=x onerror=alert(1)>&amp;"'


def test_every_student_string_is_escaped_and_the_page_reads_without_its_script(tmp_path: Path) -> None:
    """Ids are safe by the time they reach the page, but reasons, warnings, test names and hints
    quote uploads and messages: none may become a tag, and the page says everything in HTML
    alone (the script only adds sort buttons)."""
    failed = {"name": f"value: {HOSTILE}", "tags": ["value"], "score": 0.0, "max_score": 2.0, "status": "failed"}
    passed = {"name": "value: fine", "tags": ["value"], "score": 2.0, "max_score": 2.0, "status": "passed"}
    tests = [{**failed, "output": f"wrong\nhint: {HOSTILE}"}, passed]
    results = {"score": 2.0, "max_score": 4.0, "output": "", "tests": tests}
    graded = {"ann": StoredGrade("ann", results, {"graded_at": "t"})}
    roll = Roll(["ann", "dan"], graded, [], {"dan": f"upload refused: {HOSTILE}"}, {}, [], {})
    counts = {"submissions": 2, "graded": 1, "kept": 0, "errors": 1, "missing": [], "not_on_roster": []}
    facts = {"layout": HOSTILE, "seed": 0, "isolation": "bwrap", "warnings": [f"dan: {HOSTILE}"], **counts}
    loaded = load(roll)
    items = tables.item_analysis(tmp_path, loaded)
    page = summary_html.write(tmp_path, ["value"], facts, loaded, items, {"dan": f"minigrad-grade {HOSTILE}"})
    text = page.read_text()
    assert "<img" not in text and "onerror=alert(1)>" not in text
    assert (
        text.count("&lt;img src=x onerror=alert(1)&gt;&amp;amp;&quot;") >= 5
    )  # layout, reason, warning, command, test
    body = text[: text.index("<script>")]
    for section in ("look", "totals", "distribution", "parts", "items", "mistakes", "students", "warnings", "files"):
        assert f'id="{section}"' in body
    assert '<a href="ann/feedback.html">ann</a>' in body and '<a href="dan/' not in body
