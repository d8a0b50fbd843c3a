"""Gradescope's autograder.zip, run as Gradescope runs it: unpacked in /autograder, as root.

bubblewrap gives each run a view of this machine with a temporary folder mounted at
/autograder (source/ from the zip, submission/, results/, and venv/, which setup.sh would
make and which here is this project's .venv), then `run_autograder` runs; what it wrote in
results/results.json is checked for the score and the words the student sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from course.submissions import materialize
from graders.course_facts.parts import POINTS
from graders.gradescope import package
from graders.gradescope.run import API_MATCHES, API_NAME
from graders.isolation import sandbox

from grading import ROOT, bonus_score, grade, part_scores

needs_bwrap = pytest.mark.skipif(
    "bwrap" not in sandbox.available_levels(), reason="needs bubblewrap that works here, and root, as on Gradescope"
)
SPECS = ROOT / "tests" / "submissions"
MODULES = len(list((ROOT / "reference" / "minigrad").glob("*.py")))  # what a full upload holds


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("zip")
    (folder / "secret").write_text("a course secret for the tests\n")
    assert package.main(["--secret-file", str(folder / "secret"), "--out", str(folder / "autograder.zip")]) == 0
    return folder / "autograder.zip"


def unpack(autograder_zip: Path, root: Path, visibility: str | None = None) -> Path:
    """The /autograder folder as Gradescope sets it up, file modes from the zip included."""
    with zipfile.ZipFile(autograder_zip) as archive:
        for info in archive.infolist():
            target = root / "source" / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            target.chmod(info.external_attr >> 16 & 0o777)
    if visibility:
        (root / "source" / "settings.json").write_text(json.dumps({"visibility": visibility}))
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "venv").symlink_to(Path(sys.prefix))
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root / "submission"


def run_autograder(root: Path, *bwrap_options: str) -> dict:
    """This machine as it is, /autograder mounted from `root`; results.json as written."""
    view = []
    for entry in sorted(Path("/").iterdir()):
        if entry.name not in ("proc", "dev", "autograder"):
            view += ["--symlink", os.readlink(entry)] if entry.is_symlink() else ["--bind", str(entry)]
            view.append(str(entry))
    run = subprocess.run(
        [
            "bwrap",
            "--die-with-parent",
            *view,
            "--dev-bind",
            "/dev",
            "/dev",
            "--bind",
            "/proc",
            "/proc",
            "--bind",
            str(root),
            "/autograder",
            *bwrap_options,  # after the view, so that a file bound here covers the view's
            "--chdir",
            "/autograder",
            "/autograder/run_autograder",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def place(spec: str, upload: Path, where: str) -> None:
    """The specimen's package put where a student might: `minigrad` at the top, `.` for the
    files themselves at the top, or inside wrapping folders."""
    built = materialize(SPECS / f"{spec}.json", upload.parent / "built") / "minigrad"
    if where == ".":
        for module in built.iterdir():
            shutil.move(module, upload / module.name)
    else:
        (upload / where).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(built, upload / where)


FULL = {"submission": 0.0, **{part: float(points) for part, points in POINTS.items()}}
TOTAL = sum(POINTS.values())  # 122


@needs_bwrap
def test_a_correct_upload_gets_full_marks_and_sees_only_the_visible_test_now(autograder_zip, tmp_path):
    place("correct", unpack(autograder_zip, tmp_path), "minigrad")
    results = run_autograder(tmp_path)
    assert results["score"] == TOTAL + bonus_score(results) and part_scores(results) == FULL
    first, api, hidden = results["tests"][0], results["tests"][1], results["tests"][2:]
    assert (first["status"], first["visibility"], first["max_score"]) == ("passed", "visible", 0.0)
    assert (api["name"], api["status"], api["visibility"], api["max_score"]) == (API_NAME, "passed", "visible", 0.0)
    assert api["output"] == API_MATCHES
    assert first["output"].startswith(f"found {MODULES} files in `minigrad/`: __init__.py, checkpoint.py")
    assert "  nn.py: imports" in first["output"]
    assert {t["visibility"] for t in hidden} == {"after_due_date"}
    assert results["output_format"] == "md" and results["extra_data"]["official"] is True
    assert "**Your upload:** found, and every module imports." in results["output"]
    hidden_tests = f"The hidden tests ({TOTAL:g} points in all) have run; their results appear after the due date."
    assert hidden_tests in results["output"]
    assert str(results["extra_data"]["seed"]) not in results["output"]  # the course's seed stays secret


# bwrap as in a container that refuses user namespaces (Gradescope's, most of the time): the program
# is there, and says what bwrap says there (graders/isolation/sandbox.py reads only its exit status).
NO_NAMESPACES = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"


@needs_bwrap  # the simulation itself is a bwrap view of this machine
def test_where_bwrap_cannot_make_namespaces_a_correct_upload_is_graded_at_the_user_level(autograder_zip, tmp_path):
    root, refusing = tmp_path / "autograder", tmp_path / "bwrap"
    root.mkdir()
    refusing.write_text(NO_NAMESPACES)
    refusing.chmod(0o755)
    place("correct", unpack(autograder_zip, root), "minigrad")
    # venv/ a folder, as setup.sh makes it: the child, under a uid of its own, reads NumPy there
    # (unpack's link would lead into this project's folder, which other users cannot enter)
    (root / "venv").unlink()
    (root / "venv").mkdir()
    bwrap = os.path.realpath(shutil.which("bwrap") or "/usr/bin/bwrap")
    results = run_autograder(root, "--ro-bind", sys.prefix, "/autograder/venv", "--ro-bind", str(refusing), bwrap)
    assert results["score"] == TOTAL + bonus_score(results) and part_scores(results) == FULL
    assert (results["extra_data"]["isolation"], results["extra_data"]["official"]) == ("user", True)
    assert "Graded in the `user` sandbox." in results["output"]


@needs_bwrap
def test_a_flat_upload_is_graded_as_if_in_minigrad_and_visible_results_show_the_table(autograder_zip, tmp_path):
    place("correct", unpack(autograder_zip, tmp_path, visibility="visible"), ".")
    results = run_autograder(tmp_path)
    assert results["score"] == TOTAL + bonus_score(results) and part_scores(results) == FULL
    assert "at the top of your upload (graded as if they were in minigrad/)" in results["tests"][0]["output"]
    assert {t["visibility"] for t in results["tests"]} == {"visible"}
    total = f"| **total** | **122 / 122 + {bonus_score(results):g} bonus** |"  # the bonus apart, as everywhere
    assert f"| tensor | 32.5 / 32.5 |\n{total}" in results["output"]


@needs_bwrap
def test_the_course_api_test_is_visible_at_once_and_the_root_cause_heads_visible_results(autograder_zip, tmp_path):
    """A `val` engine: the API probe's test says so now, worth 0; once the hidden tests are
    visible, the summary's feedback starts at the name every failure goes through."""
    place("fair-val-not-data", unpack(autograder_zip, tmp_path, visibility="visible"), "minigrad")
    results = run_autograder(tmp_path)
    api = results["tests"][1]
    assert (api["name"], api["status"], api["visibility"], api["score"], api["max_score"], api["tags"]) == (
        API_NAME,
        "failed",
        "visible",
        0.0,
        0.0,
        ["submission"],
    )
    assert api["output"] == "course API: `data` is missing; your `Value` stores its number in `val`"
    assert [test["number"] for test in results["tests"]] == [str(i) for i in range(1, len(results["tests"]) + 1)]
    assert part_scores(results) == {**FULL, "value": 1.5, "backward": 0.0, "mlp": 1.5}
    assert "#### What to fix\n\n```\nStart here: `Value.data` is missing — " in results["output"]


@needs_bwrap
def test_a_nested_buggy_upload_is_found_and_loses_what_its_bug_costs(autograder_zip, tmp_path):
    place("bug-checkpoint-wrong-answers", unpack(autograder_zip, tmp_path), "hw1-alice/hw1/minigrad")
    results = run_autograder(tmp_path)
    assert results["score"] == TOTAL - 2 + bonus_score(results) and part_scores(results) == {**FULL, "checkpoint": 10.0}
    assert results["tests"][0]["status"] == "passed"
    assert results["tests"][0]["output"].startswith(f"found {MODULES} files in `hw1-alice/hw1/minigrad/`")


@needs_bwrap
def test_a_syntax_error_is_shown_at_once_with_its_file_and_line(autograder_zip, tmp_path):
    place("broken-syntax-error", unpack(autograder_zip, tmp_path), "minigrad")
    results = run_autograder(tmp_path)
    assert results["score"] == TOTAL - 27.5 + bonus_score(results) and part_scores(results) == {**FULL, "mlp": 0.0}
    first = results["tests"][0]
    assert (first["status"], first["visibility"]) == ("failed", "visible")
    assert "  nn.py: SyntaxError: expected ':' (nn.py, line 147)" in first["output"]
    assert "  engine.py: imports" in first["output"]
    assert "**Your upload needs attention:** see the first test below." in results["output"]


@needs_bwrap
@needs_bwrap
def test_an_empty_upload_gets_one_clear_visible_message_and_no_hidden_tests(autograder_zip, tmp_path):
    unpack(autograder_zip, tmp_path)
    results = run_autograder(tmp_path)
    assert results["score"] == 0 and len(results["tests"]) == 1
    message = results["tests"][0]["output"]
    assert message.startswith("No minigrad code was found in your upload. Upload the files of your minigrad/ folder")
    assert message.endswith("Your upload is empty.") and results["tests"][0]["visibility"] == "visible"
    assert "No hidden test ran, since there was nothing to grade" in results["output"]


@needs_bwrap
def test_without_a_sandbox_fit_for_official_grades_it_says_so_and_gives_no_score(autograder_zip, tmp_path):
    place("correct", unpack(autograder_zip, tmp_path), "minigrad")
    results = run_autograder(tmp_path, "--cap-drop", "ALL")  # root without capabilities: no bwrap, no uid switch
    assert "score" not in results and results["tests"] == []
    assert results["output"].startswith("### minigrad autograder\n\n**Not graded:** your upload was received")
    assert "For the instructor: grading needs the bwrap or user level, and this machine cannot" in results["output"]
    assert results["extra_data"]["graded"] is False


def test_the_zip_holds_what_grading_needs_and_the_same_inputs_give_the_same_bytes(autograder_zip, tmp_path):
    (tmp_path / "secret").write_text("a course secret for the tests\n")
    again = tmp_path / "again.zip"
    package.main(["--secret-file", str(tmp_path / "secret"), "--out", str(again)])
    assert again.read_bytes() == autograder_zip.read_bytes()
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        assert archive.read("requirements.txt").decode().split() == [
            "pytest>=8",
            "pytest-json-report>=1.5",
            "numpy>=1.24",
        ]
        assert json.loads(archive.read("settings.json")) == {"visibility": "after_due_date"}
        assert archive.read("course_secret") == b"a course secret for the tests\n"
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
    assert {"setup.sh", "run_autograder", "graders/suites/test_mlp.py", "reference/minigrad/engine.py"} <= names
    assert not any(name.startswith(("tests/", "course/", "assignments/")) for name in names)
    shared = sorted(name for name in names if name.startswith("reference/checks/"))  # the grader reads these two
    assert shared == ["reference/checks/course_api.py", "reference/checks/parts.py"]


@pytest.mark.parametrize(
    "where, content, message",
    [("outside", "", "the course secret is empty"), ("repository", "s3cret", "git would commit it")],
)
def test_a_secret_that_is_empty_or_that_git_would_commit_is_refused(tmp_path, where, content, message):
    # Inside the repository, but not in reference/: the release tests list that folder while
    # this one runs, and would read a file that is gone a moment later.
    secret = (tmp_path if where == "outside" else ROOT / "tests") / "course-secret-for-a-test"
    secret.write_text(content)
    try:
        with pytest.raises(SystemExit, match=message):
            package.main(["--secret-file", str(secret), "--out", str(tmp_path / "autograder.zip")])
    finally:
        secret.unlink()
    assert not (tmp_path / "autograder.zip").exists()


@pytest.mark.parametrize(
    "spec, lines",
    [
        (
            "broken-import-time-exception",
            [
                "  engine.py: RuntimeError: left-over debugging code (engine.py, line 326)",
                "  __init__.py: imports",
                "  checkpoint.py: imports",
            ],
        ),
        ("broken-missing-nn", ["missing: nn.py (the tests that use them will fail)", "  engine.py: imports"]),
    ],
)
def test_the_import_check_names_the_error_with_its_file_and_line_or_the_missing_file(tmp_path, spec, lines):
    submission = materialize(SPECS / f"{spec}.json", tmp_path / "built")
    _, results = grade(submission, tmp_path / "out", "--check-imports", "--parts", "checkpoint", "--isolation", "local")
    first = results["tests"][0]
    assert (first["status"], first["visibility"], first["score"]) == ("failed", "visible", 0.0)
    assert all(line in first["output"].splitlines() for line in lines), first["output"]
    assert results["score"] == POINTS["checkpoint"]  # the hidden tests ran: the quiz needs neither engine.py nor nn.py
