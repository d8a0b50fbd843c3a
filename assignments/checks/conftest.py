"""Public checks for minigrad: which code they check, and how their results are shown.

`--submission DIR` picks the folder that holds `minigrad/` (default: the folder above
`checks/`), `--part` one part (by name or number), `--all-failures` every failure instead of
the first few. Each part's modules are imported before its checks are collected, so a file
that does not load (a syntax error, a missing file, an exception at import) is reported once,
with its file and line, and only the parts that need it are stopped; the check files reach
minigrad only through `student.py`, so a missing or older given file costs only the checks
that use it. Each check has a budget of CPU time, so an endless loop costs one check, not the
run, and a busy machine never fails honest code. Failures are rewritten into one short message
each, and the run ends with a table of checks passed per part, then anything the grader would
refuse (a file over its size limit).
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import pytest

import course_api
import student
from parts import EXTENSIONS, PARTS, Part, choices, find, following

# The budget counts the CPU time of every thread. NumPy's BLAS may start helper threads that wait
# busily and count as CPU, and they do not speed up arrays as small as these: one thread does it.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

SHOWN_FAILURES = 3
# The budget is CPU time, the time the check computes: on a busy machine an honest check waits
# longer, but computes no more. The slowest check (the two-moons milestone, pictures included)
# needs one to three seconds.
TIME_LIMIT = 10.0  # CPU seconds per check
AFTER_A_LOOP = 2.0  # CPU seconds per check once one has run out of time: a loop usually sits in a shared operator
WALL_FACTOR = 6  # a check that waits instead of computing (a sleep) is stopped after this many times its budget
# A check that computed for at least this share of that wait is not waiting: the machine is busy
# and it gets little CPU. It gets another wait, up to LAST_RESORT times its budget by the clock.
COMPUTING_SHARE = 0.01
LAST_RESORT = 20
# What the grader accepts of minigrad/ (it refuses the rest): the limits of graders/uploads/intake.py.
GRADER_MAX_FILE_BYTES = 512 * 1024
GRADER_MAX_FILES = 32
GRADER_MAX_TOTAL_BYTES = 4 * 1024 * 1024
SUBMISSION = pytest.StashKey[Path]()
CHOSEN = pytest.StashKey[list]()  # the parts this run checks
UNLOADED = pytest.StashKey[dict]()  # part name -> why its modules could not be imported
COLLECTED = pytest.StashKey[Counter]()  # part name -> how many of its checks were collected
LOOPED = pytest.StashKey[bool]()  # a check of this run has run out of time
WARNINGS = pytest.StashKey[list]()  # what the grader would refuse, and given files that are missing


class CheckTookTooLong(BaseException):
    """Raised inside the running check when its time is up (BaseException: a student's
    `except Exception` must not swallow it). Says how long it ran, against which limit."""

    def __init__(self, used: float, limit: float, computing: bool, cpu: float, shortened: bool):
        super().__init__(used, limit)
        self.used, self.limit, self.computing, self.cpu, self.shortened = used, limit, computing, cpu, shortened


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--submission",
        default=str(Path(__file__).resolve().parent.parent),
        help="folder holding the minigrad/ package to check",
    )
    parser.addoption("--part", default="", help=f"check one part: {choices()}")
    parser.addoption("--all-failures", action="store_true", help="show every failure, not the first few")
    parser.addoption("--pictures", default="pictures", help="where the milestone draws its pictures ('': none)")
    parser.addoption("--time-limit", type=float, default=TIME_LIMIT, help="CPU seconds per check")


def pytest_configure(config: pytest.Config) -> None:
    # Value graphs are full of reference cycles; collecting them less often makes training
    # about three times faster without changing any result.
    gc.set_threshold(100_000, 50, 100)
    for part in (*PARTS, EXTENSIONS):
        config.addinivalue_line("markers", f"{part.name}: {part.label}: minigrad/, {part.lesson}")
    folder = Path(config.getoption("--submission")).resolve()
    if folder.name == "minigrad":
        folder = folder.parent
    if not (folder / "minigrad").is_dir():
        raise pytest.UsageError(f"no minigrad/ folder in {folder}")
    chosen = list(PARTS)
    if wanted := config.getoption("--part"):
        if (part := find(wanted)) is None:
            raise pytest.UsageError(f"there is no part {wanted!r}; the parts are: {choices()}")
        chosen = [part]
    sys.path.insert(0, str(folder))
    student.FOLDER = folder
    config.stash[SUBMISSION] = folder
    config.stash[WARNINGS] = grader_warnings(folder / "minigrad")
    config.stash[CHOSEN] = chosen
    config.stash[UNLOADED] = {part.name: problem for part in chosen if (problem := load(part, folder))}


def load(part: Part, folder: Path) -> str | None:
    """Import the part's modules; why one could not be, in a few lines, or None."""
    for module in part.modules:
        try:
            importlib.import_module(f"minigrad.{module}")
        except KeyboardInterrupt:
            raise
        except NotImplementedError:
            return None  # a hole at the top of the file (the quiz's answers): its checks say "not attempted"
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import is the student's too
            return load_problem(exc, module, folder)
    return None


def load_problem(exc: BaseException, module: str, folder: Path) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name == f"minigrad.{module}":
        return f"minigrad/{module}.py is missing\nhint: {student.restore_hint(module)}"
    if isinstance(exc, SyntaxError):
        where = _relative(exc.filename or "", folder)
        shown = f"\n    {exc.text.strip()}" if exc.text else ""
        return (
            f"{where}, line {exc.lineno}: {type(exc).__name__}: {exc.msg}{shown}\n"
            "hint: Python could not read this file: fix that line (or the one just above it)"
        )
    frame_line = _student_frame(exc.__traceback__, folder)
    where = f"{_relative(frame_line[0].f_code.co_filename, folder)}, line {frame_line[1]}" if frame_line else module
    if isinstance(exc, ModuleNotFoundError):
        hint = "the checks and the grader offer only the standard library and NumPy"
    else:
        hint = "this runs when the file is imported, before any check: look at code outside functions"
    return f"{where}: {type(exc).__name__}: {exc}\nhint: {hint}"


def _relative(filename: str, folder: Path) -> str:
    path = Path(filename).resolve()
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else path.name


def grader_warnings(package: Path) -> list[str]:
    """What the grader would refuse of `package` (it reads only its `.py` files, each up to a
    size, so many, so much in all), and a missing `__init__.py`: each a line and a hint."""
    warnings = []
    if not (package / "__init__.py").is_file():
        warnings.append(f"minigrad/__init__.py is missing\nhint: {student.restore_hint('__init__')}")
    files = sorted(p for p in package.glob("*.py") if p.is_file())
    kib = GRADER_MAX_FILE_BYTES // 1024
    for path in files:
        if (size := path.stat().st_size) > GRADER_MAX_FILE_BYTES:
            warnings.append(
                f"minigrad/{path.name} is {size / 1024:.0f} KiB: the grader refuses any file over {kib} KiB, "
                f"and grades your work without it\n"
                f"hint: keep each file under {kib} KiB: no data, pasted output or generated code in minigrad/"
            )
    if len(files) > GRADER_MAX_FILES:
        warnings.append(
            f"minigrad/ has {len(files)} .py files: the grader reads only the first {GRADER_MAX_FILES}\n"
            "hint: keep only the assignment's files (and a few of your own) in minigrad/"
        )
    if (total := sum(p.stat().st_size for p in files)) > GRADER_MAX_TOTAL_BYTES:
        mib = GRADER_MAX_TOTAL_BYTES // 1024**2
        warnings.append(
            f"minigrad/ holds {total / 1024**2:.1f} MiB of .py files: the grader stops reading at "
            f"{mib} MiB\nhint: keep minigrad/ small: no data or generated code in it"
        )
    return warnings


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Skip the check files of parts not chosen, or whose modules did not load."""
    if not collection_path.name.startswith("test_"):
        return None
    wanted = {p.checks for p in config.stash[CHOSEN] if p.name not in config.stash[UNLOADED]}
    return collection_path.name not in wanted


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count each part's checks, as selected (`-m` may have deselected some)."""
    session.config.stash[COLLECTED] = Counter(map(_part_of, session.items))


def _part_of(item: pytest.Item) -> str:
    names = {part.name for part in (*PARTS, EXTENSIONS)}
    return next((m.name for m in item.iter_markers() if m.name in names), "other")


@pytest.fixture
def pictures(request: pytest.FixtureRequest) -> Path | None:
    """The folder the milestone draws into (created on demand), or None: no pictures."""
    if not (chosen := request.config.getoption("--pictures")):
        return None
    folder = Path(chosen)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _student_frame(tb, folder: Path):
    """The innermost traceback entry inside the submission's minigrad/, if any (never the
    checks' own files, which sit in the same folder in the release)."""
    found = None
    package = folder / "minigrad"
    for frame, line in traceback.walk_tb(tb):
        if Path(frame.f_code.co_filename).resolve().is_relative_to(package):
            found = (frame, line)
    return found


def _where(frame_line, folder: Path) -> str:
    frame, line = frame_line
    code = frame.f_code
    return f"`{_qualified(code)}` ({_relative(code.co_filename, folder)}:{line})"


def _qualified(code) -> str:
    """`Value.backward`, not a bare `backward`: code knows its qualified name from Python 3.11 on;
    on 3.10 the function that runs it does."""
    if hasattr(code, "co_qualname"):
        return code.co_qualname
    functions = (f for f in gc.get_referrers(code) if getattr(f, "__code__", None) is code)
    return next((f.__qualname__ for f in functions), code.co_name)


def not_attempted(excinfo: pytest.ExceptionInfo, folder: Path) -> bool:
    """Whether the check stopped at a hole not filled yet (a `NotImplementedError` raised in
    the student's code, a quiz answer not written), not at written code that is wrong."""
    from feedback import Unanswered

    exc = excinfo.value
    return isinstance(exc, Unanswered) or (
        isinstance(exc, NotImplementedError) and _student_frame(excinfo.tb, folder) is not None
    )


def short_message(excinfo: pytest.ExceptionInfo, folder: Path, part: str = "") -> str:
    """One plain-words explanation of why a check failed (in `part`, whose code it ran)."""
    from feedback import CheckFailure

    exc = excinfo.value
    if isinstance(exc, CheckFailure):
        return str(exc)
    frame_line = _student_frame(excinfo.tb, folder)
    if isinstance(exc, NotImplementedError) and frame_line:
        return f"not attempted yet: {_where(frame_line, folder)}"
    if isinstance(exc, CheckTookTooLong):
        return over_time(exc, frame_line, folder, part)
    unmet = course_api.unmet(type(exc).__name__, str(exc))
    if unmet and not frame_line:  # no line of the student's code ran: name the requirement
        return unmet
    where = f" in {_where(frame_line, folder)}" if frame_line else ""
    message = f"crashed{where}: {type(exc).__name__}: {exc}"
    if frame_line and (given := Path(frame_line[0].f_code.co_filename).stem) in student.GIVEN:
        return f"{message}\nhint: {student.restore_hint(given)}"
    if unmet:
        return f"{message}\nhint: {unmet}"
    plain_number = course_api.plain_number_hint(type(exc).__name__, str(exc))
    return f"{message}\nhint: {plain_number}" if plain_number else message


def over_time(exc: CheckTookTooLong, frame_line, folder: Path, part: str = "") -> str:
    """Say how long the check ran and where it was, without calling slow code a loop; the
    hint's likely causes are those of the part's code (NumPy only where the part uses it)."""
    where = _where(frame_line, folder) if frame_line else "your code"
    limit = f"limit {exc.limit:g} s" + (" once a check has run out of time" if exc.shortened else "")
    if exc.computing:
        hint = LOOP_HINT + (NUMPY_LOOP if part in NUMPY_PARTS else GRAPH_LOOP)
        return f"took {exc.used:.1f} s ({limit}): slow, or an endless loop in {where}\nhint: {hint}"
    return (
        f"waited {exc.used:.0f} s, computing only {exc.cpu:.1f} s of it ({limit} of waiting): "
        f"a sleep, input() or a wait that never ends in {where}\n"
        "hint: no check needs sleep() or input(): take them out of minigrad/"
    )


LOOP_HINT = (
    "a loop whose condition never changes, two operators that call each other (`__sub__` through "
    "`__neg__` through `__sub__`), or "
)
GRAPH_LOOP = "a walk of the graph that visits a node again and again (keep a set of the nodes visited)"
NUMPY_LOOP = "a Python loop over entries where one NumPy call would do"
NUMPY_PARTS = ("tensor",)  # the parts whose code computes on NumPy arrays


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Run the check with two alarms: one on the CPU time it uses (the budget), one on the
    clock, WALL_FACTOR times later, for a check that waits instead of computing. The CPU alarm
    stops the check where it is; the clock's stops it only if it hardly computed meanwhile (a
    sleep, input()), since on a busy machine an honest check can get less than a sixth of a core."""
    first = item.config.getoption("--time-limit")
    shortened = item.config.stash.get(LOOPED, False) and AFTER_A_LOOP < first
    limit = AFTER_A_LOOP if shortened else first
    wait = limit * WALL_FACTOR
    cpu, wall = time.process_time(), time.monotonic()
    last_cpu = [cpu]  # at the start of the current wait

    def stop(signum, frame):
        used_cpu, now = time.process_time(), time.monotonic()
        starved = used_cpu - last_cpu[0] >= COMPUTING_SHARE * wait and now - wall < limit * LAST_RESORT
        if signum == signal.SIGALRM and starved:
            last_cpu[0] = used_cpu
            signal.setitimer(signal.ITIMER_REAL, wait)
            return
        for timer in (signal.ITIMER_PROF, signal.ITIMER_REAL):
            signal.setitimer(timer, 0)
        item.config.stash[LOOPED] = True
        if signum == signal.SIGPROF:
            raise CheckTookTooLong(max(used_cpu - cpu, limit), limit, True, used_cpu - cpu, shortened)
        raise CheckTookTooLong(now - wall, wait, False, used_cpu - cpu, shortened)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, limit)
    signal.setitimer(signal.ITIMER_REAL, wait)
    try:
        return (yield)
    finally:
        for timer in (signal.ITIMER_PROF, signal.ITIMER_REAL):
            signal.setitimer(timer, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    report.user_properties.append(("part", _part_of(item)))
    if call.excinfo is not None and report.failed and call.when == "call":
        folder = item.config.stash[SUBMISSION]
        report.longrepr = short_message(call.excinfo, folder, _part_of(item))
        report.user_properties.append(("not attempted", not_attempted(call.excinfo, folder)))
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.stash[UNLOADED] and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    results: dict[str, list] = {}
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if report.when == "call" or (outcome == "error" and hasattr(report, "user_properties")):
                results.setdefault(dict(report.user_properties).get("part", "other"), []).append(report)
    chosen, unloaded, collected = config.stash[CHOSEN], config.stash[UNLOADED], config.stash.get(COLLECTED, Counter())
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    write = terminalreporter.write_line
    write("")
    write("minigrad public checks (the hidden tests grade more cases than these)")
    write(f"{'part':<12}{'passed':>10}")
    for part in chosen:
        reports, total = results.get(part.name, []), collected.get(part.name, 0)
        if not total and part.name not in unloaded:
            continue  # deselected (`-m`)
        passed = sum(r.passed for r in reports)
        if part.name in unloaded:
            verdict = f"{'-':>10}   could not load (below)"
        else:
            whole = len(reports) == total
            note = (
                "all pass"
                if whole and passed == total
                else ""
                if whole
                else f"stopped after {len(reports)}"
                if reports
                else "not run"
            )
            verdict = f"{f'{passed} / {total}':>10}   {note}"
        write(f"{part.name:<12}{verdict}")
    for problem in dict.fromkeys(unloaded.values()):  # one broken file may stop several parts
        write("")
        write(f"--- {', '.join(n for n, p in unloaded.items() if p == problem)}: could not load the code ---")
        for line in problem.splitlines():
            write(f"    {line}")
    warnings = config.stash.get(WARNINGS, [])
    if warnings:
        write("")
        write("--- before you submit ---")
        for line in "\n".join(warnings).splitlines():
            write(f"    {line}")
    failing = [p for p in chosen if any(not r.passed for r in results.get(p.name, []))]
    everything = config.getoption("--all-failures")
    hidden = 0
    for part in failing if everything else failing[:1]:
        failures = [r for r in results[part.name] if not r.passed]
        shown = failures if everything else failures[:SHOWN_FAILURES]
        hidden += len(failures) - len(shown)
        write("")
        write(f"--- {part.name}: {'failures' if everything else 'first failures'} ({len(failures)} in all) ---")
        for report in shown:
            write(f"* {report.head_line}")
            for line in str(report.longrepr).splitlines():
                write(f"    {line}")
    for report in (r for reports in results.values() for r in reports):
        if pictures := dict(report.user_properties).get("pictures"):
            milestone, drawn = pictures
            if drawn:
                write("")
                write(f"Pictures of the {milestone}: {drawn}")
    write("")
    for line in closing(chosen, results, unloaded, failing, interrupted, hidden):
        write(line)
    if warnings:
        write("Before you submit, fix what is listed under `before you submit`.")


def closing(
    chosen: list[Part], results: dict, unloaded: dict, failing: list[Part], interrupted: bool, hidden: int
) -> list[str]:
    """What to do next, in words."""
    if interrupted:
        return ["Interrupted before every check ran: the table covers only the checks that did."]
    if failing or unloaded:
        lines = ["Fix the first failure of the earliest part first; later parts build on it."]
        if unloaded:
            lines = ["Fix the code that could not load first: every check of the parts it stops waits on it."]
        if len(chosen) > 1:
            lines.append(f"Run one part alone with `make check PART=value` (parts: {choices()}).")
        if hidden or (len(failing) > 1 and len(chosen) > 1):
            lines.append("`make check VERBOSE=1` shows every failure.")
        if chosen == [EXTENSIONS]:
            lines = ["The extensions are optional: each one that passes its hidden tests adds bonus points."]
        elif not unloaded and all(_not_attempted(r) for reports in results.values() for r in reports):
            start = chosen[0] if len(chosen) == 1 else PARTS[0]  # the part asked for, or the first
            lines = [
                f"Nothing passes yet, which is where everyone starts. Begin with {start.label}:",
                f"read {start.lesson}, fill the holes it names, then run",
                f"`make check PART={start.name}`.",
            ]
        return lines
    if chosen == [EXTENSIONS]:
        return ["The optional extensions pass every public check: their hidden tests add bonus points."]
    if len(chosen) == 1:
        part, after = chosen[0], following(chosen[0])
        if after is None:
            return [
                f"{_sentence(part.label)} passes every public check. That was the last part:",
                "run `make check` for every part, then submit.",
            ]
        return [
            f"{_sentence(part.label)} passes every public check. Next: {after.label}:",
            f"read {after.lesson}, then `make check PART={after.name}`.",
        ]
    return [
        "Every public check passes. Submit when ready: the hidden tests check more.",
        f"Optional extensions for bonus points: {EXTENSIONS.lesson}, `make check PART=extensions`.",
    ]


def _not_attempted(report) -> bool:
    """When every check of the run stopped at a hole, nothing is written yet and the student is
    told where to begin; a check of written code that fails is counted as any failure."""
    return dict(report.user_properties).get("not attempted", False)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
