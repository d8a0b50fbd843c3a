"""The similarity report: similarity.csv, similarity.html with a page per further pair, the
lines for summary.md and the terminal.

Everything a student wrote (code, ids, file names, corpus paths) is escaped by
`graders.reporting.escape` for the place it lands: HTML escaped (so a file holding `</script>` or
`<img onerror=...>` shows as text), CSV cells that cannot start a formula, Markdown code spans.
The pages also forbid scripts and every outside load (their Content-Security-Policy), so even a
mistake in escaping could run nothing.

similarity.html stays light for a large class: the first SHOWN pairs side by side (fewer when
their code passes SHOWN_CHARACTERS), every pair in its table, and each further pair (up to
PAGES) side by side on a page of its own under similarity-pairs/, opened from the table.
"""

from __future__ import annotations

import bisect
import csv
import io
import itertools
from collections.abc import Callable
from functools import partial
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import csv_cell, html, markdown

from .common import SetAside
from .fingerprints import Body, Place
from .matching import Match, linked

SHOWN = 10  # pairs shown side by side in similarity.html itself
SHOWN_CHARACTERS = 400_000  # ... while their marked-up code stays within this (at least one pair)
PAGES = 300  # further pairs given a page of their own; similarity.csv lists them all
PAIRS_FOLDER = "similarity-pairs"
CHAIN = 6  # pairs of a chain of linked students said in summary.md and on the terminal
CONTEXT = 3  # unmatched lines shown around each matched one
COLUMNS = [
    "student",
    "other",
    "similarity",
    "other_similarity",
    "matched_tokens",
    "file",
    "lines",
    "other_file",
    "other_lines",
]


def other(match: Match) -> str:
    """Who the second body is from: a student (or group), or `against CORPUS/WORK`."""
    return f"against {match.b}" if match.corpus else match.b


def longest_lines(text: str, spans: list[tuple[int, int]]) -> str:
    """The lines of the longest matched span, as `12-40`."""
    start, end = max(spans, key=lambda span: (span[1] - span[0], -span[0]))
    return f"{text.count(chr(10), 0, start) + 1}-{text.count(chr(10), 0, max(start, end - 1)) + 1}"


def where(m: Match, bodies: dict[str, Body], place: Place) -> tuple[str, str, str, str]:
    """A place as its two files and the lines of the longest span in each."""
    a, b = bodies[m.a], bodies[m.b]
    return (
        a.names[place.file_a],
        longest_lines(a.texts[place.file_a], place.spans_a),
        b.names[place.file_b],
        longest_lines(b.texts[place.file_b], place.spans_b),
    )


def rows(matches: list[Match], bodies: dict[str, Body]) -> list[list[str]]:
    """similarity.csv's rows (without the header), one a pair, highest first; the place is
    where the most tokens match."""
    found = []
    for m in matches:
        file_a, lines_a, file_b, lines_b = where(m, bodies, m.overlap.places[0])
        share_a, share_b = m.overlap.similarity
        found.append(
            [
                m.a,
                other(m),
                f"{share_a:.3f}",
                f"{share_b:.3f}",
                str(m.overlap.matched),
                file_a,
                lines_a,
                file_b,
                lines_b,
            ]
        )
    return found


def write_csv(out: Path, matches: list[Match], bodies: dict[str, Body]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([csv_cell(cell) for cell in row] for row in rows(matches, bodies))
    return output_files.write_new(out, "similarity.csv", buffer.getvalue().encode())


def highlighted(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` escaped for HTML with line numbers, the matched spans in <mark>; only the lines
    within CONTEXT of a match are shown, each run of others as one `...` line."""
    spans = _disjoint(spans)
    offsets, lines = [0], text.split("\n")
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    line_of = partial(bisect.bisect_right, offsets)  # minus one: the line holding an offset
    marked = {n for start, end in spans for n in range(line_of(start) - 1, line_of(end - 1))}
    shown = {n + d for n in marked for d in range(-CONTEXT, CONTEXT + 1)}
    pieces, skipped = [], 0
    for n, line in enumerate(lines):
        if n not in shown:
            skipped += 1
            continue
        if skipped:
            pieces.append(f'<span class="gap">      ... {skipped} lines</span>')
            skipped = 0
        pieces.append(f'<span class="n">{n + 1:>5}</span> {_marked(text, offsets[n], offsets[n] + len(line), spans)}')
    if skipped:
        pieces.append(f'<span class="gap">      ... {skipped} lines</span>')
    return "\n".join(pieces)


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, none overlapping (two may share a token at their edge)."""
    result: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        start = max(start, result[-1][1]) if result else start
        if end > start:
            result.append((start, end))
    return result


def _marked(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> str:
    """text[start:end] escaped, the parts inside `spans` (disjoint, sorted) in <mark>."""
    pieces, done = [], start
    for first, last in spans[max(0, bisect.bisect_right(spans, (start, start)) - 1) :]:
        if first >= end:
            break
        first, last = max(first, done), min(last, end)
        if last > first:
            pieces += [html(text[done:first]), "<mark>", html(text[first:last]), "</mark>"]
            done = last
    pieces.append(html(text[done:end]))
    return "".join(pieces)


STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1em}
pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:40em;font-size:12px}
mark{background:#ffd27a}.n,.gap{color:#888}"""


def _head(title: str) -> list[str]:
    return [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{html(title)}</title><style>{STYLE}</style></head><body>",
    ]


def side_by_side(n: int, m: Match, bodies: dict[str, Body]) -> list[str]:
    """Pair `n`: each place the two share, its two files side by side with the matched code marked."""
    a, b = bodies[m.a], bodies[m.b]
    share_a, share_b = m.overlap.similarity
    parts = [
        f'<section id="pair-{n}"><h2>{n}. {html(m.a)} and {html(other(m))}</h2>',
        f"<p>{share_a:.0%} of {html(m.a)}'s own code is found in the other's, {share_b:.0%} of the other's in "
        f"{html(m.a)}'s: {m.overlap.matched} matched tokens.</p>",
    ]
    for place in m.overlap.places:
        file_a, lines_a, file_b, lines_b = where(m, bodies, place)
        parts.append(
            f"<h3>{html(m.a)}: {html(file_a)} (lines {lines_a}) and {html(other(m))}: {html(file_b)} "
            f"(lines {lines_b}): {place.tokens} tokens</h3>"
        )
        parts.append(
            f'<div class="sides"><pre>{highlighted(a.texts[place.file_a], place.spans_a)}</pre>'
            f"<pre>{highlighted(b.texts[place.file_b], place.spans_b)}</pre></div>"
        )
    parts.append("</section>")
    return parts


def page(
    matches: list[Match],
    bodies: dict[str, Body],
    facts: list[str],
    aside: SetAside | None,
    students: int,
    full: list[list[str]],
) -> str:
    """similarity.html: the facts of the run, what was set aside, the linked pairs, every pair
    ranked, then the first pairs side by side (`full`: their sections)."""
    parts = [*_head("minigrad: similar code"), "<h1>minigrad: similar code</h1>", "<ul>"]
    parts += [*[f"<li>{html(fact)}</li>" for fact in facts], "</ul>"]
    if aside is not None:
        parts += ["<h2>Set aside as common</h2>", f"<p>{html(set_aside_fact(aside, students))}</p>"]
        if aside.largest is not None:
            parts.append(f"<pre>{highlighted(aside.largest.text, [aside.largest.span])}</pre>")
    chains = linked(matches)
    if chains:
        parts += ["<h2>Students linked through listed pairs</h2>", "<p>Each line is a pair listed below; two "]
        parts[-1] += "students of one chain who are not a listed pair share less than the threshold.</p>"
        parts += ["<ul>", *[f"<li>{html(chain_text(chain))}</li>" for chain in chains], "</ul>"]
    parts += [
        "<h2>Pairs</h2>",
        "<table><tr><th>#</th><th>student</th><th>other</th><th>shares</th><th>tokens</th><th>where most</th></tr>",
    ]
    for n, m in enumerate(matches, 1):
        if n <= len(full):
            name = f'<a href="#pair-{n}">{n}</a>'
        elif n <= len(full) + PAGES:
            name = f'<a href="{PAIRS_FOLDER}/{n}.html">{n}</a>'
        else:
            name = str(n)
        file_a, lines_a, file_b, lines_b = where(m, bodies, m.overlap.places[0])
        shares = f"{m.overlap.similarity[0]:.0%} / {m.overlap.similarity[1]:.0%}"
        parts.append(
            f"<tr><td>{name}</td><td>{html(m.a)}</td><td>{html(other(m))}</td><td>{shares}</td>"
            f"<td>{m.overlap.matched}</td><td>{html(f'{file_a} {lines_a} / {file_b} {lines_b}')}</td></tr>"
        )
    parts.append("</table>")
    if len(matches) > len(full):
        parts.append(
            f"<p>The first {len(full)} pairs are shown below; the next {min(PAGES, len(matches) - len(full))} each "
            f"on a page of its own (their number links it); similarity.csv lists all {len(matches)}.</p>"
        )
    for section in full:
        parts += section
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_html(
    out: Path, matches: list[Match], bodies: dict[str, Body], facts: list[str], aside: SetAside | None, students: int
) -> Path:
    """similarity.html, and a page for each further pair under similarity-pairs/ (its earlier
    pages removed first, so none is left from another run)."""
    folder = out / PAIRS_FOLDER
    output_files.prepare_folder(folder)
    for stale in folder.glob("*.html"):
        stale.unlink()
    full: list[list[str]] = []
    for n, m in enumerate(matches[:SHOWN], 1):
        section = side_by_side(n, m, bodies)
        if full and sum(map(len, itertools.chain(*full, section))) > SHOWN_CHARACTERS:
            break
        full.append(section)
    for n, m in enumerate(matches[len(full) : len(full) + PAGES], len(full) + 1):
        text = "\n".join([*_head(f"minigrad: pair {n}"), *side_by_side(n, m, bodies), "</body></html>\n"])
        output_files.write_new(folder, f"{n}.html", text.encode())
    return output_files.write_new(out, "similarity.html", page(matches, bodies, facts, aside, students, full).encode())


def chain_text(chain: list[Match], quote: Callable[[str], str] = str, most: int = 0) -> str:
    """Students linked through pairs, drawn as the pairs with their scores (ids through
    `quote`); the first `most` pairs when more (0: all), the rest counted."""
    shown = chain[:most] if most else chain
    text = "; ".join(
        f"{quote(m.a)} and {quote(m.b)} {m.overlap.similarity[0]:.0%} / {m.overlap.similarity[1]:.0%}" for m in shown
    )
    return text + (f"; and {len(chain) - len(shown)} more pairs (similarity.html)" if len(chain) > len(shown) else "")


def set_aside_fact(aside: SetAside, students: int, quote: Callable[[str], str] = str) -> str:
    """What was set aside as common, and the largest block of it (its student and file through `quote`)."""
    said = f"set aside as common: {aside.lines} of {aside.of_lines} lines of students' own code (the class's, summed)"
    said += f", in {aside.students} students' code"
    block = aside.largest
    if block is None:
        return said
    leak = ": a leaked solution?" if block.shared_by > students / 2 else ""
    return (
        f"{said}; the largest block, {block.tokens} tokens ({quote(block.student)}'s {quote(block.file)} lines "
        f"{block.lines}), "
        f"is shared by {block.shared_by} of {students} students{leak}"
    )


def summary_section(
    matches: list[Match], facts: list[str], left_out: list[str], aside: SetAside | None, students: int, top: int = 5
) -> str:
    """The 'Similar code' section of summary.md: the facts (the kit's words), what was set aside,
    who was left out (student text, quoted), the linked pairs, the highest pairs."""
    lines = ["", "## Similar code", "", *[f"- {fact}" for fact in facts]]
    if aside is not None:
        lines.append(f"- {set_aside_fact(aside, students, markdown)}")
    lines += [f"- {markdown(why)}" for why in left_out]
    lines += [f"- linked through pairs: {chain_text(chain, markdown, CHAIN)}" for chain in linked(matches)]
    for m in matches[:top]:
        lines.append(
            f"- {markdown(m.a)} and {markdown(other(m))}: {m.overlap.similarity[0]:.0%} / "
            f"{m.overlap.similarity[1]:.0%}, {m.overlap.matched} tokens"
        )
    return "\n".join(lines) + "\n"
