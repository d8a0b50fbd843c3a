"""feedback.html in a real browser, and feedback.md as the platforms render it.

Two students of the sample class are graded here, as the grader grades them: Quinn (one bug,
mse_loss sums) and Ben (parts 3 and 4 still stubs: many root causes), Ben handed in late
under a penalty. Their pages are opened in Chromium (tests/browser.py) as a student meets them:
on a laptop, on a phone and printed. Screenshots are kept under build/screenshots/.
"""

from __future__ import annotations

import html.parser
import re
import shutil
import unicodedata
from pathlib import Path

import mistune
import pytest
from selenium.webdriver.common.by import By

from course.submissions import materialize
from graders.class_grading import feedback, feedback_content
from graders.class_grading.standing import Standing
from graders.reporting.results import read
from tests.browser import driver, open_page  # noqa: F401

from grading import ROOT, grade, needs_isolation

EXAMPLES = ROOT / "examples" / "submissions"
LATE = {
    "submitted_at": "2026-11-23T04:30:00+00:00",
    "due": "2026-11-21T08:00:00+00:00",
    "late": "late",
    "hours_late": "44.5",
    "penalty": "2.4",
}
PARSE = mistune.create_markdown(renderer=None, plugins=["table", "url", "strikethrough"])


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict, Path]]:
    """Quinn's and Ben's results.json, and the feedback.html of each (Ben's with his lateness)."""
    found = {}
    for name in ("quinn-mse-sums", "ben-partial"):
        work = tmp_path_factory.mktemp(name)
        _, results = grade(materialize(EXAMPLES / f"{name}.json", work / "upload"), work / "out", seed=0)
        grade_ = read(results)
        keys = LATE if name.startswith("ben") else {}
        standing = Standing(name, "graded", grade_.base, grade_.max_score, grade_.bonus, grade_.parts, keys)
        assert feedback.write(work, name, results, standing) is None
        found[name] = (results, work / "feedback.html")
    return found


def shown(page, selector: str) -> list[str]:
    return [element.text for element in page.driver.find_elements(By.CSS_SELECTOR, selector)]


def assert_numbers_are_the_grades(page, results: dict) -> None:
    """The total, each part's points and the bonus on the page are results.json's."""
    grade = read(results)
    assert shown(page, "main > p strong")[0] == f"Total: {grade.total}"
    rows = page.driver.find_elements(By.CSS_SELECTOR, "#score-table tbody tr")
    parts = {}
    for row in rows[: len(grade.parts)]:
        got, most = row.find_element(By.CSS_SELECTOR, "td").text.split(" / ")
        parts[row.find_element(By.CSS_SELECTOR, "th").text] = (float(got), float(most))
    assert parts == grade.parts
    assert rows[-1].find_element(By.CSS_SELECTOR, "td").text == f"+{grade.bonus:g}"
    for row in rows[: len(grade.parts)]:  # the result in words and a symbol, not in colour alone
        assert re.fullmatch(r"\u2713 full marks|\u2717 [0-9.]+ lost", row.find_elements(By.CSS_SELECTOR, "td")[1].text)


def assert_readable(page) -> None:
    """No console error, headings in order, no script, colours that meet WCAG AA."""
    assert page.console_errors() == []
    levels = [int(h.tag_name[1]) for h in page.driver.find_elements(By.CSS_SELECTOR, "h1, h2, h3, h4, h5, h6")]
    assert levels[0] == 1 and levels.count(1) == 1
    assert all(later <= earlier + 1 for earlier, later in zip(levels, levels[1:]))
    assert page.driver.find_elements(By.TAG_NAME, "script") == []
    assert min(contrasts(page)) >= 4.5


def contrasts(page) -> list[float]:
    """WCAG's contrast ratio of each text element's colour with the page's background."""
    return page.driver.execute_script(
        """
        const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number).map(c => c / 255)
            .map(c => c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
        const lum = s => { const [r, g, b] = rgb(s); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
        const back = lum(getComputedStyle(document.body).backgroundColor);
        return [...document.querySelectorAll('.full, .lost, .muted, code, pre, p, td, th')].map(e => {
            const fore = lum(getComputedStyle(e).color);
            return (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05);
        });
        """
    )


@needs_isolation
def test_one_bug_page(graded, open_page) -> None:  # noqa: F811
    results, path = graded["quinn-mse-sums"]
    page = open_page(path)
    assert_readable(page)
    assert_numbers_are_the_grades(page, results)
    sections = page.driver.find_elements(By.CSS_SELECTOR, "details.cause")
    assert len(sections) == len(results["extra_data"]["root_causes"])
    assert sections[0].get_attribute("open") is not None
    assert sections[0].find_element(By.TAG_NAME, "pre").is_displayed()
    title = sections[0].find_element(By.TAG_NAME, "h3")
    assert title.text == "1. " + results["extra_data"]["root_causes"][0]["title"].replace("`", "")
    assert title.find_elements(By.TAG_NAME, "code")  # the function's name, as code
    assert page.driver.find_elements(By.ID, "hand-in") == []  # no times in this class: nothing said of them
    page.screenshot("feedback-one-bug")


@needs_isolation
def test_many_bugs_page_folds_and_says_the_lateness(graded, open_page) -> None:  # noqa: F811
    results, path = graded["ben-partial"]
    page = open_page(path)
    assert_readable(page)
    assert_numbers_are_the_grades(page, results)
    sections = page.driver.find_elements(By.CSS_SELECTOR, "details.cause")
    assert len(sections) == len(results["extra_data"]["root_causes"]) >= 3
    assert [s.get_attribute("open") is not None for s in sections] == [True] + [False] * (len(sections) - 1)
    closed = sections[1].find_element(By.TAG_NAME, "pre")
    assert not closed.is_displayed()
    sections[1].find_element(By.TAG_NAME, "summary").click()
    assert sections[1].get_attribute("open") is not None and closed.is_displayed()
    base = read(results).base
    after = f"{round(max(0.0, base - 2.4), 6):g} / 122 + {read(results).bonus:g} bonus"
    assert shown(page, "#hand-in + ul li") == [
        "Submitted: 2026-11-23T04:30:00+00:00",
        "Due: 2026-11-21T08:00:00+00:00",
        "Late by 44.5 hours.",
        "Late penalty: -2.4",
        f"Total after the late penalty: {after}",
    ]
    page.screenshot("feedback-many-bugs")
    page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        drawn = "return arguments[0].checkVisibility() && arguments[0].getBoundingClientRect().height > 0"
        assert all(page.driver.execute_script(drawn, s.find_element(By.TAG_NAME, "pre")) for s in sections[2:])
    finally:
        page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


@needs_isolation
def test_the_page_reads_on_a_phone(graded, open_page) -> None:  # noqa: F811
    _, path = graded["ben-partial"]
    page = open_page(path, "phone")
    assert page.console_errors() == []
    wide, window = page.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert wide <= window
    page.screenshot("feedback-phone")


@needs_isolation
def test_the_dark_scheme_keeps_the_contrast(graded, open_page) -> None:  # noqa: F811
    _, path = graded["quinn-mse-sums"]
    page = open_page(path)
    light = page.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    page.driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    try:
        assert page.driver.execute_script("return getComputedStyle(document.body).backgroundColor") != light
        assert min(contrasts(page)) >= 4.5
    finally:
        page.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# --- feedback.md ------------------------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "# heading",
    "[link](http://evil)",
    "![img](x)",
    "http://evil.example/x www.evil.example a@b.example",
    "``` `` ` backticks",
    "*emphasis* _under_ ~~struck~~ $math$ :smile:",
    "\\*escaped\\* &amp; &lt;b&gt;",
    "zero\u200bwidth\u2060joiner\ufeffbom\u202eoverride",
]


def hostile_results() -> dict:
    """A results.json whose every student-made string is an attack: test names, messages, a
    root cause's title, a note, a refused file's path."""
    tests = [
        {"name": f"value: {text} [t{i}]", "tags": ["value"], "score": 0.0, "max_score": 1.0, "status": "failed"}
        | {"output": f"your code raised ValueError: {text}\n    got: 0.14447400000000002"}
        for i, text in enumerate(HOSTILE)
    ]
    return {
        "score": 0.0,
        "max_score": float(len(HOSTILE)),
        "output": "\n".join(f"note: value: {text}" for text in HOSTILE),
        "tests": tests,
        "extra_data": {
            "refused": [
                f"minigrad/{text}.py: a symbolic link, which the grader never follows; not graded" for text in HOSTILE
            ],
            "root_causes": [
                {"title": f"`{text}`'s backward ({text}:3)", "tests": [t["name"]], "note": []}
                for text, t in zip(HOSTILE, tests)
            ],
        },
    }


def test_only_float_noise_is_rounded_and_the_exact_text_is_kept() -> None:
    """A number printed with every digit of a float is shown to 12 significant digits, with its
    exact text beside it; a number the judge wrote shorter stays exactly as written."""
    assert feedback_content.readable("expected: 1.50, got: 0.30000000000000004 (-1.4202402)") == [
        ("expected: 1.50, got: ", None),
        ("0.3", "0.30000000000000004"),
        (" (-1.4202402)", None),
    ]


def outside_code(markdown: str) -> str:
    """The Markdown without its fenced blocks and code spans: the prose a reader sees as written."""
    prose = re.sub(r"^(`{3,})\n.*?\n\1$", "", markdown, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", prose)


def nodes(markdown: str) -> list[dict]:
    found, stack = [], list(reversed(PARSE(markdown)))
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.get("children", [])))
    return found


@needs_isolation
@pytest.mark.parametrize("name", ["quinn-mse-sums", "ben-partial"])
def test_feedback_md_renders_as_written(graded, name: str) -> None:
    """No backslash escape outside code, no invisible character, the failing tests one per line."""
    results, path = graded[name]
    written = (path.parent / "feedback.md").read_text()
    assert "\\" not in outside_code(written)
    assert [char for char in written if unicodedata.category(char) == "Cf"] == []
    items = [n for n in nodes(written) if n["type"] == "list_item"]
    named = {test["name"] for test in results["tests"] if test["status"] == "failed"}
    listed = {n["children"][0]["children"][0].get("raw") for n in items if n["children"][0]["children"]}
    first = {f"{group['tests'][0]}" for group in results["extra_data"]["root_causes"]}
    assert named - first <= listed


def test_hostile_student_text_forms_nothing() -> None:
    results = hostile_results()
    written = feedback.markdown_page("s1", results)
    found = nodes(written)
    assert not {"link", "image", "inline_html", "block_html"} & {node["type"] for node in found}
    headings = [node for node in found if node["type"] == "heading"]
    assert [node["attrs"]["level"] for node in headings] == [1, 2, 2, 2, *[3] * len(HOSTILE)]
    assert "\\" not in outside_code(written)
    assert [char for char in written if unicodedata.category(char) == "Cf"] == []
    assert "`minigrad/‹script›alert(1)‹/script›.py` was refused: a symbolic link" in written
    assert "Exact values: `0.14447400000000002`" in written and "got: 0.144474\n" in written

    tags: list[tuple[str, list]] = []

    class Tags(html.parser.HTMLParser):
        def handle_starttag(self, tag: str, attrs: list) -> None:
            tags.append((tag, attrs))

    Tags().feed(feedback.page("s1", results))
    allowed = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p", "strong", "dl", "dt"}
    allowed |= {"dd", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "code", "pre", "span", "details"}
    assert {tag for tag, _ in tags} <= allowed | {"summary"}
    assert not [name for _, attrs in tags for name, _ in attrs if name.startswith("on") or name in ("src", "href")]


@needs_isolation
@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("refused-link-nn", "a symbolic link, which the grader never follows (upload the file itself); not graded"),
        ("refused-oversized-nn", "600 KiB, over the 512 KiB the grader reads of one file; not graded"),
    ],
)
def test_a_refused_file_is_said_refused_with_its_reason(tmp_path: Path, spec: str, reason: str) -> None:
    """A link or a file over the cap is refused: the upload's first test, the feedback's notes and
    the root cause say so, with the reason, and never call the file missing."""
    upload = materialize(ROOT / "tests" / "submissions" / f"{spec}.json", tmp_path / "upload")
    _, results = grade(upload, tmp_path / "out", "--check-imports", "--parts", "mlp")
    said = f"`minigrad/nn.py` was refused: {reason}"
    assert results["extra_data"]["refused"] == [f"minigrad/nn.py: {reason}"]
    first = results["tests"][0]["output"].splitlines()
    assert first[1] == said and not [line for line in first if line.startswith("missing:")]
    written = feedback.markdown_page("s1", results)
    assert f"## Notes\n\n- {said}\n" in written
    assert f"### 1. {said}\n" in written and "is missing" not in written
    assert f"<li><code>minigrad/nn.py</code> was refused: {reason}</li>" in feedback.page("s1", results)


@needs_isolation
def test_a_package_that_is_a_link_is_said_refused(tmp_path: Path) -> None:
    """`minigrad` itself a link (to the reference): nothing is graded, and the upload's first test
    and the feedback say the folder was refused and why."""
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "minigrad").symlink_to(ROOT / "reference" / "minigrad")
    _, results = grade(tmp_path / "upload", tmp_path / "out", "--check-imports", "--parts", "value")
    said = "`minigrad/` was refused: a symbolic link, not a folder; upload the files themselves"
    assert results["tests"][0]["output"].splitlines()[1:] == ["Your upload holds: minigrad", said]
    assert f"## Notes\n\n- {said}\n" in feedback.markdown_page("s1", results)


@needs_isolation
def test_a_member_an_archive_left_out_is_said_refused_where_the_grader_calls_it_missing(tmp_path: Path) -> None:
    """The class command's archives keep the package where the student had it (hw1/minigrad/)
    and hand the grader what they left out (--refused): the file the child lacks as
    `minigrad/nn.py` is the one refused as `hw1/minigrad/nn.py`, and every test that needed it,
    its root cause and the feedback say so, with the reason."""
    shutil.copytree(ROOT / "reference" / "minigrad", tmp_path / "upload" / "minigrad")
    (tmp_path / "upload" / "minigrad" / "nn.py").unlink()
    refused = "hw1/minigrad/nn.py: over 512 KiB, the most the grader reads; left out"
    _, results = grade(tmp_path / "upload", tmp_path / "out", "--parts", "mlp", "--refused", refused)
    said = "`hw1/minigrad/nn.py` was refused: over 512 KiB, the most the grader reads; left out"
    assert results["extra_data"]["root_causes"][0]["title"] == said
    needing = [test["output"] for test in results["tests"] if "nn.py" in test["output"]]
    assert len(needing) == len(results["extra_data"]["root_causes"][0]["tests"])
    assert all(
        "`hw1/minigrad/nn.py` was refused, so this could not run (see the notes under the score table)" in said
        and "is missing" not in said
        for said in needing
    )
    written = feedback.markdown_page("s1", results)
    assert f"- {said}\n" in written and f"### 1. {said}\n" in written and "is missing" not in written
