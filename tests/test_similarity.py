"""minigrad-similar on real cases: engines written independently, a disguised copy, untouched
releases, a copy from a corpus, and a student file whose comments hold HTML.

tests/similarity/ holds two engines written apart, in different shapes: one with closures as
the course teaches, one with a table of derivative rules. The disguised copy is made here from
the first (names changed, methods reordered, comments reworded), as a student hiding a copy would.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path

from graders.class_grading import layouts
from graders.similarity import cli, fingerprints, matching, release

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
    assert pairs(rows)[0] == {"ann", "cat"} and rows[0]["file"] == rows[0]["other_file"] == "engine.py"
    assert float(rows[0]["similarity"]) > 0.9 and float(rows[0]["other_similarity"]) > 0.9
    assert int(rows[0]["matched_tokens"]) > 1000 and re.fullmatch(r"\d+-\d+", rows[0]["lines"])
    assert {"ann", "bob"} not in pairs(rows) and {"bob", "cat"} not in pairs(rows)
    assert not any({"dan", "eve"} & pair for pair in pairs(rows)), "untouched releases share nothing of their own"
    assert "threshold 0.50 (the default)" in capsys.readouterr().out


def test_what_falls_below_the_threshold_is_far_below(tmp_path):
    """The margins, not only the verdicts: independent engines share about a tenth of their
    code, untouched releases none, the disguised copy nearly all."""
    boilerplate = release.boilerplate()
    ann, bob, cat = (fingerprints.fingerprint(text, boilerplate) for text in (CLOSURES, RULES, disguise(CLOSURES)))
    independent = fingerprints.compare(ann, bob)
    assert independent is not None and max(independent.similarity) < matching.THRESHOLD / 2
    copied = fingerprints.compare(ann, cat)
    assert copied is not None and min(copied.similarity) > 0.9
    untouched = fingerprints.fingerprint((release.RELEASE / "engine.py").read_text(encoding="utf-8"), boilerplate)
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
    found = {(row["student"], row["other"], row["other_file"]) for row in rows}
    assert ("gil", "against fall-2025", "fall-2025/zed/minigrad/engine.py") in found
    assert ("gil", "against twin", "twin/zed/minigrad/engine.py") in found
    assert ("ivy", "against fall-2025", "fall-2025/found-online.py") in found, "no module's name: compared with all"
    assert {row["student"] for row in rows} == {"gil", "ivy"}, "corpora are never compared with each other"
    assert not any(row["student"] == "gil" and "found-online" in row["other_file"] for row in rows)


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
    """Twelve students handing in the same engine are past --common (10): that code is
    ignored for everyone, and a pair that shares code of its own is still found."""
    reference = (ROOT / "reference" / "minigrad" / "engine.py").read_text(encoding="utf-8")
    students = {f"s{n:02d}": {"engine.py": reference} for n in range(12)}
    students |= {"ann": {"engine.py": CLOSURES}, "cat": {"engine.py": disguise(CLOSURES)}}
    submissions = make_class(tmp_path / "class", students)
    assert pairs(similar(submissions, tmp_path / "out")) == [{"ann", "cat"}]
    assert len(similar(submissions, tmp_path / "all", "--common", "0")) > 60  # 66 pairs of copies, and more


def test_refused_uploads_are_left_out_with_the_class_commands_reasons(tmp_path, capsys):
    submissions = make_class(tmp_path / "class", {"ann": {"engine.py": CLOSURES}})
    (submissions / "ivy").mkdir()
    with zipfile.ZipFile(submissions / "ivy" / "hw.zip", "w") as archive:
        archive.writestr("../../escape.py", "x = 1\n")
    similar(submissions, tmp_path / "out")
    said = capsys.readouterr().out
    assert "ivy: not compared: upload refused:" in said and "students compared: 1" in said


def test_the_class_command_gets_groups_in_its_summary(tmp_path):
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
    assert "- group of 3: ann, cat, fay" in summary and "bob" not in summary
    assert (out / "similarity.csv").is_file() and (out / "similarity.html").is_file()
