"""Feedback a student can read: the part table, then each failed test's message and hint.

Built only from the grade's own `results.json`, whose messages the judge already wrote for
students: a test the suite marks secret (the checkpoint's questions) shows "(hidden)" for its
inputs and expected value, so neither can reach a feedback file. The failures come root cause
first, in the groups the grader kept (graders/reporting/root_cause.py): "Start here: ...", then each
group with its first test's message in full and the others by name; a file that does not load
is one note, with the tests it stopped. A grade from before the groups were kept has its
failures grouped by message, in the order they ran.
The same content is written as Markdown and as HTML; `feedback.zip` holds one HTML file per
student, named by id (the LMS uploads, named as each LMS reads them, are in exports/). Once the
class is done, each page also says when the student handed in, the due, how late, the late
penalty and the total after it (`lateness`): the raw total above it never changes.

Every string taken from results.json (messages, notes, test and part names, the student id)
is escaped for the file it lands in by `graders.reporting.escape`: a message quotes the student's own
exception text and file names, which must not become HTML, Markdown headings or links.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graders.reporting import output_files, root_cause
from graders.reporting.escape import html, markdown, markdown_block, markdown_text, visible
from graders.reporting.results import GradedTest, read

from . import records
from .standing import Standing
from .tables import number

NOTES = ("refused:", "note:", "no minigrad/")  # lines of the grade's output a student needs


@dataclass
class Failure:
    title: str
    names: list[str]
    lost: float
    message: str  # the first test's, in full; for a file that does not load, its note
    stopped: bool = False  # a file that does not load: every name is a test it stopped


def failures(results: dict) -> list[Failure]:
    """The failed tests in the grader's root-cause groups, or, in a grade without them, grouped
    by message in the order they ran."""
    grade = read(results)
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


def _start(found: list[Failure]) -> str:
    count = len(found[0].names)
    return f"{count} test{'s' if count != 1 else ''} " + ("could not run" if found[0].stopped else "fail through it")


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
    grade = read(results)
    lines = [f"# minigrad: feedback for {markdown(student)}", "", f"**Total: {_total(results)}**"]
    if late := lateness(standing):
        lines += ["", *(f"- {markdown_text(line)}" for line in late)]
    if notes := _notes(results):
        lines += ["", *(f"- {markdown(note)}" for note in notes)]
    lines += ["", "| part | score |", "|---|---|"]
    lines += [
        f"| {markdown(part, table=True)} | {number(got)} / {number(most)} |"
        for part, (got, most) in grade.parts.items()
    ]
    if grade.has_bonus:
        lines.append(f"| bonus (optional extensions) | {number(grade.bonus)} |")
    found = failures(results)
    lines += ["", "## What to fix" if found else "Every hidden test passed."]
    if found:
        lines += ["", f"**Start here:** {markdown_text(found[0].title)} — {_start(found)}"]
    for rank, failure in enumerate(found, start=1):
        lines += ["", f"### {rank}. {markdown_text(failure.title)} (-{number(failure.lost)})"]
        if not failure.stopped:
            lines += ["", f"First: {markdown(failure.names[0])}"]
        lines += ["", markdown_block(failure.message)]
        if rest := _rest(failure, markdown):
            lines += ["", rest]
    return "\n".join(lines) + "\n"


def page(student: str, results: dict, standing: Standing | None = None) -> str:
    grade = read(results)
    e = html
    body = [f"<h1>minigrad: feedback for {e(student)}</h1>", f"<p><strong>Total: {_total(results)}</strong></p>"]
    if late := lateness(standing):
        body.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in late) + "</ul>")
    if notes := _notes(results):
        body.append("<ul>" + "".join(f"<li>{e(note)}</li>" for note in notes) + "</ul>")
    body.append("<table><tr><th>part</th><th>score</th></tr>")
    for part, (got, most) in grade.parts.items():
        body.append(f"<tr><td>{e(part)}</td><td>{number(got)} / {number(most)}</td></tr>")
    if grade.has_bonus:
        body.append(f"<tr><td>bonus (optional extensions)</td><td>{number(grade.bonus)}</td></tr>")
    body.append("</table>")
    found = failures(results)
    body.append("<h2>What to fix</h2>" if found else "<p>Every hidden test passed.</p>")
    if found:
        body.append(f"<p><strong>Start here:</strong> {e(found[0].title)} — {_start(found)}</p>")
    for rank, failure in enumerate(found, start=1):
        body.append(f"<h3>{rank}. {e(failure.title)} (-{number(failure.lost)})</h3>")
        if not failure.stopped:
            body.append(f"<p>First: {e(failure.names[0])}</p>")
        body.append(f"<pre>{e(failure.message)}</pre>")
        if rest := _rest(failure, e):
            body.append(f"<p>{rest}</p>")
    style = "body{font-family:sans-serif;max-width:60em}pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap}"
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>minigrad: {e(student)}</title>'
        f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


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


def _total(results: dict) -> str:
    """The base score the part table adds up to, the bonus apart ("106.5 / 122 + 4 bonus")."""
    return read(results).total


def _rest(failure: Failure, escape: Callable[[str], str]) -> str:
    """The other tests of a group, by name; every test a file that does not load stopped."""
    rest = failure.names if failure.stopped else failure.names[1:]
    if not rest:
        return ""
    said = "The tests it stopped" if failure.stopped else f"{len(rest)} more failing through it"
    return f"{said}: {', '.join(escape(name) for name in rest)}"


def _notes(results: dict) -> list[str]:
    return [line for line in results.get("output", "").splitlines() if line.startswith(NOTES)]
