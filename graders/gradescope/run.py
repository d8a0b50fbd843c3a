"""What Gradescope's `run_autograder` does with one upload: grade it officially, say it plainly.

The grading is `minigrad-grade --official --check-imports` in a subprocess, so that nothing it
does (a crash included) can stop this script from writing a results.json. Its result is then
given Gradescope's finishing touches: a Markdown summary for the student, the hidden tests'
visibility, and, after the upload's test, a visible 0-point test that compares the student's
`Value` and `Tensor` with the course's API (the grader's API probes): a wrong name explains
many failures at once, so the student sees it at once, whenever the hidden tests appear.
When no sandbox level fit for official grading works on Gradescope's machine, the grader
refuses to grade (it fails closed), and results.json says so, with no score at all: a zero
would read as the student's, and the instructor can regrade once it is fixed.
"""

from __future__ import annotations

import json
import subprocess
import sys

from graders.course_facts import kit
from graders.grading import upload_check
from graders.reporting import output_files, root_cause
from graders.reporting.escape import json_text, markdown, markdown_block, markdown_text, say
from graders.reporting.results import bonus_points, part_scores, read, total_text

SOURCE = kit.ROOT  # the unpacked zip: /autograder/source on Gradescope
AUTOGRADER = SOURCE.parent
SETTINGS = "settings.json"  # written into the zip by package.py
SECRET = "course_secret"  # likewise; never in the repository
WHEN = {
    "after_due_date": "appear after the due date",
    "after_published": "appear when your instructor publishes the grades",
    "hidden": "are for your instructor only",
    "visible": "are below",
}


def main() -> int:
    visibility = json.loads((SOURCE / SETTINGS).read_text())["visibility"]
    results_folder = AUTOGRADER / "results"
    command = [
        sys.executable,
        "-m",
        "graders",
        str(AUTOGRADER / "submission"),
        "--out",
        str(results_folder),
        "--official",
        "--secret-file",
        str(SOURCE / SECRET),
        "--check-imports",
        "--visibility",
        visibility,
    ]
    graded = subprocess.run(command, cwd=SOURCE, capture_output=True, text=True, errors="backslashreplace")
    for said, stream in ((graded.stdout, sys.stdout), (graded.stderr, sys.stderr)):
        if said:  # Gradescope keeps what this script prints for the instructor
            say(said.rstrip("\n"), stream)
    if graded.returncode == 0:
        results = with_api_test(json.loads((results_folder / "results.json").read_text()))
        results.update(output=summary(results, visibility), output_format="md", visibility=visibility)
    else:
        results = no_grade(graded.stderr)
    output_files.prepare_folder(results_folder)
    output_files.write_new(results_folder, "results.json", (json_text(results) + "\n").encode())
    return 0


API_NAME = "course API: your Value and Tensor beside the course's"
API_MATCHES = "Your Value and Tensor have every name the course's API uses, and each behaves as the course sets it."


def with_api_test(results: dict) -> dict:
    """The results with the API probes' test after the upload's (when the hidden tests ran):
    worth 0 points, visible, failed when a name or a behaviour differs from the course's."""
    said = results.get("extra_data", {}).get("course_api")
    if said is None or len(results["tests"]) < 2:
        return results
    test = {
        "name": API_NAME,
        "score": 0.0,
        "max_score": 0.0,
        "status": "failed" if said else "passed",
        "output": "\n".join(said) or API_MATCHES,
        "visibility": "visible",
        "tags": [upload_check.PART],  # about the upload, like the first test: 0 points, no part of its own
    }
    tests = [results["tests"][0], test, *results["tests"][1:]]
    return {**results, "tests": [{**t, "number": str(i)} for i, t in enumerate(tests, start=1)]}


def summary(results: dict, visibility: str) -> str:
    """The student's overview in Markdown: the upload, the sandbox, and the hidden tests'
    scores only where the instructor made them visible."""
    grade = read(results)
    upload, hidden = grade.tests[0], [test for test in grade.tests[1:] if test.part != upload_check.PART]
    extra = grade.extra
    lines = ["### minigrad autograder", ""]
    if upload.passed:
        lines.append("**Your upload:** found, and every module imports.")
    else:
        lines.append("**Your upload needs attention:** see the first test below.")
    lines += ["", f"Graded in the `{extra['isolation']}` sandbox."]  # one of the kit's level names
    if extra.get("passed_over"):
        lines[-1] += f" (A stronger one was passed over: {markdown(extra['passed_over'])}.)"
    lines.append("")
    if not hidden:
        lines.append("No hidden test ran, since there was nothing to grade: fix your upload and submit again.")
        return "\n".join(lines)
    parts = part_scores(hidden)  # an optional extension adds points, not to the maximum
    total = round(sum(most for _, most in parts.values()), 6)
    lines.append(f"The hidden tests ({total:g} points in all) have run; their results {WHEN[visibility]}.")
    if visibility == "visible":
        lines += ["", "| part | score |", "|---|---|"]
        for part, (got, most) in parts.items():
            lines.append(f"| {markdown(part, table=True)} | {got:g} / {most:g} |")
        has_bonus, base = any(test.bonus for test in hidden), sum(score for score, _ in parts.values())
        lines.append(f"| **total** | **{total_text(base, total, bonus_points(hidden), has_bonus)}** |")
        if has_bonus:
            lines.append(f"| bonus (optional extensions) | {bonus_points(hidden):g} |")
        if groups := root_cause.read(extra):  # root cause first: the hidden tests' words, now visible
            lines += ["", "#### What to fix", "", markdown_block("\n".join(root_cause.lines(groups, hidden)))]
    return "\n".join(lines)


def no_grade(reason: str) -> dict:
    """A results.json without a score, that says why to whoever reads it."""
    said = reason.strip().splitlines()[-1] if reason.strip() else "the grader stopped without saying why"
    output = (
        "### minigrad autograder\n\n**Not graded:** your upload was received, but it could not be graded "
        "safely on this machine, so no score was given. Your instructor can see why and will regrade it; "
        f"there is nothing for you to change.\n\nFor the instructor: {markdown_text(said)}"
    )
    return {
        "output": output,
        "output_format": "md",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"graded": False, "reason": reason[-4000:]},
    }


if __name__ == "__main__":
    sys.exit(main())
