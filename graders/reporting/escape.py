"""Student text made safe for each place it lands: Markdown, HTML, CSV, the terminal, JSON.

A student controls much more than code: exception messages, `repr`s, file and folder names.
Each of these reaches files an instructor or an LMS opens, so every writer passes it through
the function for its format here, and nothing else decides how student text is escaped.

Two steps. At entry (`untrusted`), where the kit first puts student text into a message, it
becomes one visible line: control characters, escape sequences, lone surrogates, bidi
overrides and line separators are shown as `\\x1b`-style text, so the kit's own line
structure (the `hint:` lines, the `note:` lines under a score) cannot be forged, and the text is
trimmed. At exit, each writer escapes for its format whatever it writes, kit text included,
since a file read back (`--resume`) may have been written by an older kit.
"""

from __future__ import annotations

import html as _html
import json as _json
import re
import sys
from typing import TextIO

LIMIT = 300  # characters kept of one piece of student text, as the grader's channel keeps

# Unicode's format characters (category Cf, as of Unicode 15.1): bidi marks, embeddings,
# overrides and isolates (which reorder what a reader sees), soft hyphen, zero-width spaces and
# joiners, the word joiner, the byte-order mark, tag characters. Each is drawn as nothing, so a
# reader cannot tell it is there; tests/test_escape.py checks the list against unicodedata.
_FORMAT = (
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
# C0 and C1 controls, DEL, lone surrogates, format characters, and the characters
# `str.splitlines` breaks lines at.
_HIDDEN = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029{_FORMAT}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")  # letters and digits, joined by single hyphens
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # OWASP, and full-width look-alikes
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_ANGLES = str.maketrans({"<": "\u2039", ">": "\u203a"})  # ‹ ›
_JSON_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def visible(text: str, keep_newlines: bool = False) -> str:
    """`text` with every hidden or line-breaking character shown as its escape (`\\x1b`,
    `\\r`, `\\ud800`, `\\u202e`); with `keep_newlines`, `\\n` stays a line break."""

    def shown(found: re.Match[str]) -> str:
        char = found[0]
        if char == "\n" and keep_newlines:
            return char
        code = ord(char)
        return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return _HIDDEN.sub(shown, text)


def untrusted(text: object, limit: int = LIMIT) -> str:
    """Student text as the kit puts it into a message: one visible line, at most `limit`
    characters (then " ...")."""
    line = visible(text if isinstance(text, str) else str(text))
    return line if len(line) <= limit else line[:limit] + " ..."


def terminal(text: str) -> str:
    """Text for a terminal: no control character reaches it, so nothing printed can move the
    cursor, clear the screen, set the window title or overwrite a score; the kit's own line
    breaks stay."""
    return visible(text, keep_newlines=True)


def say(text: str, file: TextIO | None = None) -> None:
    """Print `text` for a terminal, whatever the stream's encoding: characters it cannot
    encode are written as `\\u00e9`-style escapes instead of ending the program."""
    stream = file or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    stream.write(terminal(text).encode(encoding, "backslashreplace").decode(encoding, "replace") + "\n")
    stream.flush()


def markdown(text: str, table: bool = False) -> str:
    """Text inline in Markdown. A plain word (letters and digits, single hyphens between)
    stays as it is; anything else becomes a code span (see `markdown_code`). In a table cell
    (`table`), `|` is escaped, as GitHub's tables need even in code."""
    if not text or _WORD.fullmatch(text):
        return text
    return markdown_code(text, table)


def markdown_code(text: str, table: bool = False) -> str:
    """Text as one Markdown code span, whose fence is longer than any run of backticks inside,
    so it cannot close early and no heading, link, image, emphasis or HTML can form. Code
    cannot hold an HTML escape, so `<` and `>` become the look-alikes ‹ and ›: a viewer that
    wrongly renders HTML in code still finds none (the HTML page keeps the exact text)."""
    code = visible(text).translate(_ANGLES)
    fence = "`" * (_longest_backticks(code) + 1)
    if code.startswith(("`", " ")) or code.endswith(("`", " ")) or not code.strip():
        code = f" {code} "  # a single space each side is taken off again when the span is read
    if table:
        code = code.replace("|", "\\|")
    return f"{fence}{code}{fence}"


# Prose, as `prose` reads it: a word may carry opening and closing punctuation; its core is
# letters and digits (with single hyphens or apostrophes between) or a decimal number. Nothing
# of that kind starts Markdown, HTML, an entity, math, an emoji code or a link in any renderer
# (GitHub's, GitLab's, markdown-it with linkify, Canvas's), so it is written as it is.
_OPEN, _CLOSE = "(\"'‘“", ")\"'’”,;:.?!%"
_TOKEN = re.compile(f"([{_OPEN}]*)(.*?)([{_CLOSE}]*)", re.DOTALL)
_PLAIN_CORE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|-?\d+(?:\.\d+)?|[/+×–—-]?")
_LIST_START = re.compile(r"\d+[.)]|[-+]")  # a line that begins so is a list item or a rule


def prose(text: str) -> list[tuple[str, bool]]:
    """The kit's text as pieces of prose and code, each `(text, is_code)`. The kit writes
    names between backticks (`` `Value.__mul__`'s backward ``): each such span is code. Of
    the rest, a plain word (see above) stays prose and any other word is code, its punctuation
    kept outside: `engine.py:63`, a time, an address, a student's file name. So a page shows
    code as code, and student text between the kit's words can form nothing, with no
    backslash or invisible character needed to keep it from doing so."""
    pieces: list[tuple[str, bool]] = []
    for number, part in enumerate(re.split(r"`([^`]+)`", visible(text).strip())):
        if number % 2:
            pieces.append((part, True))
            continue
        for word in re.split(r"\s+", part):
            opening, core, closing = _TOKEN.fullmatch(word).groups()  # type: ignore[union-attr]
            starts_line = not any(piece.strip() for piece, _ in pieces)
            if _PLAIN_CORE.fullmatch(core) and not (starts_line and _LIST_START.fullmatch(word)):
                pieces.append((word, False))
            else:
                pieces += [(opening, False), (core, True), (closing, False)]
            pieces.append((" ", False))  # any run of blanks: one space, so no indent or line break forms
        pieces.pop()
    return [piece for piece in pieces if piece[0]]


def markdown_text(text: str) -> str:
    """The kit's text as a line of Markdown (see `prose`): plain words as they are, names and
    anything else in code spans."""
    return "".join(markdown_code(piece) if code else piece for piece, code in prose(text))


def html_text(text: str) -> str:
    """The kit's text as HTML, the same pieces as `markdown_text`: code in `<code>`."""
    return "".join(f"<code>{html(piece)}</code>" if code else html(piece) for piece, code in prose(text))


def markdown_block(text: str) -> str:
    """Text as a fenced code block, its line breaks kept: the fence is longer than any run of
    backticks inside (three at least), and `<`, `>` become ‹ and › as in `markdown`."""
    code = visible(text, keep_newlines=True).translate(_ANGLES)
    fence = "`" * max(3, _longest_backticks(code) + 1)
    return f"{fence}\n{code}\n{fence}"


def html(text: str) -> str:
    """Text for HTML, in an element or an attribute value; line breaks kept (for `<pre>`)."""
    return _html.escape(visible(text, keep_newlines=True), quote=True)


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet runs as a formula. Text beginning (after any blanks)
    with `=`, `+`, `-`, `@`, a tab, a carriage return, or their full-width forms, gets a
    leading `'`, as OWASP advises against CSV injection; its hidden characters are shown.

    A number is left alone: the kit writes its numbers as text (`number()`, formatted the
    same every run), and text that is wholly a plain decimal number, such as `-1.5`, is read
    by a spreadsheet as that number and nothing else, whoever wrote it. Non-text cells (ints,
    floats) are written by `csv` as numbers. `<` and `>` become ‹ and ›, as in Markdown code:
    an LMS import or a web viewer may show a cell as HTML."""
    if not isinstance(value, str):
        return value
    cell = visible(value).translate(_ANGLES)
    if _NUMBER.fullmatch(value) or not (value.startswith(_FORMULA) or value.lstrip().startswith(_FORMULA)):
        return cell
    return "'" + cell


def json_text(data: object, indent: int | None = 2, sort_keys: bool = False) -> str:
    """`data` as JSON that every reader accepts and no page can mistake for markup: lone
    surrogates (from a student's message, or a file name that was not UTF-8) become U+FFFD,
    which strict JSON readers require, and `<`, `>`, `&` are written as `\\u003c`-style escapes
    (the same strings once parsed)."""
    text = _json.dumps(_no_surrogates(data), indent=indent, sort_keys=sort_keys)
    return re.sub("[<>&]", lambda found: _JSON_HTML[found[0]], text)


def _no_surrogates(data: object) -> object:
    if isinstance(data, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", data)
    if isinstance(data, dict):
        return {_no_surrogates(key): _no_surrogates(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_no_surrogates(item) for item in data]
    return data


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall("`+", text)), default=0)
