"""Feedback a student can read: the totals, the part table, then what to fix, root cause first.

Built only from the grade's own `results.json`, whose messages the judge already wrote for
students: a test the suite marks secret (the checkpoint's questions) shows "(hidden)" for its
inputs and expected value, so neither can reach a feedback file. The failures come root cause
first, in the groups the grader kept (graders/reporting/root_cause.py): "Start here: ...", then each
group with its first test's message in full and the others by name, one per line; a file that
does not load is one note, with the tests it stopped. A grade from before the groups were kept
has its failures grouped by message, in the order they ran. A file the grader refused (a link,
a file over its size cap) is said as refused, with the reason, never as missing.

`gather` reads all of it once (into feedback_content.py's `Feedback`); the same content is
then written as Markdown (feedback.md, which GitHub, GitLab and Canvas show as written: student
text only in code spans and fenced blocks, no backslash escapes, no invisible characters) and
as a page (feedback_page.py).
`feedback.zip` holds one page per student, named by id (the LMS uploads, named as each LMS
reads them, are in exports/). Once the class is done, each page also says when the student
handed in, the due, how late, the late penalty and the total after it (`lateness`): the raw
total above it never changes.

Every string taken from results.json (messages, notes, test and part names, the student id)
is escaped for the file it lands in by `graders.reporting.escape`: a message quotes the student's own
exception text and file names, which must not become HTML, Markdown headings or links.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from graders.reporting import output_files, root_cause
from graders.reporting.escape import markdown, markdown_block, markdown_code, markdown_text, visible
from graders.reporting.results import Grade, GradedTest, read
from graders.uploads import intake

from . import feedback_page, records
from .feedback_content import Failure, Feedback
from .standing import Standing
from .tables import number

NOTES = ("note:", "no minigrad/")  # lines of the grade's output a student needs (refusals: from extra_data)


def gather(student: str, results: dict, standing: Standing | None = None) -> Feedback:
    grade = read(results)
    extra = grade.extra
    refused = [str(p) for p in extra.get("refused", [])] if isinstance(extra.get("refused"), list) else []
    said = [line.removeprefix("note: ") for line in results.get("output", "").splitlines() if line.startswith(NOTES)]
    totals = [("Total (the parts added up)", f"{number(grade.base)} / {number(grade.max_score)}")]
    if grade.has_bonus:
        totals += [("Bonus (optional extensions)", f"+{number(grade.bonus)}")]
        totals += [("Total with the bonus", number(grade.base + grade.bonus))]
    return Feedback(
        student,
        grade.total,
        totals,
        lateness(standing),
        [intake.for_student(problem) for problem in refused] + said,
        [(part, got, most) for part, (got, most) in grade.parts.items()],
        grade.bonus if grade.has_bonus else None,
        failures(grade),
    )


def failures(grade: Grade) -> list[Failure]:
    """The failed tests in the grader's root-cause groups, or, in a grade without them, grouped
    by message in the order they ran."""
    failed = {test.name: test for test in grade.tests if not test.passed and not test.bonus}
    kept = [group for group in root_cause.read(grade.extra) if any(name in failed for name in group.tests)]
    if kept:
        return [_failure(group, failed) for group in kept]
    groups: dict[str, Failure] = {}
    for test in failed.values():
        group = groups.setdefault(test.output, Failure(test.name, [], 0.0, test.output))
        group.names.append(test.name)
        group.lost += test.max_score - test.score
    return list(groups.values())


def _failure(group: root_cause.Group, failed: dict[str, GradedTest]) -> Failure:
    names = [name for name in group.tests if name in failed]
    lost = sum(failed[name].max_score - failed[name].score for name in names)
    message = "\n".join(group.note) if group.note else failed[names[0]].output
    return Failure(group.title, names, lost, message, bool(group.note))


def lateness(standing: Standing | None) -> list[str]:
    """What the student must know of their hand-in time, as plain sentences (each page escapes
    them): the time and due the platform recorded, how late, the penalty and the total after
    it; nothing when the class had no times and no late marks."""
    if standing is None or not any(standing.key(k) for k in ("submitted_at", "due", "late")):
        return []
    said = [f"Submitted: {standing.key('submitted_at') or 'time not recorded'}"]
    said += [f"Due: {standing.key('due')}"] if standing.key("due") else []
    if not standing.late:
        on_time = "On time" if standing.key("submitted_at") else "Not marked late"
        return [*said, f"{on_time}: no late penalty."]
    hours = standing.key("hours_late")
    said.append(f"Late by {hours} hours." if hours else "Late (marked by the platform, with no hand-in time).")
    if not standing.key("penalty"):
        return [*said, "Late penalty: not applied (the policy counts time, and no hand-in time was recorded)."]
    if not standing.penalty:
        return [*said, "No late penalty."]
    after = f"{number(standing.after_late or 0.0)} / {number(standing.max_score)}"
    after += f" + {number(standing.bonus)} bonus" if standing.bonus else ""
    return [*said, f"Late penalty: -{number(standing.penalty)}", f"Total after the late penalty: {after}"]


def markdown_page(student: str, results: dict, standing: Standing | None = None) -> str:
    """feedback.md: the same content as the page, in Markdown that renders as written."""
    said = gather(student, results, standing)
    lines = [f"# minigrad: feedback for {markdown(student)}", "", f"**Total: {said.total}**", ""]
    lines += [f"- {name}: {value}" for name, value in said.totals]
    if said.hand_in:
        lines += ["", "## Hand-in", "", *(f"- {markdown_text(line)}" for line in said.hand_in)]
    lines += ["", "## Scores", "", "| part | score |", "|---|---|"]
    lines += [f"| {markdown(part, table=True)} | {number(got)} / {number(most)} |" for part, got, most in said.parts]
    if said.bonus is not None:
        lines.append(f"| bonus (optional extensions) | {number(said.bonus)} |")
    if said.notes:
        lines += ["", "## Notes", "", *(f"- {markdown_text(note)}" for note in said.notes)]
    lines += ["", "## What to fix" if said.failures else "Every hidden test passed."]
    if said.failures:
        lines += ["", f"**Start here:** {markdown_text(said.failures[0].title)} — {said.start}."]
    for rank, failure in enumerate(said.failures, start=1):
        lines += ["", f"### {rank}. {markdown_text(failure.title)}", "", f"{failure.count}."]
        if not failure.stopped:
            lines += ["", f"First failing test: {markdown_code(failure.names[0])}"]
        pieces = failure.pieces
        lines += ["", markdown_block("".join(shown for shown, _ in pieces))]
        if exact := [value for _, value in pieces if value]:
            lines += ["", "Exact values: " + ", ".join(markdown_code(value) for value in exact)]
        words, rest = failure.rest
        if rest:
            lines += ["", words, "", *(f"- {markdown_code(name)}" for name in rest)]
    return "\n".join(lines) + "\n"


def page(student: str, results: dict, standing: Standing | None = None) -> str:
    """feedback.html (feedback_page.py)."""
    return feedback_page.render(gather(student, results, standing))


def write(folder: Path, student: str, results: dict, standing: Standing | None = None) -> str | None:
    """feedback.md and feedback.html in the student's folder (with `standing`, their lateness
    too); what kept them from being written, if anything, is returned to be said beside the
    grade, never raised instead of it."""
    try:
        records.write(folder, "feedback.md", markdown_page(student, results, standing).encode())
        records.write(folder, "feedback.html", page(student, results, standing).encode())
    except Exception as error:  # noqa: BLE001 - results of an unexpected shape, a full disk: the grade stands
        return f"feedback not written: {type(error).__name__}: {error}"
    return None


def write_zip(out: Path, graded: dict[str, dict], standings: dict[str, Standing] | None = None) -> None:
    """feedback.zip: `{student}.html` per graded student, with fixed dates so that the same
    grades give the same bytes."""
    pages = {f"{visible(s)}.html": page(s, graded[s], (standings or {}).get(s)) for s in sorted(graded)}
    output_files.write_new(out, "feedback.zip", bundle(pages))


def bundle(files: dict[str, str]) -> bytes:
    """A zip of text files, in the order given, with fixed dates so that the same grades give
    the same bytes; names are the caller's, already safe for the importer that reads them."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), text)
    return data.getvalue()
