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
from collections.abc import Callable
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import markdown
from graders.reporting.results import total_text

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
    lines += [f"- {line}" for line in run_facts(facts, markdown)]
    if facts["missing"]:
        lines.append(f"- on the roster, no submission: {_names(facts['missing'])}")
    if facts["not_on_roster"]:
        lines.append(f"- graded but not on the roster: {_names(facts['not_on_roster'])}")
    lines += [f"- warning: {markdown(warning)}" for warning in facts["warnings"] if warning not in unread]
    if totals:
        lines += ["", "## Totals", "", f"{TOTALS_SAID} {mean_total(loaded)}.", ""]
        lines += ["| | mean | median | min | max | out of |", "|---|---|---|---|---|---|"]
        lines += [f"| {' | '.join(row)} |" for row in total_rows(loaded)]
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
    lines += ["| student | submitted | due | hours late | penalty | total_after_late |", "|---|---|---|---|---|---|"]
    for st in late:
        cells = [st.student, st.key("submitted_at"), st.key("due"), st.key("hours_late"), st.key("penalty")]
        after = "" if st.after_late is None or not st.key("penalty") else number(st.after_late)
        lines.append("| " + " | ".join(markdown(cell, table=True) for cell in [*cells, after]) + " |")
    return lines


def run_facts(facts: dict, quote: Callable[[str], str]) -> list[str]:
    """The run's first facts, as summary.md and summary.html say them (`quote` escapes for each)."""
    return [
        f"layout: {quote(str(facts['layout']))}, seed: {quote(str(facts['seed']))}, "
        f"isolation: {quote(str(facts['isolation']))}",
        f"submissions: {facts['submissions']} (graded now: {facts['graded']}, unchanged and kept: "
        f"{facts['kept']}, grader errors: {facts['errors']})",
    ]


TOTALS_SAID = (
    "Over the graded students, named as grades.csv's columns: `total` is the base score, what the parts add up "
    "to, out of the base maximum; `bonus_points` (the optional extensions) are apart, `total_with_bonus` adds them, "
    "and `total_after_late` is the base after the late policy. Class mean:"
)


def total_rows(loaded: LoadedClass) -> list[list[str]]:
    """The totals table of summary.md and summary.html: per grades.csv column, the mean, median,
    minimum and maximum over the graded students, and what it is out of; the bonus rows where
    the grades have a bonus, the late row where the policy took points."""
    graded = [loaded.standings[student] for student in loaded.graded]
    if not graded:
        return []
    most, has_bonus = max(st.max_score for st in graded), any(r.grade.has_bonus for r in loaded.graded.values())
    bonus_top = bonus_most(loaded.graded)
    columns = [("total", [st.base or 0.0 for st in graded], number(most))]
    if has_bonus:
        columns.append(("bonus_points", [st.bonus for st in graded], number(bonus_top)))
        with_bonus = [(st.base or 0.0) + st.bonus for st in graded]
        columns.append(("total_with_bonus", with_bonus, f"{number(most)} + {number(bonus_top)} bonus"))
    if any(st.penalty for st in graded):
        columns.append(("total_after_late", [st.after_late or 0.0 for st in graded], number(most)))
    return [
        [name, f"{statistics.mean(values):.2f}", *(number(f(values)) for f in (statistics.median, min, max)), top]
        for name, values, top in columns
    ]


def mean_total(loaded: LoadedClass) -> str:
    """The class's mean as every total is said, the bonus apart: "97.2 / 122 + 4.53 bonus"."""
    graded = [loaded.standings[student] for student in loaded.graded]
    base, bonus = (
        round(statistics.mean(values), 2) for values in ([st.base or 0.0 for st in graded], [st.bonus for st in graded])
    )
    has_bonus = any(r.grade.has_bonus for r in loaded.graded.values())
    return total_text(base, max(st.max_score for st in graded), bonus, has_bonus)


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
    # A Figure of its own, not pyplot's: no backend to choose, no window machinery to import.
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    records = loaded.graded
    figure = Figure(figsize=(10, 4))
    left, right = figure.subplots(1, 2)
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
    output_files.write_new(out, "histogram.png", data.getvalue())
