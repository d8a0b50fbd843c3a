"""The instructor's overview: summary.md (totals, part means, the most common mistakes, who
is missing or unexpected) and histogram.png (score distribution and part means).

Every name, warning and hint is escaped for Markdown by `graders.reporting.escape`: warnings quote file
names from uploads, and the hints are read back from results.json, so none may start a
heading, a link or HTML in a file an LMS or a viewer renders.
"""

from __future__ import annotations

import io
import statistics
from collections import Counter
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import markdown

from .loaded_class import LoadedClass
from .records import StoredGrade
from .standing import Standing
from .tables import number

HARDEST = 10  # tests listed in the summary, lowest pass rate first
HINTS = 5  # most common hints listed
NOT_GRADED = "code found but not graded"  # the flag of an upload with code but no package (batch.not_found)
BINS = 20


def summary(out: Path, facts: dict, loaded: LoadedClass, items: list[dict]) -> str:
    """Write summary.md and return its text. `facts` holds the run's layout, seed, counts and
    the roster's differences. Students whose code was found but not graded come first: each
    holds a 0 that only the instructor's regrade can change. Every late student follows the
    totals: when, how late, the penalty and the total after it."""
    records = loaded.graded
    grades = [r.grade for r in records.values()]
    totals = [grade.base for grade in grades]
    unread = [warning for warning in facts["warnings"] if NOT_GRADED in warning]
    lines = ["# minigrad: class summary", ""]
    if unread:
        lines += ["## Code found but not graded", "", *(f"- {markdown(warning)}" for warning in unread), ""]
    lines += [
        f"- layout: {markdown(str(facts['layout']))}, seed: {markdown(str(facts['seed']))}, "
        f"isolation: {markdown(str(facts['isolation']))}",
        f"- submissions: {facts['submissions']} (graded now: {facts['graded']}, unchanged and kept: "
        f"{facts['kept']}, grader errors: {facts['errors']})",
    ]
    if facts["missing"]:
        lines.append(f"- on the roster, no submission: {_names(facts['missing'])}")
    if facts["not_on_roster"]:
        lines.append(f"- graded but not on the roster: {_names(facts['not_on_roster'])}")
    lines += [f"- warning: {markdown(warning)}" for warning in facts["warnings"] if warning not in unread]
    if totals:
        most = max(grade.max_score for grade in grades)
        bonus = [grade.bonus for grade in grades]
        lines += [
            "",
            "## Totals",
            "",
            "Without the bonus, out of the base maximum; the bonus (optional extensions) apart.",
            "",
            "| | mean | median | min | max | out of |",
            "|---|---|---|---|---|---|",
            f"| total | {statistics.mean(totals):.2f} | {number(statistics.median(totals))} | {number(min(totals))} "
            f"| {number(max(totals))} | {number(most)} |",
        ]
        if any(grade.has_bonus for grade in grades):
            lines.append(
                f"| bonus | {statistics.mean(bonus):.2f} | {number(statistics.median(bonus))} | {number(min(bonus))} "
                f"| {number(max(bonus))} | {number(bonus_most(records))} |"
            )
        lines += lateness(loaded.standings)
        lines += ["", "## Parts", "", "| part | mean | out of |", "|---|---|---|"]
        lines += [
            f"| {markdown(part, table=True)} | {mean:.2f} | {number(most)} |"
            for part, (mean, most) in part_means(records).items()
        ]
        hardest = sorted(items, key=lambda item: (item["pass_rate"], item["test"]))[:HARDEST]
        lines += ["", "## Hardest tests", "", "| test | pass rate | discrimination |", "|---|---|---|"]
        lines += [
            f"| {markdown(item['test'], table=True)} | {item['pass_rate']:.0%} | "
            f"{'' if item['discrimination'] is None else format(item['discrimination'], '.2f')} |"
            for item in hardest
        ]
        lines += ["", "## Most common mistakes (hints given)", ""]
        lines += [f"- {count} x {markdown(hint)}" for hint, count in common_hints(records)] or ["- none"]
    text = "\n".join(lines) + "\n"
    output_files.write_new(out, "summary.md", text.encode())
    return text


def lateness(where: dict[str, Standing]) -> list[str]:
    """The late students' table; the raw totals above never change, the penalty is beside them."""
    late = [standing for standing in where.values() if standing.late]
    if not late:
        return []
    lines = ["", "## Late", "", f"{len(late)} late; the policy takes points from the base total only.", ""]
    lines += ["| student | submitted | due | hours late | penalty | total after |", "|---|---|---|---|---|---|"]
    for st in late:
        cells = [st.student, st.key("submitted_at"), st.key("due"), st.key("hours_late"), st.key("penalty")]
        after = "" if st.after_late is None or not st.key("penalty") else number(st.after_late)
        lines.append("| " + " | ".join(markdown(cell, table=True) for cell in [*cells, after]) + " |")
    return lines


def _names(students: list[str]) -> str:
    return ", ".join(markdown(student) for student in students)


def part_means(records: dict[str, StoredGrade]) -> dict[str, tuple[float, float]]:
    """Each part's mean score over the class, and its maximum."""
    per_student = [r.grade.parts for r in records.values()]
    maxima = {part: most for scores in per_student for part, (_, most) in scores.items()}
    return {
        part: (statistics.mean(s.get(part, (0.0, 0.0))[0] for s in per_student), most) for part, most in maxima.items()
    }


def common_hints(records: dict[str, StoredGrade]) -> list[tuple[str, int]]:
    """The hints of failed tests, counted once per student: what the class most got wrong."""
    counts: Counter[str] = Counter()
    for r in records.values():
        failed = [test.output for test in r.grade.tests if not test.passed]
        hints = dict.fromkeys(
            line.strip()[len("hint:") :].strip()
            for output in failed
            for line in output.splitlines()
            if line.strip().startswith("hint:")
        )
        counts.update(list(hints))  # in the order the tests ran: ties are listed the same way every run
    return counts.most_common(HINTS)


def bonus_most(records: dict[str, StoredGrade]) -> float:
    """The most bonus points any student could earn: the bonus tests' points, read from who passed
    them (results.json gives a bonus test a max_score of 0)."""
    points: dict[str, float] = {}
    for r in records.values():
        for test in r.grade.tests:
            if test.bonus:
                points[test.name] = max(points.get(test.name, 0.0), test.score)
    return round(sum(points.values()), 6)


def bins(totals: list[float], top: float, count: int = BINS) -> tuple[list[float], list[int]]:
    """The histogram's bin edges from 0 to `top` (the highest possible score, bonus included, so
    that no student is left out) and how many totals fall in each; the last bin holds `top`."""
    top = max(top, *totals, 1.0) if totals else max(top, 1.0)
    width = top / count
    edges = [round(width * i, 6) for i in range(count + 1)]
    counts = [0] * count
    for total in totals:
        counts[min(int(total / width), count - 1) if total > 0 else 0] += 1
    return edges, counts


def histogram(out: Path, loaded: LoadedClass) -> None:
    """histogram.png: the distribution of totals with the bonus (every student, up to the
    highest possible score) beside each part's mean, as a share of its points."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    records = loaded.graded
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(10, 4))
    totals = [r.results["score"] for r in records.values()]
    most = max((r.results["max_score"] for r in records.values()), default=1.0)
    edges, counts = bins(totals, most + bonus_most(records))
    left.stairs(counts, edges, fill=True, color="#4477aa", edgecolor="white")
    left.axvline(most, color="#aa3377", linestyle="--", linewidth=1)
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    xlabel = f"score with bonus (dashed: the base maximum, {number(most)})"
    left.set(title=f"Totals ({len(totals)} students)", xlabel=xlabel, ylabel="students")
    means = part_means(records)
    right.bar(list(means), [mean / top if top else 0.0 for mean, top in means.values()], color="#66aa55")
    right.set(title="Part means", ylabel="share of the part's points", ylim=(0, 1))
    figure.tight_layout()
    data = io.BytesIO()
    figure.savefig(data, format="png", dpi=100, metadata={"Software": None})
    pyplot.close(figure)
    output_files.write_new(out, "histogram.png", data.getvalue())
