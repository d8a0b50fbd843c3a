"""minigrad-similar: which students share code, with the release's own code left out.

    minigrad-similar SUBMISSIONS --out DIR [--layout auto|folders|nbgrader|gradescope|lms-zip|classroom]
                     [--against DIR ...] [--threshold T] [--common N] [--release DIR] [--jobs N]

The submissions are read as `minigrad-class` reads them (its layouts, ids and refusals, the
grader's intake for the package's files); nothing a student wrote is run. Each student's files
are compared with the other students' files of the same name and with the files of every
`--against` corpus (never with each other). Under DIR: similarity.csv (the pairs at or above
the threshold, highest first) and similarity.html (the pairs ranked, side by side, the matched
code marked). `minigrad-class ... --similarity` writes the same and adds the groups of three or
more students who share code to summary.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders import output_files
from graders.class_grading import layouts, staging
from graders.escape import markdown, say

from . import matching, release, report, sources

STAGING = ".staging-similar-"  # inside --out, for unpacked uploads; removed at the end
TOP = 10  # pairs printed on the terminal


@dataclass(frozen=True)
class Options:
    threshold: float = matching.THRESHOLD
    common: int = matching.COMMON
    against: list[Path] = field(default_factory=list)
    release: Path = release.RELEASE
    jobs: int = field(default_factory=matching.default_jobs)


@dataclass(frozen=True)
class Result:
    matches: list[matching.Match]
    groups: list[list[str]]
    facts: list[str]  # the kit's words, the instructor's folder names quoted: no student text
    left_out: list[str]  # who was not compared and why: student text


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text}: a share between 0 and 1, such as 0.5")
    return value


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, Options]:
    parser = argparse.ArgumentParser(prog="minigrad-similar", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder of submissions, or an LMS zip")
    parser.add_argument("--out", type=Path, required=True, help="where similarity.csv and .html go")
    parser.add_argument("--layout", default="auto", choices=layouts.LAYOUTS)
    corpus = "a corpus to compare with (earlier terms, solutions found online); repeatable"
    parser.add_argument("--against", type=Path, action="append", default=[], metavar="DIR", help=corpus)
    share = f"share of a file's own code found in the other (default {matching.THRESHOLD})"
    parser.add_argument("--threshold", type=_fraction, default=matching.THRESHOLD, help=share)
    common = f"ignore code found in more than N students' files (default {matching.COMMON}; 0: keep all)"
    parser.add_argument("--common", type=int, default=matching.COMMON, help=common)
    parser.add_argument("--release", type=Path, default=release.RELEASE, help="the package students started from")
    parser.add_argument("--jobs", type=int, default=matching.default_jobs(), help="processes that read code (cores)")
    args = parser.parse_args(argv)
    return args, Options(args.threshold, args.common, args.against, args.release, max(1, args.jobs))


def compare(submissions: list[layouts.Submission], out: Path, options: Options) -> Result:
    """Compare the class (and the corpora), write similarity.csv and similarity.html under
    `out`, and return what was found."""
    students, left_out = sources.students(submissions)
    corpora = [
        sources.corpus(folder, label) for folder, label in zip(options.against, sources.corpus_labels(options.against))
    ]
    everyone = students + corpora
    prints = matching.fingerprint_all(everyone, release.boilerplate(options.release), options.jobs)
    modules = release.modules(options.release)
    prints, ignored = matching.without_common(everyone, prints, modules, options.common)
    matches = matching.find(everyone, prints, modules, options.threshold)
    groups = matching.groups(matches)
    default = " (the default)" if options.threshold == matching.THRESHOLD else ""
    idiom = f", and code found in more than {options.common} students' files ({ignored} fingerprints)"
    idiom = idiom if options.common > 0 else ""
    facts = [
        f"threshold {options.threshold:.2f}{default}: a pair of files is listed when either has that share "
        f"of its own code in the other and at least {matching.MIN_MATCHED} tokens match",
        f"students compared: {len(students)}, not compared: {len(left_out)}",
        f"left out: the release's own code ({markdown(options.release.name)}/){idiom}",
        *[f"against {markdown(c.name)}: {len(c.files)} files" for c in corpora],
        f"pairs at or above the threshold: {len(report.pairs(matches))} ({len(matches)} files)",
    ]
    texts = {key: found.text for key, found in prints.items()}
    report.write_csv(out, matches, texts)
    report.write_html(out, matches, texts, facts + left_out, groups)
    return Result(matches, groups, facts, left_out)


def tell(result: Result, out: Path) -> None:
    """The facts, the groups and the first pairs, on the terminal."""
    for line in result.facts + result.left_out:
        say(line)
    for group in result.groups:
        say(f"group of {len(group)}: {', '.join(group)}")
    for n, (a, b, found) in enumerate(report.pairs(result.matches)[:TOP], 1):
        m = found[0]
        say(f"{n}. {a} and {b}: {m.file_a} {m.overlap.similarity[0]:.0%}, {m.file_b} {m.overlap.similarity[1]:.0%}")
    say(f"written: {out / 'similarity.csv'}, {out / 'similarity.html'}")


def for_class(out: Path, submissions: list[layouts.Submission]) -> None:
    """minigrad-class --similarity: the report beside the grades, its section in summary.md.
    The grades are written by then; a failure here is said and costs none of them."""
    try:
        result = compare(submissions, out, Options())
    except Exception as error:  # noqa: BLE001 - any failure: the grade files under --out stand
        say(f"similarity: not written: {type(error).__name__}: {error}", sys.stderr)
        return
    section = report.summary_section(result.matches, result.facts, result.left_out, result.groups)
    summary = out / "summary.md"
    before = summary.read_text(encoding="utf-8") if summary.is_file() and not summary.is_symlink() else ""
    output_files.write_new(out, "summary.md", (before + section).encode())
    tell(result, out)


def main(argv: list[str] | None = None) -> int:
    args, options = parse(argv)
    started = time.perf_counter()
    try:
        with staging.uploads(args.submissions, args.out, args.layout, STAGING) as (layout, submissions, warnings):
            for warning in warnings:
                say(f"warning: {warning}", sys.stderr)
            result = compare(submissions, args.out, options)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM; staging removed
        print("\ninterrupted: nothing written", file=sys.stderr)
        return 130
    tell(result, args.out)
    print(f"{layout} layout, {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
