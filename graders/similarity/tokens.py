"""A source file as the program Python runs: decoded as the interpreter decodes it, then
reduced to the tokens that make the program.

A copy is hidden by changing what Python ignores or what does not change the program's shape:
the file's encoding (a `# -*- coding: utf-7 -*-` cookie with the text in UTF-7 runs as well as
UTF-8), `;` between statements, blank lines, comments, docstrings, names and literals. So the
bytes are decoded by `tokenize.detect_encoding` (the interpreter's own rules: a BOM, or a cookie
on the first two lines, else UTF-8) and read by Python's own `tokenize`; every name becomes `V`,
every number `N`, every run of strings `S`, keywords and operators stay; comments, blank lines,
indentation, statement ends (a newline or a `;`: both end a statement) and string statements
(docstrings, and any bare string, which does nothing) are dropped. Each token remembers where it
lies in the decoded text, so a match is shown on the student's own lines.

A file Python itself could not run (no decoding, a NUL, an unclosed bracket) is refused with
the reason, never compared as something else. Two codecs Python accepts take time quadratic in
the input to decode (punycode, and idna, which uses it): 80 KB of punycode takes minutes, so a
cookie naming them is refused as well. And `tokenize` is Python code, about 15 us a token, with
regular expressions that take seconds over one long line: 4 MiB of `(` took 119 s, a 4 MiB
number 27 s. So a line longer than MAX_LINE is refused before tokenizing, and tokenizing stops
at a budget of tokens (a student's whole package, the reference's is 9,000 tokens that count).
"""

from __future__ import annotations

import codecs
import io
import keyword
import tokenize
from dataclasses import dataclass

SLOW_CODECS = frozenset({"punycode", "idna"})
MAX_LINE = 2000  # characters in a line; the reference's longest is 120
MAX_TOKENS = 100_000  # tokens Python's tokenize yields for one student (comments and line ends too)
_DROPPED = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING})
# Python 3.12 splits an f-string into parts; before, it is one STRING token.
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


class Unreadable(ValueError):
    """A file that is not compared; its message is the reason, for the report."""


@dataclass(frozen=True)
class Token:
    symbol: str  # what the token counts as: `V`, `N`, `S`, a keyword or an operator
    start: int  # offsets of the token in the decoded text
    end: int


def decode(data: bytes) -> str:
    """The text Python reads from `data`, with `\\n` lines and tabs expanded (as Python reads
    indentation), or Unreadable saying why Python could not read it."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown cookie, or a BOM beside another cookie
        raise Unreadable(f"Python cannot read it: {error.msg}") from None
    if codecs.lookup(encoding).name in SLOW_CODECS:
        raise Unreadable(f"its coding cookie names {encoding}, which is not decoded here (too slow); save it as UTF-8")
    try:
        text = data.decode(encoding)
    except (UnicodeError, LookupError) as error:  # bad bytes, or a codec that makes no text (rot13, hex)
        raise Unreadable(f"Python cannot decode it as {encoding}: {error}") from None
    if "\0" in text:
        raise Unreadable("it holds a NUL character, which Python refuses in source")
    return text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(8)


@dataclass(frozen=True)
class Tokens:
    kept: list[Token]
    yielded: int  # tokens `tokenize` yielded, the dropped ones too: what the budget counts
    stopped: str = ""  # why Python reads no further (an unclosed string, a bad dedent), or ""


def tokens(text: str, budget: int = MAX_TOKENS) -> Tokens:
    """The tokens of decoded `text` that make the program (see the module's docstring), or
    Unreadable past MAX_LINE or `budget` tokens. Where Python could read no further (an
    unclosed string or bracket, a bad dedent), the tokens before are kept and `stopped` says
    why: a copy broken at its end is still a copy, and Python reads the same tokens first."""
    offsets = [0]
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE:
            raise Unreadable(f"line {number} is over {MAX_LINE} characters; not read")
        offsets.append(offsets[-1] + len(line) + 1)

    kept: list[Token] = []
    strings: list[int] = []  # a run of strings: its start, its end, whether it opens a statement
    opens = True  # the next token opens a statement
    fstring_depth, fstring_start, yielded = 0, 0, 0
    try:
        for found in tokenize.generate_tokens(io.StringIO(text).readline):
            yielded += 1
            if yielded > budget:
                raise Unreadable(f"over {MAX_TOKENS} tokens of Python in this student's files; not read")
            kind = found.type
            if fstring_depth or kind == _FSTRING_START:
                fstring_depth += (kind == _FSTRING_START) - (kind == _FSTRING_END)
                if fstring_depth == 1 and kind == _FSTRING_START:
                    fstring_start = offsets[found.start[0] - 1] + found.start[1]
                if fstring_depth:
                    continue
                kind, start = tokenize.STRING, fstring_start
            elif kind in _DROPPED or (kind == tokenize.ERRORTOKEN and not found.string.strip()):
                continue
            else:
                start = offsets[found.start[0] - 1] + found.start[1]
            end = offsets[found.end[0] - 1] + found.end[1]
            if kind == tokenize.STRING:
                strings = [strings[0], end, strings[2]] if strings else [start, end, opens]
                opens = False
                continue
            ends_statement = kind in (tokenize.NEWLINE, tokenize.ENDMARKER) or found.string == ";"
            if strings and not (strings[2] and ends_statement):
                kept.append(Token("S", strings[0], strings[1]))
            strings = []
            opens = ends_statement
            if not ends_statement:
                kept.append(Token(_symbol(kind, found.string), start, min(end, len(text))))
    except (tokenize.TokenError, SyntaxError) as error:  # SyntaxError: IndentationError, and 3.12's errors
        message = error.args[0] if error.args else type(error).__name__
        line = text.count("\n", 0, kept[-1].end) + 1 if kept else 0
        return Tokens(kept, yielded, f"read up to line {line}: Python reads no further ({message})")
    return Tokens(kept, yielded)


def _symbol(kind: int, string: str) -> str:
    if kind == tokenize.NAME:
        return string if keyword.iskeyword(string) else "V"
    if kind == tokenize.NUMBER:
        return "N"
    return string
