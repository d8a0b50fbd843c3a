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

# C0 and C1 controls, DEL, lone surrogates, bidi embeddings, overrides and isolates (which
# reorder what a reader sees), and the characters `str.splitlines` breaks lines at.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")  # letters and digits, joined by single hyphens
_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")  # OWASP, and full-width look-alikes
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_ANGLES = str.maketrans({"<": "\u2039", ">": "\u203a"})  # ‹ ›
_MARKUP = re.compile(r"[\\`*_{}\[\]()#+\-.!|~:/@]")  # what can start Markdown or an autolink in prose
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
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
    stays as it is; anything else becomes a code span whose fence is longer than any run of
    backticks inside, so it cannot close early and no heading, link, image, emphasis or HTML
    can form. Code cannot hold an HTML escape, so `<` and `>` become the look-alikes ‹ and ›:
    a viewer that wrongly renders HTML in code still finds none (the HTML page keeps the exact
    text). In a table cell (`table`), `|` is escaped, as GitHub's tables need even in code."""
    if not text or _WORD.fullmatch(text):
        return text
    code = visible(text).translate(_ANGLES)
    fence = "`" * (_longest_backticks(code) + 1)
    if code.startswith(("`", " ")) or code.endswith(("`", " ")):
        code = f" {code} "  # a single space each side is taken off again when the span is read
    if table:
        code = code.replace("|", "\\|")
    return f"{fence}{code}{fence}"


def markdown_text(text: str) -> str:
    """Text as prose in Markdown, for a sentence that reads wrong as code: each character
    that could start Markdown is backslash-escaped and `<`, `>`, `&` are HTML escapes, so it
    renders exactly as written. A word joiner after `:`, `@` and `www` keeps renderers that
    find bare links in text (GitHub's, linkify) from finding one."""
    escaped = re.sub("[<>&]", lambda found: _ENTITIES[found[0]], visible(text))
    escaped = re.sub(r"(?i)(?<=www)(?=\.)|(?<=[:@])", "\u2060", escaped)
    return _MARKUP.sub(lambda found: "\\" + found[0], escaped)


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
