"""Public checks for minigrad: which code they check, and how their results are shown.

`--submission DIR` picks the folder that holds `minigrad/` (default: the folder above
`checks/`), `--part` one part (by name or number), `--all-failures` every failure instead of
the first few. Each part's modules are imported before its checks are collected, so a file
that does not load (a syntax error, a missing file, an exception at import) is reported once,
with its file and line, and only the parts that need it are stopped. Each check has a time
limit, so an endless loop costs one check, not the run. Failures are rewritten into one short
message each, and the run ends with a table of checks passed per part.
"""

from __future__ import annotations

import gc
import importlib
import signal
import sys
import traceback
from collections import Counter
from pathlib import Path

import pytest

from parts import EXTENSIONS, PARTS, Part, choices, find, following

SHOWN_FAILURES = 3
TIME_LIMIT = 10.0  # seconds per check: the slowest (training on two moons) needs a quarter of one
AFTER_A_LOOP = 2.0  # seconds per check once one has timed out: a loop usually sits in a shared operator
SUBMISSION = pytest.StashKey[Path]()
CHOSEN = pytest.StashKey[list]()  # the parts this run checks
UNLOADED = pytest.StashKey[dict]()  # part name -> why its modules could not be imported
COLLECTED = pytest.StashKey[Counter]()  # part name -> how many of its checks were collected
LOOPED = pytest.StashKey[bool]()  # a check of this run has timed out


class CheckTookTooLong(BaseException):
    """Raised inside the running check when its time is up (BaseException: a student's
    `except Exception` must not swallow it)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--submission",
        default=str(Path(__file__).resolve().parent.parent),
        help="folder holding the minigrad/ package to check",
    )
    parser.addoption("--part", default="", help=f"check one part: {choices()}")
    parser.addoption("--all-failures", action="store_true", help="show every failure, not the first few")
    parser.addoption("--pictures", default="pictures", help="where the milestone draws its pictures ('': none)")


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
    config.stash[SUBMISSION] = folder
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
        return (f"minigrad/{module}.py is missing\n"
                f"hint: the assignment comes with it; restore it (`git checkout -- minigrad/{module}.py`)")  # fmt: skip
    if isinstance(exc, SyntaxError):
        where = _relative(exc.filename or "", folder)
        shown = f"\n    {exc.text.strip()}" if exc.text else ""
        return (f"{where}, line {exc.lineno}: {type(exc).__name__}: {exc.msg}{shown}\n"
                "hint: Python could not read this file: fix that line (or the one just above it)")  # fmt: skip
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
    """The innermost traceback entry inside the submission's code, if any."""
    found = None
    for frame, line in traceback.walk_tb(tb):
        if Path(frame.f_code.co_filename).resolve().is_relative_to(folder):
            found = (frame, line)
    return found


def _where(frame_line, folder: Path) -> str:
    frame, line = frame_line
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    return f"`{name}` ({_relative(code.co_filename, folder)}:{line})"


WRAP_HINT = ("hint: a plain number reached code that expects a Value: wrap it first, "
             "`other = other if isinstance(other, Value) else Value(other)`")  # fmt: skip


def short_message(excinfo: pytest.ExceptionInfo, folder: Path) -> str:
    """One plain-words explanation of why a check failed."""
    from feedback import CheckFailure

    exc = excinfo.value
    if isinstance(exc, CheckFailure):
        return str(exc)
    frame_line = _student_frame(excinfo.tb, folder)
    if isinstance(exc, NotImplementedError) and frame_line:
        return f"not attempted yet: {_where(frame_line, folder)}"
    if isinstance(exc, CheckTookTooLong):
        where = f": look for an endless loop in {_where(frame_line, folder)}" if frame_line else ""
        return f"took too long (over {exc.args[0]:g} s){where}"
    where = f" in {_where(frame_line, folder)}" if frame_line else ""
    message = f"crashed{where}: {type(exc).__name__}: {exc}"
    plain_number = isinstance(exc, AttributeError) and str(exc).startswith(("'int' object", "'float' object"))
    return f"{message}\n{WRAP_HINT}" if plain_number else message


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Run the check with an alarm: past the time limit it stops where it is."""
    limit = AFTER_A_LOOP if item.config.stash.get(LOOPED, False) else TIME_LIMIT

    def stop(signum, frame):
        item.config.stash[LOOPED] = True
        raise CheckTookTooLong(limit)

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    report.user_properties.append(("part", _part_of(item)))
    if call.excinfo is not None and report.failed and call.when == "call":
        report.longrepr = short_message(call.excinfo, item.config.stash[SUBMISSION])
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


def closing(chosen: list[Part], results: dict, unloaded: dict, failing: list[Part], interrupted: bool,
            hidden: int) -> list[str]:  # fmt: skip
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
        elif not any(r.passed for reports in results.values() for r in reports) and not unloaded:
            start = chosen[0] if len(chosen) == 1 else PARTS[0]  # the part asked for, or the first
            lines = [f"Nothing passes yet, which is where everyone starts. Begin with {start.label}:",
                     f"read {start.lesson}, fill the holes it names, then run",
                     f"`make check PART={start.name}`."]  # fmt: skip
        return lines
    if chosen == [EXTENSIONS]:
        return ["The optional extensions pass every public check: their hidden tests add bonus points."]
    if len(chosen) == 1:
        part, after = chosen[0], following(chosen[0])
        if after is None:
            return [f"{_sentence(part.label)} passes every public check. That was the last part:",
                    "run `make check` for every part, then submit."]  # fmt: skip
        return [f"{_sentence(part.label)} passes every public check. Next: {after.label}:",
                f"read {after.lesson}, then `make check PART={after.name}`."]  # fmt: skip
    return ["Every public check passes. Submit when ready: the hidden tests check more.",
            f"Optional extensions for bonus points: {EXTENSIONS.lesson}, `make check PART=extensions`."]  # fmt: skip


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
