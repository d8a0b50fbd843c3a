"""The visible first test: was the package found, and does each of its modules import?

Hidden tests may stay hidden until the due date, so a student who uploaded the wrong folder,
or a file with a syntax error, would otherwise learn it only then. This test says at once
where the files were found, which are missing, which were refused and why (a link, a file
over the size cap: said as refused, never as missing), and for each module "imports" or the
error with its file and line. It is worth 0 points: it tells, the hidden tests grade. The imports
run in the grading's sandbox, like everything else the submission's code does.
"""

from __future__ import annotations

from pathlib import Path

from graders.course_facts.kit import REFERENCE
from graders.isolation import sandbox
from graders.reporting.escape import untrusted
from graders.reporting.results import Verdict
from graders.uploads.intake import Intake, for_student, listing, refused_files

from .child_loop import run_child

PART = "submission"
NAME = "submission: files found and each module imports"
EXPECTED = sorted(path.name for path in (REFERENCE / "minigrad").glob("*.py"))
NOT_FOUND = (
    "No minigrad code was found in your upload. Upload the files of your minigrad/ folder "
    f"({', '.join(EXPECTED)}), or the minigrad/ folder itself."
)


def where(copied: Intake) -> str:
    if copied.location:
        return f"in `{untrusted(copied.location)}/`"
    return "at the top of your upload (graded as if they were in minigrad/)"


def check(submission: Path, workdir: Path, copied: Intake, isolation: sandbox.Isolation) -> Verdict:
    """Run the import of each copied module in the child and say what happened, in words."""
    if not copied.found:
        held = [untrusted(name) for name in listing(submission)]
        upload = f"Your upload holds: {', '.join(held)}" if held else "Your upload is empty."
        said = [untrusted(for_student(problem)) for problem in copied.refused]
        return Verdict(NAME, PART, 0.0, False, "\n".join([NOT_FOUND, upload, *said]), "visible")
    lines = [f"found {len(copied.copied)} files {where(copied)}: {', '.join(map(untrusted, copied.copied))}"]
    refused = {Path(path).name for path in refused_files(copied.refused)}
    missing = [name for name in EXPECTED if name not in copied.copied and name not in refused]
    if missing:
        lines.append(f"missing: {', '.join(missing)} (the tests that use them will fail)")
    lines += [untrusted(for_student(problem)) for problem in copied.refused]  # a refused file is not missing
    modules = [name.removesuffix(".py") for name in copied.copied]
    outcomes = run_child(
        workdir,
        [[["imports", {"module": m}]] for m in modules],
        [f"import {m}" for m in modules],
        [PART] * len(modules),
        isolation,
    )
    failed = bool(refused)
    for name, outcome in zip(copied.copied, outcomes):
        status = outcome.out[0] if outcome.out and not outcome.error else (outcome.error or {}).get("message", "?")
        failed |= status != "imports"
        lines.append(f"  {untrusted(name)}: {untrusted(status)}")
    return Verdict(NAME, PART, 0.0, not failed and not missing, "\n".join(lines), "visible")
