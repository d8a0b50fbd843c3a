"""Student text aimed at the outputs, graded for real: no file the class command writes, nor
what it prints, lets it run script, add Markdown, move the cursor or start a formula, and
every grade survives it.

The attacker's package is the reference with four operators replaced by ones that raise
messages (and an exception type name) built to hijack each output: HTML, Markdown, runs of
backticks, terminal escapes that would overwrite the score table and set the window title,
a carriage return, a lone surrogate, a right-to-left override, spreadsheet formulas. It sits
in a folder whose own name is such text. Only the value part is graded, to stay fast.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import mistune

from graders.class_grading import feedback
from graders.gradescope import run as run_autograder

from grading import ROOT, grader_tmp, needs_isolation
from nbgrader_export import nbgrader_export, store

pytestmark = needs_isolation

ATTACK = r"""


class _Evil(Exception):
    pass


_Evil.__name__ = "<svg onload=alert(1)>\x1b[31m"


def _tanh(self):
    raise ValueError("<script>alert(1)</script>\n# heading\n[link](http://evil) ![img](x) ``` `` ` \r\x1b[1A\x1b[2K")


def _relu(self):
    raise RuntimeError("lone \ud800 <img src=x onerror=alert(1)> =cmd|' /C calc'!A0 \u202eevil")


def _exp(self):
    raise ModuleNotFoundError("\x1b[2J\x1b]0;pwned\x07\x1b[3A\rtotal 28 / 28 \ud800 <b>bold</b>\n# h")


def _sigmoid(self):
    raise _Evil("@SUM(1+1)*cmd|' /C calc'!A0 \x9b31m")


Value.tanh, Value.relu, Value.exp, Value.sigmoid = _tanh, _relu, _exp, _sigmoid
"""
FOLDER = "=cmd|' -a' <img src=x onerror=alert(1)> # h \x1b[2J"  # the attacker's folder: its name is text too
# What the attacker loses, and only that: the tests of the four operators (1 point each) and
# relu at 0 (0.5). The optional extensions (3 bonus points) do not use them.
VALUE, ATTACKER_VALUE, BONUS = 28.0, 23.5, 3.0
STUDENT_TEXT = re.compile(r"<(script|img|svg|b>)|\x1b|\x9b|\ud800|\u202e|\]\(http|\n# h")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def build(where: Path, attack: bool) -> Path:
    package = where / "minigrad"
    shutil.copytree(ROOT / "reference" / "minigrad", package, ignore=shutil.ignore_patterns("__pycache__"))
    if attack:
        engine = package / "engine.py"
        engine.write_text(engine.read_text() + ATTACK)
    return where


def run(*command: str) -> subprocess.CompletedProcess:
    """A command of the kit in a fresh process; its output as bytes, so nothing is decoded away."""
    with grader_tmp() as work:
        return subprocess.run(command, capture_output=True, timeout=900, env={**os.environ, "TMPDIR": str(work)})


def assert_clean(name: str, data: bytes) -> None:
    """No student text that could act: no ESC or CSI, no lone surrogate (not even escaped in
    JSON), no right-to-left override; in a file, no `<` of a tag; in Markdown, no link, image,
    HTML or heading but the kit's own. (What a terminal is shown keeps `<`: it means nothing there.)"""
    text = data.decode("utf-8")  # strict: a raw lone surrogate could not even be decoded
    assert "\x1b" not in text and "\x9b" not in text and "\u202e" not in text, name
    assert name == "printed" or not re.search(r"<(script|img|svg|b>)", text), name
    if name.endswith(".json"):
        json.dumps(json.loads(text), ensure_ascii=False).encode("utf-8")  # strict: no "\ud800" escape either
    if name.endswith(".md") or name.startswith("stdout"):
        found, stack = [], mistune.create_markdown(renderer=None, plugins=["table", "url", "strikethrough"])(text)
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(node.get("children", []))
        assert not {"link", "image", "inline_html", "block_html"} & {node["type"] for node in found}, name
        headings = [node for node in found if node["type"] == "heading"]
        assert [node["attrs"]["level"] for node in headings].count(1) <= 1, name
        assert not [node for node in headings if node["children"][0].get("raw") in ("h", "heading", "h\\x1b[2J")], name


def assert_no_formula(path: Path) -> None:
    for row in csv.reader(path.open(newline="")):
        for cell in row:
            if re.fullmatch(r"-?\d+(\.\d+)?(e[+-]?\d+)?", cell):
                continue  # a number: the kit's own, a spreadsheet reads it as that number
            assert not cell.lstrip(" ").startswith(FORMULA), (path.name, cell)


def test_the_class_command_keeps_every_grade_and_no_output_is_hijacked(tmp_path: Path) -> None:
    classes, out = tmp_path / "class", tmp_path / "out"
    build(classes / FOLDER / "upload", attack=True)
    build(classes / "honest", attack=False)
    command = [sys.executable, "-m", "graders.class_grading.cli", str(classes), "--out", str(out), "--parts", "value"]
    graded = run(*command, "--jobs", "2")
    assert graded.returncode == 0, graded.stderr[-3000:]

    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(newline=""))}
    assert len(rows) == 2 and all(row["status"] == "graded" for row in rows.values())
    (attacker,) = [student for student in rows if student != "honest"]
    for student, value in (("honest", VALUE), (attacker, ATTACKER_VALUE)):
        got = [float(rows[student][column]) for column in ("value", "total", "total_with_bonus")]
        assert got == [value, value, value + BONUS]  # the base without the bonus, the total with it
    assert list(csv.DictReader((out / "errors.csv").open(newline=""))) == []

    results = json.loads((out / attacker / "results.json").read_text())
    messages = "\n".join(test["output"] for test in results["tests"])
    assert "your code raised ValueError: \\u003cscript" not in messages  # parsed back: the text itself
    assert "your code raised ValueError: <script>alert(1)</script>\\n# heading\\n" in messages  # one line, shown
    assert "lone \\ud800 <img" in messages and "\\u202eevil" in messages
    assert "<svg onload=alert(1)>\\x1b[31m" in messages
    feedback = (out / attacker / "feedback.md").read_text()
    assert "‹script›alert(1)‹/script›\\n# heading\\n[link](http://evil)" in feedback
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / attacker / "feedback.html").read_text()

    written = [
        *(
            out / student / name
            for student in rows
            for name in ("feedback.md", "feedback.html", "results.json", "report.json", "grading.json")
        ),
        *(out / name for name in ("summary.md", "grades.csv", "errors.csv", "item_analysis.csv")),
    ]
    for path in written:
        assert_clean(str(path.relative_to(out)), path.read_bytes())
    assert_clean("stdout", graded.stdout)
    assert_clean("stderr", graded.stderr)
    for name in ("grades.csv", "errors.csv", "item_analysis.csv"):
        assert_no_formula(out / name)
    exported = nbgrader_export(f"sqlite:///{out / 'gradebook.db'}", tmp_path)
    with_bonus = {s: float(r["total_with_bonus"]) for s, r in rows.items()}  # nbgrader's extra credit included
    assert {s: float(row["score"]) for s, row in exported.items()} == with_bonus

    again = run(*command, "--resume")  # was: every --resume crashed again on the same grade
    assert again.returncode == 0, again.stderr[-3000:]
    assert b"graded now: 0, unchanged and kept: 2" in again.stdout
    assert_clean("stdout of --resume", again.stdout)


def test_one_grading_prints_and_writes_its_grade_whatever_the_messages_hold(tmp_path: Path) -> None:
    """minigrad-grade alone: a lone surrogate and terminal escapes in the note printed under
    the score table (a missing module's message) once made it exit 1 after writing results.json."""
    submission = build(tmp_path / FOLDER, attack=True)
    graded = run(sys.executable, "-m", "graders", str(submission), "--out", str(tmp_path / "out"), "--parts", "value")
    assert graded.returncode == 0, graded.stderr[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert (results["score"], results["max_score"]) == (ATTACKER_VALUE + BONUS, VALUE)
    for name in ("results.json", "report.json"):
        assert_clean(name, (tmp_path / "out" / name).read_bytes())
    assert_clean("printed", graded.stdout)
    printed = graded.stdout.decode()
    assert f"{'value':<12}{f'{ATTACKER_VALUE:g} / {VALUE:g}':>16}\n" in printed  # the real score, on its own line
    assert "note: your code imports a module that grading does not have: \\x1b[2J\\x1b]0;pwned\\x07" in printed


def test_file_names_in_an_upload_without_a_package_reach_no_output_raw(tmp_path: Path) -> None:
    """The visible first test lists what an upload holds when no package is found: names
    with HTML, escapes and bytes that are not UTF-8 are listed, shown, never sent raw."""
    upload = tmp_path / "upload"
    upload.mkdir()
    for name in ("<img src=x onerror=alert(1)>.txt", "\x1b]0;pwned\x07\x1b[2J.py", "# h.md"):
        (upload / name).write_text("x = 1\n")
    with open(bytes(upload) + b"/bad\xff\xfe<script>.txt", "w") as file:  # a name that is not UTF-8
        file.write("x\n")
    graded = run(
        sys.executable,
        "-m",
        "graders",
        str(upload),
        "--out",
        str(tmp_path / "out"),
        "--parts",
        "value",
        "--check-imports",
    )
    assert graded.returncode == 0, graded.stderr[-3000:]
    written = (tmp_path / "out" / "results.json").read_bytes()
    assert_clean("results.json", written)
    assert_clean("printed", graded.stdout)
    first = json.loads(written)["tests"][0]["output"]
    assert "<img src=x onerror=alert(1)>.txt" in first and "\\x1b]0;pwned\\x07\\x1b[2J.py" in first
    assert "bad\\udcff\\udcfe<script>.txt" in first


def test_feedback_that_cannot_be_written_is_said_never_raised(tmp_path: Path) -> None:
    """The class command writes feedback between a grade's results.json and grading.json: a
    failure there is that student's note on stderr, and the grade is completed all the same."""
    folder = tmp_path / "student"
    folder.mkdir()
    assert feedback.write(folder, "student", {"score": 1.0, "tests": [{"status": "failed"}]}).startswith(
        "feedback not written: KeyError"
    )
    attack = {
        "score": 1.0,
        "max_score": 2.0,
        "output": "note: \ud800 <b>x</b>\x1b[2J",
        "tests": [
            {
                "name": "value: a [a]",
                "tags": ["value"],
                "score": 0.0,
                "max_score": 1.0,
                "status": "failed",
                "output": "lone \ud800 <script>\x1b[1A",
            }
        ],
    }
    assert feedback.write(folder, "student", attack) is None  # read back from an old results.json, raw
    for name in ("feedback.md", "feedback.html"):
        assert_clean(name, (folder / name).read_bytes())


def test_a_student_the_gradebook_refuses_is_said_and_the_others_are_stored(tmp_path: Path) -> None:
    results = {"tests": [{"name": "value: a [a]", "tags": ["value"], "score": 1.0, "max_score": 1.0}]}
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    messages = store(url, {"bad\ud800": results, "good": results}, None)
    assert len(messages) == 1 and messages[0].startswith("bad\ud800: the gradebook refused these grades")
    assert {s: float(row["score"]) for s, row in nbgrader_export(url, tmp_path).items()} == {"good": 1.0}


def test_gradescope_says_the_graders_words_as_text(tmp_path: Path) -> None:
    """run_autograder's Markdown summary: the grader's last words on a refusal, and what it
    passed over, are prose or code, never HTML, a link or a heading."""
    reason = "cannot grade: [x](http://evil) <img src=x onerror=alert(1)>\n# h\x1b[2J \ud800\n"
    passed_over = "<script>alert(1)</script> [l](http://e)"
    results = {
        "tests": [{"status": "passed", "tags": ["submission"], "max_score": 0, "score": 0}],
        "extra_data": {"isolation": "bwrap", "passed_over": passed_over},
    }
    for text in (run_autograder.no_grade(reason)["output"], run_autograder.summary(results, "visible")):
        assert_clean("gradescope.md", text.encode())
