"""graders/reporting/escape.py, function by function: what each format receives from student text.

The Markdown checks parse what is written with mistune (nbconvert's renderer, so installed
with nbgrader), GitHub's tables and bare-link finding switched on: what a viewer would build
from the text is what matters, not how the text looks.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata

import mistune
import pytest

from graders.class_grading import tables
from graders.reporting import escape

ATTACKS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "# heading",
    "[link](http://evil)",
    "![img](x)",
    "http://evil.example/x",
    "``` `` ` backticks",
    "*emphasis* _under_ ~~struck~~",
    "| a | table |",
    "\x1b[2J\x1b]0;title\x07\x1b[1A\r\n",
    "lone \ud800 surrogate",
    "\u202eright-to-left override",
    "line\u2028separator\x85next",
    '=HYPERLINK("http://evil")',
    "",
    "`",
    "````",
    "x" * 5000,
]
HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069\u2028\u2029]")
PARSE = mistune.create_markdown(renderer=None, plugins=["table", "url", "strikethrough"])
PROSE = {"list", "list_item", "block_text", "paragraph", "text", "codespan", "blank_line"}


def nodes(markdown: str) -> list[dict]:
    """Every node mistune builds from `markdown`, depth first."""
    found, stack = [], list(reversed(PARSE(markdown)))
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.get("children", [])))
    return found


@pytest.mark.parametrize("text", ATTACKS)
def test_inline_markdown_is_plain_words_or_one_code_span(text: str) -> None:
    line = f"- warning: {escape.markdown(text)}"
    found = nodes(line)
    assert {node["type"] for node in found} <= PROSE
    assert "<" not in line and ">" not in line and not HIDDEN.search(line) and "\n" not in line
    if text and not text.isalnum():
        code = [node["raw"] for node in found if node["type"] == "codespan"]
        assert code == [escape.visible(text).translate({ord("<"): "\u2039", ord(">"): "\u203a"})]


def test_plain_words_stay_plain_and_code_keeps_every_character() -> None:
    assert escape.markdown("bob") == "bob" and escape.markdown("s80-a-b-2") == "s80-a-b-2"
    assert escape.markdown("José") == "José"
    assert escape.markdown("") == ""
    assert escape.markdown("a_b") == "`a_b`"
    assert escape.markdown("`") == "`` ` ``"
    assert escape.markdown("````") == "````` ```` `````"
    assert escape.markdown(" x ") == "`  x  `"
    assert escape.markdown("a|b", table=True) == "`a\\|b`"
    long = escape.markdown("`" * 3 + "x" * 5000)
    assert long.startswith("```` ```x") and len(long) < 5020


@pytest.mark.parametrize("text", ATTACKS)
def test_a_markdown_table_cell_stays_one_cell(text: str) -> None:
    table = f"| part | score |\n|---|---|\n| {escape.markdown(text, table=True)} | 1 |\n"
    found = nodes(table)
    assert [node["attrs"]["head"] for node in found if node["type"] == "table_cell"] == [True, True, False, False]
    assert {node["type"] for node in found} <= PROSE | {"table", "table_head", "table_body", "table_row", "table_cell"}


@pytest.mark.parametrize("text", ATTACKS + ["```\n# not a heading\n```", "~~~\n~~~"])
def test_a_fenced_block_holds_its_text_and_nothing_escapes_it(text: str) -> None:
    block = escape.markdown_block(f"kit line\n{text}\n    hint: kit's own")
    found = PARSE(f"## What to fix\n\n{block}\n\nafter")
    assert [node["type"] for node in found if node["type"] != "blank_line"] == ["heading", "block_code", "paragraph"]
    code = next(node["raw"] for node in found if node["type"] == "block_code")
    assert code.startswith("kit line\n") and code.endswith("    hint: kit's own\n")
    assert "<" not in block and not HIDDEN.search(block.replace("\n", ""))


def test_markdown_text_reads_as_written_and_forms_nothing() -> None:
    """Prose keeps its words; anything that could form Markdown, HTML, an entity or a link is
    a code span; no backslash and no invisible character is needed for that."""
    text = "# h [l](http://evil) ![i](x) <b>&amp; *e* ~~s~~ a@b.co www.x.org $m$ :smile: 1. - + | `c`"
    written = escape.markdown_text(text)
    found = nodes(written)
    assert {node["type"] for node in found} <= {"paragraph", "text", "codespan"}
    shown = "".join(node["raw"] for node in found if node["type"] in {"text", "codespan"})  # as a page shows it
    assert shown == text.replace("<", "\u2039").replace(">", "\u203a").replace("`c`", "c")
    assert "\\" not in written and not any(unicodedata.category(char) == "Cf" for char in written)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("`Value.__mul__`'s backward (engine.py:63)", "`Value.__mul__`'s backward (`engine.py:63`)"),
        (
            "Late (marked by the platform, with no hand-in time).",
            "Late (marked by the platform, with no hand-in time).",
        ),
        ("Submitted: 2026-11-20T11:00:00+00:00", "Submitted: `2026-11-20T11:00:00+00:00`"),
        ("Late penalty: -2.4", "Late penalty: -2.4"),
        ("1. starts a list", "`1`. starts a list"),
        ("- starts a list", "`-` starts a list"),
        ("a ``` b", "a ```` ``` ```` b"),
    ],
)
def test_markdown_text_marks_names_as_code(text: str, written: str) -> None:
    assert escape.markdown_text(text) == written


@pytest.mark.parametrize("text", ATTACKS)
def test_markdown_text_of_attacks_in_a_list_item_forms_nothing(text: str) -> None:
    line = f"- note: {escape.markdown_text(text)}"
    assert {node["type"] for node in nodes(line)} <= PROSE
    assert "<" not in line and ">" not in line and not HIDDEN.search(line) and "\n" not in line
    assert "<" not in re.sub("</?code>", "", escape.html_text(text))


def test_format_characters_are_all_shown() -> None:
    """Every character Unicode calls a format character (Cf) is drawn as nothing: each is shown
    as its escape, so none can hide in a name or a message."""
    hidden = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert [char for char in hidden if escape.visible(char) == char] == []
    assert escape.visible("a\u2060b\u200bc\ufeff") == "a\\u2060b\\u200bc\\ufeff"


@pytest.mark.parametrize("text", ATTACKS)
def test_html_escapes_everything_and_shows_hidden_characters(text: str) -> None:
    shown = escape.html(text)
    assert "<" not in shown and ">" not in shown and '"' not in shown and "'" not in shown
    assert not HIDDEN.search(shown)
    assert escape.html("a & b\nc") == "a &amp; b\nc"


def test_csv_cells_never_start_a_formula_and_numbers_stay_numbers() -> None:
    formulas = [
        "=1+2",
        "+1",
        "-2-3",
        "@SUM(A1)",
        "\tx",
        "\rx",
        "  =1+2",
        "\xa0\u3000=1",
        " \t@x",
        "\uff1dcmd",
        "-",
        "-1.5e+3x",
    ]
    for text in formulas:
        assert escape.csv_cell(text).startswith("'"), text
    for number in ["-1.5", "0", "122", "-3", "1e-07", "0.500"]:
        assert escape.csv_cell(number) == number
    assert escape.csv_cell(-1.5) == -1.5 and escape.csv_cell(3) == 3 and escape.csv_cell("") == ""
    assert escape.csv_cell("a\x1b[2Jb\nc") == "a\\x1b[2Jb\\nc"
    assert escape.csv_cell("<img src=x onerror=alert(1)>") == "‹img src=x onerror=alert(1)›"
    assert escape.csv_cell("x" * 10000) == "x" * 10000


def test_every_class_csv_goes_through_the_one_writer(tmp_path) -> None:
    rows = [[text, "-1.5", 3, text] for text in ATTACKS]
    tables.write_csv(tmp_path, "t.csv", ["student", "n", "k", "=problem"], rows)
    read = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text())))
    assert read[0] == ["student", "n", "k", "'=problem"]
    for row in read:
        for cell in row:
            assert not cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")) or cell == "-1.5", cell
            assert not HIDDEN.search(cell)
    assert [row[1:3] for row in read[1:]] == [["-1.5", "3"]] * len(ATTACKS)


def test_terminal_text_has_no_control_character_but_keeps_the_kits_lines() -> None:
    shown = escape.terminal("total 117 / 122\n\x1b[1A\x1b[2Ktotal 122 / 122\x1b]0;title\x07\r\x9b2J\ud800")
    assert shown.splitlines() == [
        "total 117 / 122",
        "\\x1b[1A\\x1b[2Ktotal 122 / 122\\x1b]0;title\\x07\\r\\x9b2J\\ud800",
    ]
    assert escape.terminal("") == ""


def test_say_never_fails_on_a_stream_that_cannot_encode() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    escape.say("José \ud800 \x1b[2J", stream)
    assert raw.getvalue() == b"Jos\\xe9 \\ud800 \\x1b[2J\n"


def test_untrusted_text_is_one_visible_trimmed_line() -> None:
    assert escape.untrusted("a\nhint: forged\r\x1b") == "a\\nhint: forged\\r\\x1b"
    assert escape.untrusted(None) == "None" and escape.untrusted("") == ""
    long = escape.untrusted("\x1b" * 1000)
    assert len(long) == escape.LIMIT + 4 and long.endswith(" ...")
    assert escape.untrusted(long) == long  # said twice, trimmed once


def test_json_text_always_encodes_and_hides_no_markup() -> None:
    data = {"output": "lone \ud800 <script>&", "\udcff key": ["\ud83d", 1.5, None]}
    text = escape.json_text(data)
    assert "<" not in text and ">" not in text and "&" not in text and "\\ud8" not in text
    text.encode("utf-8")  # strict: no lone surrogate left
    assert json.loads(text) == {"output": "lone \ufffd <script>&", "\ufffd key": ["\ufffd", 1.5, None]}
    assert escape.json_text({}) == "{}" and escape.json_text("", indent=None) == '""'
