"""summary.html: the class page an instructor opens once a run is over.

First the students who need a look (not graded, an upload or a file of it refused, a grader
error or note, code found but not graded, late, similar code when a similarity report lies
beside it), each linked to their feedback page with the command that grades them again; then
the totals, the distribution, the part means, the item analysis (hardest test first), the most
common mistakes, every student's row of grades.csv and the run's warnings.

One file that reads fully with no script: its stylesheet is inline, every table is already in
its reading order, and a small inline script only turns the column headers of the long tables
into sort buttons. Long sections are `<details>` that printing opens. It reads on a phone (no
fixed width; long names, commands and tables wrap or scroll in their own box) and without
colour (a bar's count is written on it, a status is words). Every student string (ids, reasons,
warnings, test names, hints, similarity rows) is escaped by `graders.reporting.escape`. The
numbers are grades.csv's and item_analysis.csv's cells (tables.grade_rows, tables.number) and
summary.md's totals (report.total_rows), so the page and the files cannot disagree.
"""

from __future__ import annotations

import csv
from pathlib import Path
from urllib.parse import quote

from graders.reporting import output_files
from graders.reporting.escape import html, html_text

from . import report, tables
from .loaded_class import LoadedClass
from .standing import GRADED, Standing

NAME = "summary.html"
SIMILARITY = "similarity.csv"  # minigrad-similar's pairs, when a report was written beside the grades
NOTES = ("refused:", "note:")  # the grader's lines under a score: files refused, parts it could not grade
SIMILAR_ROWS = 2_000  # pairs read from it: the page lists the pairs, similarity.html has the rest
STUDENT_COLUMNS = ["student", "status", "total", "max_score", "bonus_points", "total_with_bonus", "total_after_late"]

# Text and background colours meet WCAG AA (4.5:1 or more) in the light and the dark scheme.
STYLE = """
:root{color-scheme:light dark;--ink:#1a1a1a;--paper:#fff;--soft:#555;--rule:#c9c9c9;--band:#f3f3f3;--bar:#2c5d8f}
@media (prefers-color-scheme:dark){:root{--ink:#eee;--paper:#141414;--soft:#bbb;--rule:#505050;--band:#242424;
--bar:#8fb8e3}}
*{box-sizing:border-box}
body{margin:0 auto;padding:1rem;max-width:62rem;font:1rem/1.5 system-ui,sans-serif;color:var(--ink);
background:var(--paper);overflow-wrap:anywhere}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:1.6em;border-bottom:1px solid var(--rule)}
a{color:inherit}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em;background:var(--band);
padding:0 .2em;border-radius:3px}
.scroll{overflow-x:auto}table{border-collapse:collapse;min-width:100%;overflow-wrap:break-word}
th,td{text-align:left;vertical-align:top;padding:.3em .5em;border-bottom:1px solid var(--rule)}
tbody th{white-space:nowrap}#items-table tbody th{white-space:normal;min-width:14em}
thead th{background:var(--band);white-space:nowrap}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th button{font:inherit;font-weight:bold;color:inherit;background:none;border:0;padding:0;cursor:pointer;
text-decoration:underline dotted}
th[aria-sort=ascending] button::after{content:" \\2191"}th[aria-sort=descending] button::after{content:" \\2193"}
details{margin:.8em 0}summary{cursor:pointer;font-weight:bold}
ul.look{list-style:none;padding:0}ul.look>li{border-bottom:1px solid var(--rule);padding:.4em 0}
ul.look ul{margin:.2em 0;padding-left:1.2em}.soft{color:var(--soft)}
svg.chart{width:100%;max-width:40rem;height:auto}svg .bar{fill:var(--bar)}
svg text{fill:var(--ink);font:14px system-ui,sans-serif}svg line{stroke:var(--soft)}
@media print{body{max-width:none}details::details-content{content-visibility:visible;display:block}
th button{text-decoration:none}.scroll{overflow:visible}}
"""

# Sort buttons on the headers of every `table.sortable`: a click sorts by that column (by the
# cell's data-value where it has one, else its text) and again the other way; aria-sort says which.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  function key(cell) {
    var value = cell.getAttribute("data-value");
    return value === null ? cell.textContent.trim() : (value === "" ? -Infinity : Number(value));
  }
  heads.forEach(function (head, column) {
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = head.textContent;
    head.textContent = "";
    head.appendChild(button);
    button.addEventListener("click", function () {
      var up = head.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", up ? "ascending" : "descending");
      var body = table.tBodies[0];
      Array.prototype.slice.call(body.rows).sort(function (a, b) {
        var x = key(a.cells[column]), y = key(b.cells[column]);
        var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return up ? order : -order;
      }).forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def write(out: Path, parts: list[str], facts: dict, loaded: LoadedClass, items: list[dict], commands: dict) -> Path:
    """summary.html under `out`. `facts` are summary.md's (layout, seed, counts, roster,
    warnings); `items` item_analysis.csv's rows; `commands` the command that grades a student
    again, for those without a grade or with a flag."""
    body = [
        "<h1>minigrad: class summary</h1>",
        _facts(facts),
        _look(out, loaded, commands),
    ]
    if loaded.graded:
        body += [_totals(loaded), _distribution(loaded), _parts(loaded), _items(items), _mistakes(loaded)]
    body += [_students(parts, loaded), _warnings(facts), _files(out)]
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>minigrad: class summary</title><style>{STYLE}</style></head>\n"
        "<body><main>\n" + "\n".join(body) + f"\n</main><script>{SCRIPT}</script></body></html>\n"
    )
    return output_files.write_new(out, NAME, page.encode())


def _facts(facts: dict) -> str:
    said = report.run_facts(facts, html)
    if facts["missing"]:
        said.append(f"on the roster, no submission: {len(facts['missing'])}")
    if facts["not_on_roster"]:
        said.append(f"graded but not on the roster: {html(', '.join(facts['not_on_roster']))}")
    if facts["warnings"]:
        said.append(f'<a href="#warnings">{len(facts["warnings"])} warnings</a> (below)')
    return '<ul id="facts">' + "".join(f"<li>{line}</li>" for line in said) + "</ul>"


def _warnings(facts: dict) -> str:
    """The run's warnings (uploads combined, copies of the package, guessed times), folded."""
    if not facts["warnings"]:
        return ""
    listed = "".join(f"<li>{html(warning)}</li>" for warning in facts["warnings"])
    return (
        f'<h2 id="warnings">Warnings</h2>\n<details><summary>{len(facts["warnings"])} warnings from this run'
        f"</summary><ul>{listed}</ul></details>"
    )


def _look(out: Path, loaded: LoadedClass, commands: dict) -> str:
    """Who needs the instructor, one row each with every reason, their feedback and the command."""
    reasons: dict[str, list[str]] = {}
    for student, standing in loaded.standings.items():
        why = loaded.roll.errors.get(student, "")
        if standing.status != GRADED:
            reasons.setdefault(student, []).append(html(standing.status + (f": {why}" if why else "")))
        if standing.late:
            reasons.setdefault(student, []).append(_late(standing))
        record = loaded.graded.get(student)
        output = record.results.get("output", "") if record else ""
        notes = [line for line in output.splitlines() if line.startswith(NOTES)] if isinstance(output, str) else []
        if notes:
            reasons.setdefault(student, []).extend(html_text(line) for line in notes)
    for student, other, share, other_share, tokens in _similar(out):
        for one, two, mine, theirs in ((student, other, share, other_share), (other, student, other_share, share)):
            reasons.setdefault(one, []).append(
                f"similar code to {html(two)}: {_share(mine)} of this student's code and {_share(theirs)} of "
                f'theirs, {html(tokens)} tokens matched (<a href="similarity.html">similarity.html</a>)'
            )
    head = [
        '<h2 id="look">Students who need a look</h2>',
        "<p>Each name links to the student's feedback. A student without a grade is graded again, with every "
        "other grade kept, by the same <code>minigrad-class</code> command with <code>--resume</code>; "
        "<em>grade again</em> gives the command that grades that one upload into their folder, for a look first.</p>",
    ]
    if not reasons:
        return "\n".join([*head, "<p>No student needs a look.</p>"])
    entries = []
    for student in sorted(reasons):
        name = html(student)
        if student in loaded.graded:
            name = f'<a href="{html(quote(student))}/feedback.html">{name}</a>'
        listed = "".join(f"<li>{reason}</li>" for reason in reasons[student])
        if student in commands:
            listed += f"<li>grade again: <code>{html(commands[student])}</code></li>"
        entries.append(f'<li data-student="{html(student)}"><strong>{name}</strong><ul>{listed}</ul></li>')
    return "\n".join([*head, f'<ul id="look-list" class="look">{"".join(entries)}</ul>'])


def _late(standing: Standing) -> str:
    """A late student's hand-in, as grades.csv's columns say it."""
    said = [f"submitted {standing.key('submitted_at') or 'at a time not recorded'}"]
    said += [f"due {standing.key('due')}"] if standing.key("due") else []
    said += [f"{standing.key('hours_late')} hours late"] if standing.key("hours_late") else []
    if standing.key("penalty"):
        said.append(f"penalty {standing.key('penalty')}, total_after_late {standing.key('total_after_late')}")
    else:
        said.append("no penalty priced")
    return "late: " + html(", ".join(said))


def _similar(out: Path) -> list[list[str]]:
    """The pairs of similarity.csv beside the grades (student, other, both shares, tokens), or none."""
    path = out / SIMILARITY
    if path.is_symlink() or not path.is_file():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as file:
            rows = [row for _, row in zip(range(SIMILAR_ROWS + 1), csv.reader(file))]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []
    return [row[:5] for row in rows[1:] if len(row) >= 5]


def _share(text: str) -> str:
    """similarity.csv's share (0.982) as a percentage; anything else as it is, escaped."""
    try:
        share = float(text)
    except ValueError:
        return html(text)
    return f"{share:.0%}" if 0 <= share <= 1 else html(text)


def _totals(loaded: LoadedClass) -> str:
    rows = [
        f'<tr><th scope="row"><code>{name}</code></th>' + "".join(f'<td class="n">{v}</td>' for v in values) + "</tr>"
        for name, *values in report.total_rows(loaded)
    ]
    return "\n".join(
        [
            '<h2 id="totals">Totals</h2>',
            f"<p>Class mean: <strong>{html(report.mean_total(loaded))}</strong>. Named as grades.csv's columns: "
            "<code>total</code> is the base score (the parts added up, out of the base maximum); "
            "<code>bonus_points</code> (the optional extensions) are apart, <code>total_with_bonus</code> adds them, "
            "and <code>total_after_late</code> is the base after the late policy.</p>",
            _table(
                "totals-table",
                ["grades.csv column", "mean", "median", "min", "max", "out of"],
                rows,
                numbers=range(1, 6),
            ),
        ]
    )


def _distribution(loaded: LoadedClass) -> str:
    """The base totals in 20 bins from 0 to the base maximum, drawn and listed."""
    totals = [standing.base or 0.0 for student, standing in loaded.standings.items() if student in loaded.graded]
    most = max(loaded.standings[student].max_score for student in loaded.graded)
    edges, counts = report.bins(totals, most)
    rows = [
        f'<tr><td class="n">{tables.number(low)} to {tables.number(high)}</td><td class="n">{count}</td></tr>'
        for low, high, count in zip(edges, edges[1:], counts)
    ]
    return "\n".join(
        [
            '<h2 id="distribution">Distribution</h2>',
            _chart(edges, counts, len(totals)),
            "<details><summary>The numbers behind the chart</summary>",
            _table("bins-table", ["total", "students"], rows, numbers=range(2)),
            "</details>",
        ]
    )


def _chart(edges: list[float], counts: list[int], students: int) -> str:
    """An inline SVG bar chart: each bar's count written above it, the axis at 0, half and the top."""
    width, height, left, bottom, top = 480, 240, 34, 44, 24
    tallest, slot = max(counts) or 1, (width - left - 10) / len(counts)
    bars = []
    for low, high, count, x in zip(edges, edges[1:], counts, (left + slot * i for i in range(len(counts)))):
        tall = (height - bottom - top) * count / tallest
        label = f"{tables.number(low)} to {tables.number(high)}: {count} students"
        bars.append(
            f'<g><title>{label}</title><rect class="bar" x="{x + 1:.1f}" y="{height - bottom - tall:.1f}" '
            f'width="{slot - 2:.1f}" height="{tall:.1f}"/>'
            + (
                f'<text x="{x + slot / 2:.1f}" y="{height - bottom - tall - 4:.1f}" text-anchor="middle">{count}</text>'
                if count
                else ""
            )
            + "</g>"
        )
    ticks = [(edges[0], left, "start"), (edges[len(edges) // 2], left + slot * (len(counts) // 2), "middle")]
    ticks.append((edges[-1], width - 10, "end"))
    axis = "".join(
        f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="{anchor}">{tables.number(value)}</text>'
        for value, x, anchor in ticks
    )
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-labelledby="chart-title chart-desc">'
        f'<title id="chart-title">Totals of {students} graded students</title>'
        f'<desc id="chart-desc">The base total (without the bonus) from 0 to {tables.number(edges[-1])}, in '
        f"{len(counts)} bins; the number above each bar is its students, listed below the chart too.</desc>"
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}"/>'
        + "".join(bars)
        + axis
        + f'<text x="{(width + left) / 2:.1f}" y="{height - 6}" text-anchor="middle">total (the base score)</text>'
        + f'<text x="14" y="{(height - bottom) / 2:.1f}" transform="rotate(-90 14 {(height - bottom) / 2:.1f})" '
        'text-anchor="middle">students</text></svg>'
    )


def _parts(loaded: LoadedClass) -> str:
    rows = [
        f'<tr><th scope="row">{html(part)}</th><td class="n">{mean:.2f}</td><td class="n">{tables.number(most)}</td>'
        f'<td class="n">{(mean / most if most else 0.0):.0%}</td></tr>'
        for part, (mean, most) in report.part_means(loaded.graded).items()
    ]
    return '<h2 id="parts">Part means</h2>\n' + _table(
        "parts-table", ["part", "mean", "out of", "share"], rows, numbers=range(1, 4)
    )


def _items(items: list[dict]) -> str:
    """item_analysis.csv's rows, the hardest (lowest pass rate) first; each cell's data-value is the CSV's."""
    rows = []
    for item in sorted(items, key=lambda item: (item["pass_rate"], item["test"])):
        rate, r = f"{item['pass_rate']:.3f}", item["discrimination"]
        shown = "" if r is None else f"{r:.3f}"
        rows.append(
            f'<tr><th scope="row">{html(item["test"])}</th><td>{html(item["part"])}</td>'
            f'<td class="n" data-value="{tables.number(item["points"])}">{tables.number(item["points"])}</td>'
            f"<td>{'bonus' if item['bonus'] else ''}</td>"
            f'<td class="n" data-value="{rate}">{item["pass_rate"]:.1%}</td>'
            f'<td class="n" data-value="{shown}">{shown or "-"}</td>'
            f'<td class="n" data-value="{len(item["passed"])}">{len(item["passed"])}</td></tr>'
        )
    return "\n".join(
        [
            '<h2 id="items">Item analysis</h2>',
            "<p>Each hidden test's pass rate and discrimination (how much passing it goes with the rest of the "
            "score: near 0 or below, strong students fail it as often as weak ones) over the submissions whose code "
            "was there to test, hardest first. A column's header sorts by it.</p>",
            f"<details open><summary>{len(rows)} tests</summary>",
            _table(
                "items-table",
                ["test", "part", "points", "bonus", "pass rate", "discrimination", "students"],
                rows,
                numbers=range(2, 7),
                sortable=True,
                sorted_by=(4, "ascending"),
            ),
            "</details>",
        ]
    )


def _mistakes(loaded: LoadedClass) -> str:
    hints = report.common_hints(loaded.graded)
    listed = "".join(f"<li>{count} students: {html_text(hint)}</li>" for hint, count in hints) or "<li>none</li>"
    return f'<h2 id="mistakes">Most common mistakes (hints given)</h2>\n<ul>{listed}</ul>'


def _students(parts: list[str], loaded: LoadedClass) -> str:
    """Every student's row of grades.csv (its status, totals and parts), each linked to their feedback."""
    header, rows = tables.grade_rows(parts, loaded)
    shown = [column for column in [*STUDENT_COLUMNS[:4], *parts, *STUDENT_COLUMNS[4:]] if column in header]
    lines = []
    for row in rows:
        cells = dict(zip(header, row))
        name = html(str(cells["student"]))
        if cells["student"] in loaded.graded:
            name = f'<a href="{html(quote(str(cells["student"])))}/feedback.html">{name}</a>'
        values = [f'<td class="n" data-value="{html(str(cells[c]))}">{html(str(cells[c]))}</td>' for c in shown[2:]]
        lines.append(f'<tr><th scope="row">{name}</th><td>{html(str(cells["status"]))}</td>{"".join(values)}</tr>')
    return "\n".join(
        [
            '<h2 id="students">All students</h2>',
            f"<details><summary>{len(rows)} students, as grades.csv lists them</summary>",
            _table("students-table", shown, lines, numbers=range(2, len(shown)), sortable=True),
            "</details>",
        ]
    )


def _files(out: Path) -> str:
    names = ["grades.csv", "errors.csv", "item_analysis.csv", "summary.md", "histogram.png", "feedback.zip"]
    names += [name for name in ("changes.csv", "similarity.html") if (out / name).is_file()]
    links = "".join(f'<li><a href="{name}">{name}</a></li>' for name in names)
    return f'<h2 id="files">Files</h2>\n<ul>{links}</ul>'


def _table(
    name: str,
    headers: list[str],
    rows: list[str],
    numbers: range = range(0),
    sortable: bool = False,
    sorted_by: tuple[int, str] | None = None,
) -> str:
    """A table with its header row; `numbers` are the columns aligned as numbers; a `sortable`
    one gets sort buttons from the page's script (`sorted_by`: the order it is written in)."""
    heads = []
    for column, header in enumerate(headers):
        attributes = ' class="n"' if column in numbers else ""
        if sorted_by and sorted_by[0] == column:
            attributes += f' aria-sort="{sorted_by[1]}"'
        heads.append(f'<th scope="col"{attributes}>{html(header)}</th>')
    kind = ' class="sortable"' if sortable else ""
    return (
        f'<div class="scroll"><table id="{name}"{kind}><thead><tr>{"".join(heads)}</tr></thead>'
        f"<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>"
    )
