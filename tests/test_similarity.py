"""minigrad-similar on real cases: engines written independently, a disguised copy, untouched
releases, a copy from a corpus, a student file whose comments hold HTML; copies hidden the ways
students hide them (another encoding, `;` after every statement, other modules), students who
must not be framed (copied from, a group's members), and what is set aside said aloud.

tests/similarity/ holds two engines written apart, in different shapes: one with closures as
the course teaches, one with a table of derivative rules. The disguised copy is made here from
the first (names changed, methods reordered, comments reworded), as a student hiding a copy would.
"""

from __future__ import annotations

import base64
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tokenize
import zipfile
from html.parser import HTMLParser
from pathlib import Path

from graders.similarity import cli, fingerprints, release, report, tokens
from graders.uploads import layouts

ROOT = Path(__file__).resolve().parent.parent
ENGINES = Path(__file__).resolve().parent / "similarity"
CLOSURES = (ENGINES / "engine_closures.py").read_text(encoding="utf-8")
RULES = (ENGINES / "engine_rules.py").read_text(encoding="utf-8")
RENAMES = {
    "other": "rhs",
    "out": "result",
    "_backward": "_grad_step",
    "order": "nodes",
    "visited": "done",
    "stack": "todo",
    "node": "n",
    "expanded": "finished",
    "child": "parent_node",
    "t": "th",
    "s": "sg",
    "root": "r",
    "v": "val",
    "exponent": "power",
}
ORDER = [
    "tanh",
    "exp",
    "relu",
    "log",
    "sigmoid",
    "__mul__",
    "__add__",
    "__truediv__",
    "__pow__",
    "__sub__",
    "__neg__",
    "__rmul__",
    "__radd__",
    "__rsub__",
    "__rtruediv__",
    "sqrt",
    "cos",
    "sin",
    "backward",
]
HOSTILE = "# </script><script>document.title='pwned'</script> <img src=x onerror=\"document.title='img'\">\n"


def disguise(engine: str) -> str:
    """`engine` with its names changed and Value's methods in another order, as a copier does."""
    head, marker, rest = engine.partition("    # ---- part 1: operators")
    body = re.sub(r"\b(" + "|".join(RENAMES) + r")\b", lambda found: RENAMES[found[1]], marker + rest)
    body = body.replace("result._grad_step = _grad_step", "result._backward = _grad_step")
    body = body.replace("n._grad_step()", "n._backward()")
    methods, _, functions = body.partition("\n\ndef topological_order")
    first, *blocks = re.split(r"\n(?=    def )", methods)
    by_name = {re.match(r"    def (\w+)", block)[1]: block.rstrip("\n") + "\n" for block in blocks}
    assert set(by_name) == set(ORDER)
    reordered = first + "\n" + "\n".join(by_name[name] for name in ORDER)
    return head + reordered.replace("# ----", "# my code:") + "\n\ndef topological_order" + functions


def make_class(folder: Path, students: dict[str, dict[str, str]]) -> Path:
    """A folder per student holding minigrad/: the release, with the files given replaced."""
    for student, files in students.items():
        package = folder / student / "minigrad"
        shutil.copytree(release.RELEASE, package, ignore=shutil.ignore_patterns("__pycache__", "data"))
        for name, text in files.items():
            (package / name).write_text(text, encoding="utf-8")
    return folder


def similar(submissions: Path, out: Path, *options: str) -> list[dict[str, str]]:
    assert cli.main([str(submissions), "--out", str(out), *options]) == 0
    with (out / "similarity.csv").open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def pairs(rows: list[dict[str, str]]) -> list[set[str]]:
    return [{row["student"], row["other"]} for row in rows]


def test_a_disguised_copy_ranks_first_and_independent_engines_and_untouched_releases_do_not(tmp_path, capsys):
    students = {
        "ann": {"engine.py": CLOSURES},
        "bob": {"engine.py": RULES},
        "cat": {"engine.py": disguise(CLOSURES)},
        "dan": {},
        "eve": {},
    }
    rows = similar(make_class(tmp_path / "class", students), tmp_path / "out")
    assert rows_of(rows) == [("ann", "cat", "0.998", "0.994", "engine.py", "engine.py")]
    assert rows[0]["matched_tokens"] == "978" and rows[0]["lines"] == "104-230" and rows[0]["other_lines"] == "159-230"
    assert "threshold 0.50 (the default)" in capsys.readouterr().out


def body(text: str) -> fingerprints.Body:
    return fingerprints.body({"engine.py": (text, tokens.tokens(text).kept)}, release.boilerplate().hashes)


def test_what_falls_below_the_threshold_is_far_below(tmp_path):
    """The margins, not only the verdicts: independent engines share a tenth of their code,
    untouched releases none, the disguised copy nearly all."""
    ann, bob, cat = (body(text) for text in (CLOSURES, RULES, disguise(CLOSURES)))
    independent = fingerprints.compare(ann, bob)
    assert independent is not None and [round(share, 3) for share in independent.similarity] == [0.09, 0.073]
    copied = fingerprints.compare(ann, cat)
    assert copied is not None and [round(share, 3) for share in copied.similarity] == [0.998, 0.994]
    untouched = body((release.RELEASE / "engine.py").read_text(encoding="utf-8"))
    assert untouched.coverage == 0 and fingerprints.compare(untouched, untouched) is None


def test_a_copy_from_a_corpus_is_reported_against_that_file(tmp_path):
    corpus = tmp_path / "fall-2025"
    (corpus / "zed" / "minigrad").mkdir(parents=True)
    (corpus / "zed" / "minigrad" / "engine.py").write_text(RULES, encoding="utf-8")
    (corpus / "found-online.py").write_text(CLOSURES, encoding="utf-8")
    twin = tmp_path / "twin"  # a second corpus holding the same file: corpora are never compared
    shutil.copytree(corpus, twin)
    students = {
        "gil": {"engine.py": RULES.replace("made", "node_out")},
        "hal": {},
        "ivy": {"engine.py": disguise(CLOSURES)},
    }
    rows = similar(
        make_class(tmp_path / "class", students), tmp_path / "out", "--against", str(corpus), "--against", str(twin)
    )
    assert rows_of(rows) == [
        ("gil", "against fall-2025/zed", "1.000", "1.000", "engine.py", "fall-2025/zed/minigrad/engine.py"),
        ("gil", "against twin/zed", "1.000", "1.000", "engine.py", "twin/zed/minigrad/engine.py"),
        ("ivy", "against fall-2025/found-online.py", "0.994", "0.998", "engine.py", "fall-2025/found-online.py"),
        ("ivy", "against twin/found-online.py", "0.994", "0.998", "engine.py", "twin/found-online.py"),
    ], "corpora are never compared with each other, nor their works"


class Page(HTMLParser):
    """The elements and attributes of a page, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_in_a_students_comments_renders_as_text(tmp_path):
    """Checked on the parsed page, as a browser builds it (also checked by hand in headless
    Chromium: the page's title stays, no image is requested)."""
    hostile = CLOSURES.replace("        def _backward():", "        " + HOSTILE + "        def _backward():", 1)
    hostile = hostile.replace("        return out\n", "        return out  # </pre><h1>not a heading</h1>\n", 1)
    students = {"ann": {"engine.py": CLOSURES}, "fay": {"engine.py": hostile}}
    assert pairs(similar(make_class(tmp_path / "class", students), tmp_path / "out")) == [{"ann", "fay"}]
    page = Page()
    page.feed((tmp_path / "out" / "similarity.html").read_text(encoding="utf-8"))
    assert "script" not in page.tags and "img" not in page.tags and page.tags.count("h1") == 1
    assert not any(name.startswith("on") for name in page.attributes)
    text = "".join(page.text)
    assert HOSTILE.strip() in text and "</pre><h1>not a heading</h1>" in text


def test_the_report_is_the_same_in_every_process(tmp_path):
    """copydetect's own hash (Python's `hash`) changes with PYTHONHASHSEED; ours does not."""
    students = {"ann": {"engine.py": CLOSURES}, "bob": {"engine.py": RULES}, "cat": {"engine.py": disguise(CLOSURES)}}
    submissions = make_class(tmp_path / "class", students)
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"out-{seed}"
        command = [sys.executable, "-m", "graders.similarity.cli", str(submissions), "--out", str(out)]
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.append([(out / name).read_bytes() for name in ("similarity.csv", "similarity.html")])
    assert outputs[0] == outputs[1]


def test_code_most_of_the_class_shares_is_the_courses_idiom(tmp_path):
    """Twelve students handing in the same engine are past --common (10): that code is set
    aside for everyone, and a pair that shares code of its own is still found."""
    reference = (ROOT / "reference" / "minigrad" / "engine.py").read_text(encoding="utf-8")
    students = {f"s{n:02d}": {"engine.py": reference} for n in range(12)}
    students |= {"ann": {"engine.py": RULES}, "cat": {"engine.py": RULES.replace("made", "node_out")}}
    submissions = make_class(tmp_path / "class", students)
    assert rows_of(similar(submissions, tmp_path / "out")) == [
        ("ann", "cat", "1.000", "1.000", "engine.py", "engine.py")
    ]
    assert len(similar(submissions, tmp_path / "all", "--common", "0")) == 67  # 66 pairs of copies, and ann with cat


def test_refused_uploads_are_left_out_with_the_class_commands_reasons(tmp_path, capsys):
    submissions = make_class(tmp_path / "class", {"ann": {"engine.py": CLOSURES}})
    (submissions / "ivy").mkdir()
    with zipfile.ZipFile(submissions / "ivy" / "hw.zip", "w") as archive:
        archive.writestr("../../escape.py", "x = 1\n")
    similar(submissions, tmp_path / "out")
    said = capsys.readouterr().out
    assert "ivy: not compared: upload refused:" in said and "students compared: 1" in said


def test_the_class_command_gets_its_pairs_in_its_summary(tmp_path):
    fay = CLOSURES.replace("import math", "import math  # fay's")
    students = {
        "ann": {"engine.py": CLOSURES},
        "cat": {"engine.py": disguise(CLOSURES)},
        "fay": {"engine.py": fay},
        "bob": {"engine.py": RULES},
    }
    submissions = make_class(tmp_path / "class", students)
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.md").write_text("# minigrad: class summary\n", encoding="utf-8")
    _, collected, _ = layouts.collect(submissions, "auto", tmp_path / "staging", out)
    cli.for_class(out, collected)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# minigrad: class summary\n\n## Similar code\n")
    assert "- linked through pairs: ann and fay 100% / 100%; ann and cat 100% / 99%; cat and fay 99% / 100%" in summary
    assert "group of" not in summary and "bob" not in summary
    assert (out / "similarity.csv").is_file() and (out / "similarity.html").is_file()


# ---- evasions: the tokens are the program Python runs ------------------------------------


def semicolons(text: str) -> str:
    """`text` with a `;` after every statement (Python's own tokens find where each ends)."""
    lines = text.split("\n")
    ends, previous = [], None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NEWLINE and previous is not None and previous.string != ":":
            ends.append(previous.end)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token
    for row, column in sorted(ends, reverse=True):
        lines[row - 1] = lines[row - 1][:column] + ";" + lines[row - 1][column:]
    return "\n".join(lines)


def rows_of(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
    """The CSV's rows as (student, other, similarity, other_similarity, file, other_file)."""
    keys = ("student", "other", "similarity", "other_similarity", "file", "other_file")
    return [tuple(row[key] for key in keys) for row in rows]


def in_utf7(text: str) -> bytes:
    """`text` in UTF-7 with its cookie, every character of each line base64-encoded: bytes that
    share nothing with the text's, which Python decodes back to it and runs."""
    lines = (
        b"+" + base64.b64encode(line.encode("utf-16-be")).rstrip(b"=") + b"-" if line else b""
        for line in text.split("\n")
    )
    return b"# -*- coding: utf-7 -*-\n" + b"\n".join(lines)


def test_a_copy_saved_in_utf7_with_its_cookie_is_the_same_program(tmp_path):
    """Python decodes the cookie, so the copy runs (and earns full marks); it is compared as
    Python reads it, beside the plain copy."""
    utf7 = in_utf7(CLOSURES)
    assert b"_backward" not in utf7 and utf7.decode("utf-7").split("\n", 1)[1] == CLOSURES
    students = {"ann": {"engine.py": CLOSURES}, "bob": {"engine.py": RULES}, "pat": {"engine.py": CLOSURES}}
    submissions = make_class(tmp_path / "class", students)
    package = submissions / "uma" / "minigrad"
    shutil.copytree(release.RELEASE, package, ignore=shutil.ignore_patterns("__pycache__", "data"))
    (package / "engine.py").write_bytes(utf7)
    assert rows_of(similar(submissions, tmp_path / "out")) == [
        ("ann", "pat", "1.000", "1.000", "engine.py", "engine.py"),
        ("ann", "uma", "1.000", "1.000", "engine.py", "engine.py"),
        ("pat", "uma", "1.000", "1.000", "engine.py", "engine.py"),
    ]


def test_a_cookie_python_refuses_or_a_slow_codec_is_a_reason_shown(tmp_path, capsys):
    students = {"ann": {"engine.py": CLOSURES}, "cat": {"engine.py": disguise(CLOSURES)}}
    submissions = make_class(tmp_path / "class", students)
    for student, data in {
        "rot": b"# coding: rot13\n" + CLOSURES.encode(),
        "pun": b"# coding: punycode\n" + CLOSURES.encode(),
        "bad": CLOSURES.encode() + b"\n# \xff\xfe\n",
        "open": CLOSURES.encode() + b"\nx = (\n",
        "wide": CLOSURES.encode() + b"\nx = " + b"(" * 5000 + b"\n",  # tokenize took 119 s over 4 MiB of these
        "huge": b"x = 1\n" * 40_000,  # 160,000 tokens, where the reference's package has 9,000 that count
    }.items():
        package = submissions / student / "minigrad"
        shutil.copytree(release.RELEASE, package, ignore=shutil.ignore_patterns("__pycache__", "data"))
        (package / "engine.py").write_bytes(data)
    rows = similar(submissions, tmp_path / "out")
    said = capsys.readouterr().out
    assert rows_of(rows) == [  # open's copy, broken at its end, is read as far as Python reads it
        ("ann", "open", "1.000", "1.000", "engine.py", "engine.py"),
        ("ann", "cat", "0.998", "0.994", "engine.py", "engine.py"),
        ("cat", "open", "0.994", "0.998", "engine.py", "engine.py"),
    ]
    assert "files not read or read in part: 6" in said
    assert "wide: engine.py: not compared: line 258 is over 2000 characters; not read" in said
    assert "huge: engine.py: not compared: over 100000 tokens of Python in this student's files; not read" in said
    assert "open: engine.py: read up to line 258: Python reads no further (" in said  # in the Python version's words
    assert "rot: engine.py: not compared: Python cannot decode it as rot13: 'rot13' is not a text encoding" in said
    assert "pun: engine.py: not compared: its coding cookie names punycode, which is not decoded here" in said
    assert "bad: engine.py: not compared: Python cannot decode it as utf-8: 'utf-8' codec can't decode" in said
    page = (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")
    assert "rot: engine.py: not compared" in page


def test_semicolons_after_every_statement_and_two_reworded_lines_hide_nothing(tmp_path):
    hidden = semicolons(CLOSURES)
    hidden = hidden.replace("self.grad += out.grad;", "self.grad = self.grad + out.grad;", 1)
    hidden = hidden.replace("other.grad += self.data * out.grad;", "other.grad = other.grad + out.grad * self.data;")
    compile(hidden, "engine.py", "exec")  # still Python
    assert hidden.count(";") > 100
    students = {"ann": {"engine.py": CLOSURES}, "bob": {"engine.py": RULES}, "sem": {"engine.py": hidden}}
    rows = similar(make_class(tmp_path / "class", students), tmp_path / "out")
    assert rows_of(rows) == [("ann", "sem", "1.000", "0.983", "engine.py", "engine.py")]


def test_code_moved_into_new_modules_is_found_across_files(tmp_path):
    """The copy's Value is in core.py, its graph functions in graph.py, engine.py one line."""
    value, marker, graph = CLOSURES.partition("\n\ndef topological_order")
    students = {
        "ann": {"engine.py": CLOSURES},
        "bob": {"engine.py": RULES},
        "mo": {"engine.py": "from .core import *  # noqa: F403\n", "core.py": value, "graph.py": marker + graph},
    }
    out = tmp_path / "out"
    rows = similar(make_class(tmp_path / "class", students), out)
    assert rows_of(rows) == [("ann", "mo", "0.987", "1.000", "engine.py", "core.py")]
    page = Page()
    page.feed((out / "similarity.html").read_text(encoding="utf-8"))
    text = "".join(page.text)
    assert "ann: engine.py (lines 70-226) and mo: core.py (lines 70-226): 849 tokens" in text
    assert "ann: engine.py (lines 230-256) and mo: graph.py (lines 3-29): 118 tokens" in text


# ---- framing: pairs, not guilt by association --------------------------------------------


def test_a_student_who_copies_from_two_never_makes_them_a_pair(tmp_path, capsys):
    """ann wrote an engine, bob a network; max handed in both. ann and bob share nothing."""
    nn = (ROOT / "reference" / "minigrad" / "nn.py").read_text(encoding="utf-8")
    students = {
        "ann": {"engine.py": CLOSURES},
        "bob": {"nn.py": nn},
        "max": {"engine.py": CLOSURES, "nn.py": nn},
    }
    rows = similar(make_class(tmp_path / "class", students), tmp_path / "out")
    assert rows_of(rows) == [
        ("ann", "max", "1.000", "0.666", "engine.py", "engine.py"),
        ("bob", "max", "1.000", "0.334", "nn.py", "nn.py"),
    ]
    said = capsys.readouterr().out
    assert "group of" not in said
    assert "linked through pairs: ann and max 100% / 67%; bob and max 100% / 33%" in said


def test_a_gradescope_group_is_named_by_all_its_submitters(tmp_path, capsys):
    """Submission 1 is ann's and bob's together; cat copied it. Before, the copy was reported
    under ann's id alone, and bob was 'compared as ann'."""
    root = tmp_path / "export"
    for number, engine in (("1", CLOSURES), ("2", disguise(CLOSURES)), ("3", RULES)):
        make_class(root, {f"submission_{number}": {"engine.py": engine}})
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Ann\n    :sid: ann\n  - :name: Bob\n    :sid: bob\n"
        "submission_2:\n  :submitters:\n  - :name: Cat\n    :sid: cat\n"
        "submission_3:\n  :submitters:\n  - :name: Dan\n    :sid: dan\n",
        encoding="utf-8",
    )
    rows = similar(root, tmp_path / "out", "--layout", "gradescope")
    assert rows_of(rows) == [("ann + bob", "cat", "0.998", "0.994", "engine.py", "engine.py")]
    said = capsys.readouterr().out
    assert "students compared: 3" in said and "compared as" not in said


# ---- nothing dropped silently --------------------------------------------------------------


def test_a_class_sharing_one_solution_is_said_with_the_defaults(tmp_path, capsys):
    """13 of 15 hand in one solution: past --common 10 it is set aside, and said so."""
    reference = (ROOT / "reference" / "minigrad" / "engine.py").read_text(encoding="utf-8")
    students = {f"s{n:02d}": {"engine.py": reference} for n in range(13)}
    students |= {"bob": {"engine.py": RULES}, "zed": {}}
    out = tmp_path / "out"
    assert similar(make_class(tmp_path / "class", students), out) == []
    said = capsys.readouterr().out
    assert "pairs at or above the threshold: 0" in said
    assert (
        "set aside as common: 1874 of 1982 lines of students' own code (the class's, summed), in 14 students' code; "
        "the largest block, 742 tokens (s00's engine.py lines 121-298), is shared by 13 of 15 students: "
        "a leaked solution?"
    ) in said
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<h2>Set aside as common</h2>" in page and "shared by 13 of 15 students: a leaked solution?" in page


def test_every_release_in_the_history_is_the_releases_code(tmp_path, capsys):
    """Two students kept the given files of an older release: they share nothing of their own."""
    repository = tmp_path / "kit"
    given = repository / "assignments" / "minigrad"
    shutil.copytree(release.RELEASE, given, ignore=shutil.ignore_patterns("__pycache__", "data"))

    def commit(text: str) -> None:
        (given / "plots.py").write_text(text, encoding="utf-8")
        git = ["git", "-C", str(repository), "-c", "user.name=k", "-c", "user.email=k@x"]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "release"], check=True)

    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    old, new = CLOSURES, RULES  # two versions of a given file
    commit(old)
    commit(new)
    students = {"ann": {"plots.py": old}, "bob": {"plots.py": old}, "cat": {"plots.py": new}}
    submissions = make_class(tmp_path / "class", students)
    assert similar(submissions, tmp_path / "out", "--common", "0", "--release", str(given)) == []
    said = capsys.readouterr().out
    versions = len(list(given.glob("*.py"))) + 1  # the given files, and plots.py's first version
    assert f"every version of its .py files in its git history ({versions})" in said
    unversioned = tmp_path / "unversioned"
    shutil.copytree(given, unversioned)
    rows = similar(submissions, tmp_path / "out2", "--common", "0", "--release", str(unversioned))
    assert rows_of(rows) == [("ann", "bob", "1.000", "1.000", "plots.py", "plots.py")]
    assert "its current files only: not a git checkout" in capsys.readouterr().out


def test_the_page_stays_light_and_counts_say_what_they_count(tmp_path, capsys):
    """40 students with one engine and --common 0: 780 pairs, 10 on the page, the next on pages of their own."""
    students = {f"s{n:02d}": {"engine.py": CLOSURES.replace("import math", f"import math  # {n}")} for n in range(40)}
    out = tmp_path / "out"
    rows = similar(make_class(tmp_path / "class", students), out, "--common", "0")
    assert len(rows) == 780
    said = capsys.readouterr().out
    assert "pairs at or above the threshold: 780 (780 of students, 0 with a corpus)" in said
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert page.count('<section id="pair-') == 10 and len(page) < 500_000
    pages = sorted((out / "similarity-pairs").iterdir())
    assert len(pages) == 300 and (out / "similarity-pairs" / "11.html").is_file()
    assert '<a href="similarity-pairs/310.html">310</a>' in page and "similarity-pairs/311.html" not in page


def test_pairs_with_much_code_are_fewer_on_the_page(tmp_path, monkeypatch):
    """Side by side, one pair of these engines is about 30,000 characters: within 70,000, two."""
    monkeypatch.setattr(report, "SHOWN_CHARACTERS", 70_000)
    students = {f"s{n}": {"engine.py": CLOSURES.replace("import math", f"import math  # {n}")} for n in range(5)}
    out = tmp_path / "out"
    assert len(similar(make_class(tmp_path / "class", students), out, "--common", "0")) == 10
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert page.count('<section id="pair-') == 2 and '<a href="similarity-pairs/3.html">3</a>' in page
    assert "The first 2 pairs are shown below; the next 8 each on a page of its own" in page
    assert {path.name for path in (out / "similarity-pairs").iterdir()} == {f"{n}.html" for n in range(3, 11)}
