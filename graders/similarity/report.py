"""The similarity report: similarity.csv, similarity.html, the lines for summary.md and the terminal.

Everything a student wrote (code, ids, file names, corpus paths) is escaped by
`graders.escape` for the place it lands: HTML escaped (so a file holding `</script>` or
`<img onerror=...>` shows as text), CSV cells that cannot start a formula, Markdown code spans.
The page also forbids scripts and every outside load (its Content-Security-Policy), so even a
mistake in escaping could run nothing.
"""

from __future__ import annotations

import bisect
import csv
import io
from functools import partial
from pathlib import Path

from graders import output_files
from graders.escape import csv_cell, html, markdown

from .matching import Match

SHOWN = 50  # pairs of students shown side by side in similarity.html; the CSV has them all
CONTEXT = 3  # unmatched lines shown around each matched one
SHOWN_CODE = 16_000_000  # characters of code the page shows at most (a few hundred uploads' worth)
COLUMNS = [
    "student",
    "other",
    "file",
    "other_file",
    "similarity",
    "other_similarity",
    "matched_tokens",
    "lines",
    "other_lines",
]


def other(match: Match) -> str:
    """Who the second file is from: a student id, or `against NAME` for a corpus."""
    return f"against {match.b}" if match.corpus else match.b


def longest_lines(text: str, spans: list[tuple[int, int]]) -> str:
    """The lines of the longest matched span, as `12-40`."""
    start, end = max(spans, key=lambda span: (span[1] - span[0], -span[0]))
    return f"{text.count(chr(10), 0, start) + 1}-{text.count(chr(10), 0, max(start, end - 1)) + 1}"


def rows(matches: list[Match], texts: dict[tuple[str, str], str]) -> list[list[str]]:
    """similarity.csv's rows (without the header), highest first."""
    found = []
    for m in matches:
        spans_a, spans_b = m.overlap.spans
        found.append(
            [
                m.a,
                other(m),
                m.file_a,
                m.file_b,
                f"{m.overlap.similarity[0]:.3f}",
                f"{m.overlap.similarity[1]:.3f}",
                str(m.overlap.matched),
                longest_lines(texts[(m.a, m.file_a)], spans_a),
                longest_lines(texts[(m.b, m.file_b)], spans_b),
            ]
        )
    return found


def write_csv(out: Path, matches: list[Match], texts: dict[tuple[str, str], str]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([csv_cell(cell) for cell in row] for row in rows(matches, texts))
    return output_files.write_new(out, "similarity.csv", buffer.getvalue().encode())


def pairs(matches: list[Match]) -> list[tuple[str, str, list[Match]]]:
    """The matches by pair of authors, in the order of each pair's highest match."""
    grouped: dict[tuple[str, str], list[Match]] = {}
    for m in matches:
        grouped.setdefault((m.a, other(m)), []).append(m)
    return [(a, b, found) for (a, b), found in grouped.items()]


def highlighted(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` escaped for HTML with line numbers, the matched spans in <mark>; only the lines
    within CONTEXT of a match are shown, each run of others as one `...` line, so the release's
    own code does not bury what matched."""
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


def page(matches: list[Match], texts: dict[tuple[str, str], str], facts: list[str], groups: list[list[str]]) -> str:
    """similarity.html: the facts of the run, the groups, the pairs ranked, then each of the
    first SHOWN pairs' files side by side with the matched code marked (fewer when their code
    would pass SHOWN_CODE characters: uploads may be large, the page must still open)."""
    ranked = pairs(matches)
    shown = _shown(ranked, texts)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>minigrad: similar code</title><style>{STYLE}</style></head><body>",
        "<h1>minigrad: similar code</h1>",
        "<ul>",
    ]
    parts += [*[f"<li>{html(fact)}</li>" for fact in facts], "</ul>"]
    if groups:
        parts += ["<h2>Groups of three or more</h2>", "<ul>"]
        parts += [f"<li>{html(', '.join(group))}</li>" for group in groups]
        parts.append("</ul>")
    parts += [
        "<h2>Pairs</h2>",
        "<table><tr><th>#</th><th>student</th><th>other</th><th>highest</th><th>files</th></tr>",
    ]
    for n, (a, b, found) in enumerate(ranked, 1):
        name = f'<a href="#pair-{n}">{n}</a>' if n <= shown else str(n)
        files = ", ".join(m.file_a if m.file_a == m.file_b else f"{m.file_a} / {m.file_b}" for m in found)
        parts.append(
            f"<tr><td>{name}</td><td>{html(a)}</td><td>{html(b)}</td>"
            f"<td>{found[0].score:.0%}</td><td>{html(files)}</td></tr>"
        )
    parts.append("</table>")
    if len(ranked) > shown:
        parts.append(f"<p>The first {shown} pairs are shown below; similarity.csv lists all {len(ranked)}.</p>")
    for n, (a, b, found) in enumerate(ranked[:shown], 1):
        parts.append(f'<section id="pair-{n}"><h2>{n}. {html(a)} and {html(b)}</h2>')
        for m in found:
            text_a, text_b = texts[(m.a, m.file_a)], texts[(m.b, m.file_b)]
            spans_a, spans_b = m.overlap.spans
            share_a, share_b = m.overlap.similarity
            parts.append(
                f"<h3>{html(m.file_a)} ({share_a:.0%} of it, lines {longest_lines(text_a, spans_a)}) and "
                f"{html(m.file_b)} ({share_b:.0%}, lines {longest_lines(text_b, spans_b)}): "
                f"{m.overlap.matched} matched tokens</h3>"
            )
            parts.append(
                f'<div class="sides"><pre>{highlighted(text_a, spans_a)}</pre>'
                f"<pre>{highlighted(text_b, spans_b)}</pre></div>"
            )
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _shown(ranked: list[tuple[str, str, list[Match]]], texts: dict[tuple[str, str], str]) -> int:
    """How many of the first pairs the page shows side by side: at most SHOWN, and at least
    one, within SHOWN_CODE characters of code."""
    total = 0
    for n, (_, _, found) in enumerate(ranked[:SHOWN]):
        total += sum(len(texts[(m.a, m.file_a)]) + len(texts[(m.b, m.file_b)]) for m in found)
        if total > SHOWN_CODE and n > 0:
            return n
    return min(len(ranked), SHOWN)


def write_html(
    out: Path, matches: list[Match], texts: dict[tuple[str, str], str], facts: list[str], groups: list[list[str]]
) -> Path:
    return output_files.write_new(out, "similarity.html", page(matches, texts, facts, groups).encode())


def summary_section(
    matches: list[Match], facts: list[str], left_out: list[str], groups: list[list[str]], top: int = 5
) -> str:
    """The 'Similar code' section of summary.md: the facts (the kit's words), who was left out
    (student text, quoted), the groups, the highest pairs."""
    lines = ["", "## Similar code", "", *[f"- {fact}" for fact in facts], *[f"- {markdown(why)}" for why in left_out]]
    lines += [f"- group of {len(group)}: {', '.join(markdown(name) for name in group)}" for group in groups]
    for a, b, found in pairs(matches)[:top]:
        m = found[0]
        lines.append(
            f"- {markdown(a)} and {markdown(b)}: {markdown(m.file_a)} {m.overlap.similarity[0]:.0%}, "
            f"{markdown(m.file_b)} {m.overlap.similarity[1]:.0%}"
        )
    return "\n".join(lines) + "\n"
