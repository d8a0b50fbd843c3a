"""`make check` as a student meets it when the code does not load, does not finish, or is
asked for a part that does not exist: each gets a short message and the rest still runs.

Every submission is the reference copied into a temp folder and broken there.
"""

from __future__ import annotations

import ast
import re
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from course.release import ROOT
from course.submissions import materialize
from graders.audit.grading import CHECKS, check_command, check_env

from grading import ctrl_c_reaches_it
from public_checks_run import check, submission, table

SPECS = ROOT / "tests" / "submissions"


def test_a_syntax_error_names_file_and_line_and_the_quiz_still_runs(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", "    def __mul__(self, other", "    def __mul__(self other")
    run = check(folder)
    assert run.returncode == 1
    assert table(run.stdout) == {
        "value": "-   could not load (below)",
        "backward": "-   could not load (below)",
        "mlp": "-   could not load (below)",
        "tensor": "59 / 59   all pass",
        "checkpoint": "12 / 12   all pass",
    }
    line = 1 + (folder / "minigrad" / "engine.py").read_text().splitlines().index(
        next(x for x in (folder / "minigrad" / "engine.py").read_text().splitlines() if "def __mul__(self other" in x)
    )
    assert (
        f"--- value, backward, mlp: could not load the code ---\n    minigrad/engine.py, line {line}: SyntaxError:"
        in (run.stdout)
    )
    assert "hint: Python could not read this file: fix that line (or the one just above it)" in run.stdout
    assert "Traceback" not in run.stdout and "INTERNALERROR" not in run.stdout + run.stderr


def test_a_missing_module_stops_only_its_part(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "minigrad" / "nn.py").unlink()
    run = check(folder)
    assert run.returncode == 1
    rows = table(run.stdout)
    assert rows["mlp"] == "-   could not load (below)"
    assert all(rows[part].endswith("all pass") for part in ("value", "backward", "checkpoint")), rows
    assert "    minigrad/nn.py is missing\n    hint: the assignment comes with it; restore it" in run.stdout


def test_an_exception_at_import_names_file_and_line(tmp_path: Path) -> None:
    folder = submission(tmp_path, "nn.py", "\nACTIVATIONS", "\nprint(undefined_name)\nACTIVATIONS")
    run = check(folder)
    line = (folder / "minigrad" / "nn.py").read_text().splitlines().index("print(undefined_name)") + 1
    assert f"    minigrad/nn.py, line {line}: NameError: name 'undefined_name' is not defined\n" in run.stdout
    assert "hint: this runs when the file is imported, before any check: look at code outside functions" in run.stdout
    assert table(run.stdout)["value"].endswith("all pass")


def test_an_endless_loop_costs_only_the_checks_that_reach_it(tmp_path: Path) -> None:
    """The budget is CPU time, so the bound is on the CPU the run used: on a busy machine the
    same run takes longer by the clock, and still stops each loop after its budget."""
    # In `exp`, which four of the value checks reach (a loop in `__neg__` would cost twenty)
    loops = "        while True:\n            pass\n"
    folder = submission(tmp_path, "engine.py", '        out = Value(math.exp(self.data), (self,), "exp")\n', loops)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = check(folder, "--part", "value", "--all-failures")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    lines = (folder / "minigrad" / "engine.py").read_text().splitlines()
    loop = lines.index("        while True:") + 1
    failing = [line for line in run.stdout.splitlines() if line.startswith("    took ")]
    assert re.fullmatch(
        r"    took 10\.\d s \(limit 10 s\): slow, or an endless loop in `Value.exp` "
        rf"\(minigrad/engine.py:({loop}|{loop + 1})\)",
        failing[0],
    ), failing[0]
    later = r"    took 2\.\d s \(limit 2 s once a check has run out of time\): slow, or an endless loop in `Value.exp`"
    assert all(re.match(later, line) for line in failing[1:]), failing
    failed = int(re.search(r"(\d+) failed", run.stdout).group(1))
    assert failed == len(failing) > 1
    assert cpu < 10 + 2 * (failed - 1) + 15  # each check after the first stops after 2 s of CPU
    passed, total = map(int, re.match(r"(\d+) / (\d+)", table(run.stdout)["value"]).groups())
    assert passed == total - failed


def test_the_loop_is_found_in_the_student_code_when_the_checks_sit_beside_it(tmp_path: Path) -> None:
    """In the release and in a Classroom repository, checks/ sits in the folder that holds
    minigrad/: the stopped check is still located in minigrad/, never in the checks' own files."""
    folder = submission(tmp_path, "engine.py", "        return self * -1\n", "        while True:\n            pass\n")
    shutil.copytree(CHECKS, folder / "checks", ignore=shutil.ignore_patterns("__pycache__"))
    command = check_command("--part", "value", "--time-limit", "0.5", "-k", "test_unary_forward", checks="checks")
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=folder, env=check_env()).stdout
    assert "slow, or an endless loop in `Value.__neg__` (minigrad/engine.py:" in out, out
    assert "conftest.py" not in out


def test_a_check_that_sleeps_is_stopped_by_the_clock(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", "        return self * -1\n", "        __import__('time').sleep(60)\n")
    start = time.monotonic()
    run = check(folder, "--part", "value", "--time-limit", "0.5", "-k", "test_unary_forward")
    assert time.monotonic() - start < 30
    said = (
        r"    waited 3 s, computing only 0\.\d s of it \(limit 3 s of waiting\): a sleep, input\(\) "
        r"or a wait that never ends in `Value.__neg__` \(minigrad/engine.py:\d+\)"
    )
    assert re.search(said, run.stdout), run.stdout


def test_ctrl_c_says_the_table_is_incomplete(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", "        return self * -1\n", "        while True:\n            pass\n")
    process = subprocess.Popen(
        check_command("--submission", str(folder)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=check_env(),
        preexec_fn=ctrl_c_reaches_it,
    )
    head = ""
    while head[-1:] not in (".", "F"):  # the checks have started (Python and pytest are up, however busy the machine)
        head += process.stdout.read(1) or "F"
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    out = head + out
    rows = table(out)
    assert "Interrupted before every check ran: the table covers only the checks that did." in out
    assert all(row.endswith("not run") or "stopped after" in row for row in rows.values()), rows
    assert any("stopped after" in row for row in rows.values()), rows


@pytest.mark.parametrize("part", ["nonsense", "5", "valu"])
def test_an_unknown_part_lists_the_parts(part: str, tmp_path: Path) -> None:
    run = check(ROOT / "reference", "--part", part)
    assert run.returncode == 4
    parts = "value (1), backward (2), mlp (3), tensor (4), checkpoint (0), extensions"
    assert f"there is no part {part!r}; the parts are: {parts}" in run.stderr


@pytest.mark.parametrize(
    ("part", "after"),
    [
        ("1", "part 2, backpropagation"),
        ("Value", "part 2, backpropagation"),
        ("part 3", "part 4, the Tensor engine"),
        ("tensor", "the checkpoint quiz"),
    ],
)
def test_a_passing_part_names_the_next_one(part: str, after: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "reference" / "minigrad", tmp_path / "minigrad")
    run = check(tmp_path, "--part", part)
    assert run.returncode == 0
    assert len(table(run.stdout)) == 1
    assert f"passes every public check. Next: {after}:" in run.stdout


def test_verbose_shows_every_failure(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", "Value(self.data + other.data,", "Value(self.data - other.data,")
    short, verbose = check(folder, "--part", "value"), check(folder, "--part", "value", "--all-failures")
    count = int(re.search(r"(\d+) failed", short.stdout).group(1))
    assert count > 3
    assert short.stdout.count("\n* test_") == 3 and "`make check VERBOSE=1` shows every failure." in short.stdout
    assert verbose.stdout.count("\n* test_") == count


@pytest.mark.parametrize(
    ("spec", "failing"),
    [
        ("bug-naive-sigmoid", "test_sigmoid_of_a_large_input_does_not_overflow[-1000.0]"),
        ("bug-train-never-zeroes", "test_train_zeroes_the_gradients_every_step"),
    ],
)
def test_bugs_the_lessons_warn_about_fail_a_public_check(spec: str, failing: str, tmp_path: Path) -> None:
    folder = materialize(SPECS / f"{spec}.json", tmp_path / "sub")
    run = check(folder, "--all-failures")
    assert f"* {failing}" in run.stdout
    assert run.returncode == 1


def test_a_linear_with_a_generator_of_its_own_fails_the_public_check_as_it_fails_the_grader(tmp_path: Path) -> None:
    """The hidden linear-init wants NumPy's global random state (the API says so): the public
    check says the same, while other draws from that state (a fair variation) still pass."""
    own = check(materialize(SPECS / "bug-tensor-own-generator.json", tmp_path / "own"), "--part", "tensor")
    assert table(own.stdout)["tensor"] == "58 / 59", own.stdout
    said = "Linear(3, 2).weight, made a second time after the same np.random.seed(7)"
    assert f"* test_linear_draws_from_numpys_global_random_state\n    {said}\n" in own.stdout
    assert "not a generator of your own such as np.random.default_rng()" in own.stdout
    fair = check(materialize(SPECS / "fair-tensor-other-draws.json", tmp_path / "fair"), "--part", "tensor")
    assert table(fair.stdout)["tensor"] == "59 / 59   all pass", fair.stdout


def test_forgotten_children_are_caught_for_every_operator(tmp_path: Path) -> None:
    folder = submission(
        tmp_path,
        "engine.py",
        'Value(self.data + other.data, (self, other), "+")',
        'Value(self.data + other.data, (), "+")',
    )
    run = check(folder, "--part", "value", "--all-failures")
    assert "* test_result_remembers_its_inputs[a + b]" in run.stdout
    assert "hint:     pass the inputs as _children when you make the output Value" in run.stdout


def test_a_plain_number_operand_gets_the_wrap_hint(tmp_path: Path) -> None:
    unwrapped = (
        "        other = _as_value(other)\n        if other is NotImplemented:\n            return NotImplemented\n"
    )
    folder = submission(tmp_path, "engine.py", unwrapped, "")
    run = check(folder, "--part", "value", "--all-failures")
    assert "AttributeError: 'float' object has no attribute 'data'" in run.stdout
    assert "hint: a plain number reached code that expects a Value: wrap it first" in run.stdout


def test_a_missing_operator_is_named_from_the_shared_table_not_blamed_on_the_student(tmp_path: Path) -> None:
    """No line of the student's code runs when Python finds no `__rsub__`: make check says the
    course's requirement in the words the hidden grader uses (checks/course_api.py)."""
    folder = materialize(SPECS / "fair-no-rsub.json", tmp_path / "sub")
    run = check(folder, "--part", "value", "--all-failures")
    said = "* test_number_on_the_left[5 - b]\n    `Value` has no `__rsub__`: `2 - Value(...)` needs it\n"
    assert said in run.stdout
    assert "TypeError" not in run.stdout and "crashed" not in run.stdout


def test_the_milestone_draws_its_pictures(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "reference" / "minigrad", tmp_path / "minigrad")
    run = check(tmp_path, "--part", "mlp")
    loss, boundary = tmp_path / "pictures" / "two-moons-loss.png", tmp_path / "pictures" / "two-moons-boundary.png"
    assert f"Pictures of the two-moons milestone: {loss}, {boundary}" in run.stdout
    assert loss.read_bytes()[:8] == boundary.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


STUDENT_TEXT = [ROOT / "assignments", ROOT / "graders" / "suites", ROOT / "course" / "student_repo"]


def test_no_student_text_calls_the_course_material_seeds() -> None:
    """'seed' means a random seed or the gradient seed (grad = 1.0), never where the course came from."""
    found = [
        f"{path}: {line.strip()}"
        for folder in STUDENT_TEXT
        for path in folder.rglob("*")
        if path.is_file() and path.suffix in (".py", ".md", "")
        for line in path.read_text(errors="replace").splitlines()
        if re.search(r"\bthe seeds?'|\bseeds'|\bseed material|\bthe seeds\b", line, re.IGNORECASE)
    ]
    assert found == []


def test_untouched_extensions_are_called_optional(tmp_path: Path) -> None:
    run = check(ROOT / "assignments", "--part", "extensions")
    assert "not attempted yet: `Value.sin`" in run.stdout
    assert "The extensions are optional: each one that passes its hidden tests adds bonus points." in run.stdout
    assert "Nothing passes yet" not in run.stdout


def test_the_untouched_tensor_part_passes_nothing_and_says_where_to_begin(tmp_path: Path) -> None:
    run = check(ROOT / "assignments", "--part", "tensor")
    assert run.returncode == 1 and "59 failed in" in run.stdout and not re.search(r"\d+ passed", run.stdout)
    assert "not attempted yet: `Add.forward`" in run.stdout
    assert (
        "Nothing passes yet, which is where everyone starts. Begin with part 4, the Tensor engine:\n"
        "read lessons/04-tensor.md, fill the holes it names, then run\n`make check PART=tensor`."
    ) in run.stdout


BEFORE_PART_4 = "ebef3a8^"  # the commit before part 4: its datasets.py has no `digits`


def test_a_datasets_file_from_before_part_4_costs_only_the_digits_check(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    stale = subprocess.run(
        ["git", "show", f"{BEFORE_PART_4}:reference/minigrad/datasets.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "def digits" not in stale and "def two_moons" in stale
    (folder / "minigrad" / "datasets.py").write_text(stale)
    run = check(folder)
    rows = table(run.stdout)
    assert rows.pop("tensor") == "58 / 59" and all(row.endswith("all pass") for row in rows.values()), rows
    assert (
        "* test_milestone_digits_are_learned\n"
        "    load minigrad/datasets.py\n"
        "        expected: `digits`\n"
        "        got:      no `digits` in it: an older copy, from before the part that uses it?\n"
        "        hint:     copy `datasets.py` from the release: it is given, not a hole (`git checkout -- "
    ) in run.stdout
    assert "Interrupted" not in run.stdout and run.returncode == 1


@pytest.mark.parametrize("broken", ["missing", "syntax error"])
def test_a_missing_or_broken_given_file_costs_only_the_checks_that_use_it(broken: str, tmp_path: Path) -> None:
    folder = submission(tmp_path)
    datasets = folder / "minigrad" / "datasets.py"
    if broken == "missing":
        datasets.unlink()
    else:
        datasets.write_text(datasets.read_text() + "\ndef oops(:\n")
    run = check(folder, "--all-failures")
    rows = table(run.stdout)
    assert rows["mlp"] == "16 / 19" and rows["tensor"] == "58 / 59", rows
    assert all(rows[part].endswith("all pass") for part in ("value", "backward", "checkpoint")), rows
    got = "minigrad/datasets.py is missing" if broken == "missing" else "line 70: SyntaxError: invalid syntax"
    assert run.stdout.count(f"        got:      {got}\n") == 4, run.stdout
    assert "Interrupted" not in run.stdout


def test_a_missing_init_file_is_said_and_every_part_still_runs(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    (folder / "minigrad" / "__init__.py").unlink()
    run = check(folder, "--part", "checkpoint")
    assert table(run.stdout) == {"checkpoint": "12 / 12   all pass"}
    assert "--- before you submit ---\n    minigrad/__init__.py is missing\n    hint: copy `__init__.py`" in run.stdout


def test_restore_hints_give_the_path_from_where_make_check_runs(tmp_path: Path) -> None:
    """From the repository's top the submission is `assignments/`, in a Classroom repository
    it is `.`: the command in the hint must work where it is typed."""
    folder = submission(tmp_path / "course" / "assignments")
    (folder / "minigrad" / "nn.py").unlink()
    command = check_command("--submission", "assignments", "--part", "mlp", "--pictures", "")
    out = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path / "course", env=check_env()
    ).stdout
    assert "hint: the assignment comes with it; restore it (`git checkout -- assignments/minigrad/nn.py`)" in out


def test_a_file_the_grader_would_refuse_is_warned_about(tmp_path: Path) -> None:
    from graders.uploads import intake

    assert grader_limits_of_the_checks() == {
        "GRADER_MAX_FILE_BYTES": intake.MAX_FILE_BYTES,
        "GRADER_MAX_FILES": intake.MAX_FILES,
        "GRADER_MAX_TOTAL_BYTES": intake.MAX_TOTAL_BYTES,
    }
    folder = submission(tmp_path)
    nn = folder / "minigrad" / "nn.py"
    nn.write_text(nn.read_text() + "\nTABLE = " + repr("x" * 600 * 1024) + "\n")
    run = check(folder, "--part", "checkpoint")
    kib = round(nn.stat().st_size / 1024)
    assert (
        "--- before you submit ---\n"
        f"    minigrad/nn.py is {kib} KiB: the grader refuses any file over 512 KiB, and grades your work without it\n"
        "    hint: keep each file under 512 KiB: no data, pasted output or generated code in minigrad/\n"
    ) in run.stdout
    assert "Before you submit, fix what is listed under `before you submit`." in run.stdout


def grader_limits_of_the_checks() -> dict[str, int]:
    """The GRADER_* limits the checks' conftest.py states (read, not run: it is a conftest)."""
    tree = ast.parse((ROOT / "reference" / "checks" / "conftest.py").read_text())
    return {
        target.id: eval(compile(ast.Expression(node.value), "conftest.py", "eval"))  # noqa: S307 - our own file
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.startswith("GRADER_")
    }
