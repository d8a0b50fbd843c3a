"""Public checks for minigrad: which code they check, and how their results are shown.

`--submission DIR` picks the folder that holds `minigrad/` (default: the folder above
`checks/`). Failures are rewritten into one short message each, and the run ends with a
table of checks passed per part.
"""

from __future__ import annotations

import gc
import sys
import traceback
from pathlib import Path

import pytest

PARTS = {
    "value": "part 1, the Value operators: minigrad/engine.py, lessons/01-value.md",
    "backward": "part 2, backpropagation: minigrad/engine.py, minigrad/gradcheck.py, lessons/02-backward.md",
    "mlp": "part 3, networks and training: minigrad/nn.py, lessons/03-mlp.md",
    "checkpoint": "the checkpoint quiz: minigrad/checkpoint.py, lessons/checkpoint.md",
}
SHOWN_FAILURES = 3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--submission",
        default=str(Path(__file__).resolve().parent.parent),
        help="folder holding the minigrad/ package to check",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Value graphs are full of reference cycles; collecting them less often makes training
    # about three times faster without changing any result.
    gc.set_threshold(100_000, 50, 100)
    for part, about in PARTS.items():
        config.addinivalue_line("markers", f"{part}: {about}")
    folder = Path(config.getoption("--submission")).resolve()
    if folder.name == "minigrad":
        folder = folder.parent
    if not (folder / "minigrad").is_dir():
        raise pytest.UsageError(f"no minigrad/ folder in {folder}")
    sys.path.insert(0, str(folder))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    config.stash[SUBMISSION] = folder


SUBMISSION = pytest.StashKey[Path]()


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
    return f"`{name}` ({Path(code.co_filename).resolve().relative_to(folder)}:{line})"


def short_message(excinfo: pytest.ExceptionInfo, folder: Path) -> str:
    """One plain-words explanation of why a check failed."""
    from feedback import CheckFailure

    exc = excinfo.value
    if isinstance(exc, CheckFailure):
        return str(exc)
    frame_line = _student_frame(excinfo.tb, folder)
    if isinstance(exc, NotImplementedError) and frame_line:
        return f"not attempted yet: {_where(frame_line, folder)}"
    where = f" in {_where(frame_line, folder)}" if frame_line else ""
    return f"crashed{where}: {type(exc).__name__}: {exc}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    parts = [m.name for m in item.iter_markers() if m.name in PARTS]
    report.user_properties.append(("part", parts[0] if parts else "other"))
    if call.excinfo is not None and report.failed and call.when == "call":
        report.longrepr = short_message(call.excinfo, item.config.stash[SUBMISSION])
    return report


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    results: dict[str, list] = {}
    for outcome in ("passed", "failed", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            if report.when == "call" or outcome == "error":
                part = dict(report.user_properties).get("part", "other")
                results.setdefault(part, []).append(report)
    if not results:
        return
    write = terminalreporter.write_line
    write("")
    write("minigrad public checks (the hidden tests grade more cases than these)")
    write(f"{'part':<12}{'passed':>10}")
    for part in [p for p in PARTS if p in results]:
        reports = results[part]
        passed = sum(r.passed for r in reports)
        write(f"{part:<12}{f'{passed} / {len(reports)}':>10}   {'all pass' if passed == len(reports) else ''}")
    failing = [p for p in PARTS if p in results and not all(r.passed for r in results[p])]
    if failing:
        part = failing[0]
        failures = [r for r in results[part] if not r.passed]
        write("")
        write(f"--- {part}: first failures ({len(failures)} in all) ---")
        for report in failures[:SHOWN_FAILURES]:
            write(f"* {report.head_line}")
            for line in str(report.longrepr).splitlines():
                write(f"    {line}")
    passed_any = any(r.passed for reports in results.values() for r in reports)
    write("")
    if not passed_any:
        write("Nothing passes yet, which is where everyone starts. Begin with part 1:")
        write("read lessons/01-value.md, fill the holes in minigrad/engine.py, then run")
        write("`make check PART=value`.")
    elif exitstatus != 0:
        write("Fix the first failure of the earliest part first; later parts build on it.")
        write("Run one part alone with `make check PART=value` (or backward, mlp, checkpoint).")
    else:
        write("Every public check passes. Submit when ready: the hidden tests check more.")
