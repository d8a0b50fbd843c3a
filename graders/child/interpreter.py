"""Run a grading program on the student's minigrad, step by step, and explain what went wrong.

The vocabulary of steps and read kinds is in steps.py (how a step is written) and the
`steps_*.py` modules beside it (the steps themselves). Every one of those modules is imported
here, before any program runs and so before any of the submission's code does. The parent runs
the same program on the reference and compares the outputs.
"""

import importlib
import linecache
import os
import traceback

import order
from code_names import qualified
from steps import Run, grader_lookup

HERE = os.path.dirname(os.path.abspath(__file__))


def load_steps() -> None:
    """Import every `steps_*.py` beside this file: each registers its steps as it is imported."""
    for name in sorted(os.listdir(HERE)):
        if name.startswith("steps_") and name.endswith(".py"):
            importlib.import_module(name.removesuffix(".py"))


def where(exc: BaseException, folder: str) -> str | None:
    """`Class.method (file, line n)` of the innermost submission frame, so a message can name
    the hole; code run at import is named by its file alone."""
    found = located(exc, folder)
    if "function" not in found:
        return None
    file, line = found["file"], found["line"]
    return f"{file} (line {line})" if found["function"] == "<module>" else f"{found['function']} ({file}, line {line})"


def located(exc: BaseException, folder: str) -> dict:
    """Where the trouble starts in the submission, as separate fields for the parent to check:
    the innermost submission frame's `function` (its qualified name), `file`, `line` and the
    `code` on that line; for a file that does not parse, its file, line and code alone. Empty
    when no line of the submission ran."""
    if isinstance(exc, SyntaxError) and (exc.filename or "").startswith(folder):
        return {"file": os.path.basename(exc.filename), "line": exc.lineno, "code": (exc.text or "").strip()}
    innermost = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename.startswith(folder):
            innermost = frame.f_code, line
    if innermost is None:
        return {}
    code, line = innermost
    file = code.co_filename
    return {
        "function": qualified(code),
        "file": os.path.basename(file),
        "line": line,
        "code": linecache.getline(file, line).strip(),
    }


def explain(exc: BaseException, folder: str) -> dict:
    """The error as plain data for the parent, which words it for the student."""
    looked_up = grader_lookup(exc)
    if looked_up:
        return {"type": "GraderNeeds", "message": looked_up[0], "where": looked_up[1]}
    error = {"type": type(exc).__name__, "message": str(exc)[:300], "where": where(exc, folder)}
    return {**error, **located(exc, folder)}


def run_program(program: list, folder: str) -> tuple[list, dict | None]:
    """The program's reads, and the error that stopped it (None when it ran to the end)."""
    order.restart()
    run = Run(folder)
    try:
        for program_step in program:
            run.perform(program_step)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the submission may call sys.exit
        return run.out, explain(exc, folder)
    return run.out, None


load_steps()
