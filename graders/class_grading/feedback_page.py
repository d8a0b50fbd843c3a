"""feedback.html: a student's feedback (feedback_content.py) as a page of its own.

The page is opened from a zip, attached to a Canvas comment, or uploaded to Moodle, so it
carries everything it needs: one file, its small stylesheet inline, no script, no font or
image to fetch. Each root cause is a `<details>` section, the first open, so a student starts
where the grader says to start and opens the rest when ready; printing opens every section.
It reads on a phone (no fixed width; long names and messages wrap) and without colour: each
part says its result in words and a symbol as well. A number a message printed with every digit
of a float is shown rounded; its exact text is its `title` and in the section's "Exact values".
"""

from __future__ import annotations

from graders.reporting.escape import html, html_text

from .feedback_content import Failure, Feedback
from .tables import number

# Colours meet WCAG AA (4.5:1) on their background, in light and dark schemes; a part's result
# is said in words too. `::details-content` opens a closed section in print (Chromium 131+).
STYLE = """
:root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#505050;--line:#c8c8c8;--code:#f2f2f2;
--good:#1a6b2a;--bad:#a4161a}
@media (prefers-color-scheme:dark){:root{--fg:#ececec;--bg:#161616;--muted:#c0c0c0;--line:#4a4a4a;
--code:#262626;--good:#86d993;--bad:#ffa3a3}}
*{box-sizing:border-box}
body{margin:0 auto;padding:1rem;max-width:50rem;font:1rem/1.5 system-ui,sans-serif;color:var(--fg);
background:var(--bg);overflow-wrap:anywhere}
h1{font-size:1.5rem;margin:.2em 0 .4em}h2{font-size:1.2rem;margin:1.4em 0 .4em}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;background:var(--code);border-radius:3px}
code{padding:0 .2em}pre{padding:.6em;white-space:pre-wrap;margin:.5em 0}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.3em .5em;border-bottom:1px solid var(--line)}
.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.full{color:var(--good)}.lost{color:var(--bad)}.muted{color:var(--muted)}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:.4em 0}dd{margin:0}
details.cause{border:1px solid var(--line);border-radius:4px;margin:.8em 0;padding:0 .8em}
details.cause>summary{cursor:pointer;padding:.6em 0}
details.cause>summary h3{display:inline;font-size:1.05rem;margin:0}
details.cause[open]>summary{border-bottom:1px solid var(--line);margin-bottom:.5em}
ul.tests{padding-left:1.2em}
@media print{body{max-width:none}details::details-content{content-visibility:visible;display:block}
details>summary{list-style:none}details.cause{break-inside:auto}}
"""


def render(said: Feedback) -> str:
    """The page: its header (totals, hand-in, notes), the part table, then what to fix."""
    totals = "".join(f"<dt>{html(name)}</dt><dd>{html(value)}</dd>" for name, value in said.totals)
    body = [
        f"<h1>minigrad: feedback for {html(said.student)}</h1>",
        f"<p><strong>Total: {html(said.total)}</strong></p>",
    ]
    body.append(f"<dl>{totals}</dl>")
    if said.hand_in:
        body += ['<h2 id="hand-in">Hand-in</h2>', _list(said.hand_in)]
    body += ['<h2 id="scores">Scores</h2>', _scores(said)]
    if said.notes:
        body += ['<h2 id="notes">Notes</h2>', _list(said.notes)]
    if not said.failures:
        body.append("<p>&#x2713; Every hidden test passed.</p>")
    else:
        body.append('<h2 id="fix">What to fix</h2>')
        body.append(f"<p><strong>Start here:</strong> {html_text(said.failures[0].title)} — {said.start}.</p>")
        body += [_section(rank, failure) for rank, failure in enumerate(said.failures, start=1)]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>minigrad feedback: {html(said.student)}</title><style>{STYLE}</style></head>\n"
        "<body><main>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html_text(line)}</li>" for line in lines) + "</ul>"


def _scores(said: Feedback) -> str:
    """The part table: each part's points out of its maximum, and its result in words."""
    rows = []
    for part, got, most in said.parts:
        full = got >= most
        result = "&#x2713; full marks" if full else f"&#x2717; {number(most - got)} lost"
        kind = "full" if full else "lost"
        if not most:  # a check worth nothing (the upload's first test): it tells, the others grade
            result, kind = "no points: a check", "muted"
        rows.append(
            f'<tr><th scope="row">{html(part)}</th><td class="n">{number(got)} / {number(most)}</td>'
            f'<td class="{kind}">{result}</td></tr>'
        )
    if said.bonus is not None:
        rows.append(
            f'<tr><th scope="row">bonus (optional extensions)</th><td class="n">+{number(said.bonus)}</td>'
            '<td class="muted">extra credit</td></tr>'
        )
    head = '<tr><th scope="col">part</th><th scope="col" class="n">score</th><th scope="col">result</th></tr>'
    return f'<table id="score-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _section(rank: int, failure: Failure) -> str:
    """One root cause, folded (the first open): its first test's message, the exact values of
    the numbers rounded in it, and the other tests that fail through it, one per line."""
    inner = [] if failure.stopped else [f"<p>First failing test: <code>{html(failure.names[0])}</code></p>"]
    shown, exact = [], []
    for text, value in failure.pieces:
        shown.append(f'<span title="{html(value)}">{html(text)}</span>' if value else html(text))
        exact += [value] if value else []
    inner.append(f"<pre>{''.join(shown)}</pre>")
    if exact:
        values = "".join(f"<li><code>{html(value)}</code></li>" for value in exact)
        inner.append(f"<details><summary>Exact values</summary><ul>{values}</ul></details>")
    words, rest = failure.rest
    if rest:
        names = "".join(f"<li><code>{html(name)}</code></li>" for name in rest)
        inner.append(f'<p>{words}</p><ul class="tests">{names}</ul>')
    return (
        f'<details class="cause"{" open" if rank == 1 else ""}><summary><h3>{rank}. {html_text(failure.title)}</h3> '
        f'<span class="lost">{html(failure.count)}</span></summary>\n' + "\n".join(inner) + "\n</details>"
    )
