"""minigrad-similar: which students share code, with the release's own code left out.

    minigrad-similar SUBMISSIONS --out DIR [--layout auto|folders|nbgrader|gradescope|lms-zip|classroom]
                     [--against DIR ...] [--threshold T] [--common N] [--release DIR] [--jobs N]

The submissions are read as `minigrad-class` reads them (its layouts, ids and refusals, the
grader's intake for the package's files); nothing a student wrote is run. Each student's files
are one body of code, compared with every other student's and with every work of every
`--against` corpus (never with each other). Under DIR: similarity.csv (the pairs at or above the
threshold, highest first), similarity.html (what was set aside as common, the pairs ranked, the
first side by side with the matched code marked) and similarity-pairs/ (a page for each further
pair). `minigrad-class ... --similarity` writes the same and adds its facts and highest pairs
to summary.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import markdown, say
from graders.uploads import layouts, staging

from . import common, matching, release, report, sources

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
    facts: list[str]  # the kit's words, the instructor's folder names quoted: no student text
    aside: common.SetAside | None  # what was set aside as common (None with --common 0)
    students: int
    left_out: list[str]  # who or what was not compared and why: student text


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
    share = f"share of a student's own code found in the other's (default {matching.THRESHOLD})"
    parser.add_argument("--threshold", type=_fraction, default=matching.THRESHOLD, help=share)
    common_help = f"set aside code found in more than N students' code (default {matching.COMMON}; 0: keep all)"
    parser.add_argument("--common", type=int, default=matching.COMMON, help=common_help)
    parser.add_argument("--release", type=Path, default=release.RELEASE, help="the package students started from")
    parser.add_argument("--jobs", type=int, default=matching.default_jobs(), help="processes that read code (cores)")
    args = parser.parse_args(argv)
    return args, Options(args.threshold, args.common, args.against, args.release, max(1, args.jobs))


def compare(submissions: list[layouts.Submission], out: Path, options: Options) -> Result:
    """Compare the class (and the corpora), write the report under `out`, and return what was found."""
    students, left_out = sources.students(submissions)
    labels = sources.corpus_labels(options.against)
    corpora = [sources.corpus(folder, label) for folder, label in zip(options.against, labels)]
    everyone = students + [work for works in corpora for work in works]
    given = release.boilerplate(options.release)
    read = matching.read_all(everyone, given.hashes, options.jobs)
    unreadable = [f"{source.name}: {why}" for source in everyone for why in read[source.name].unreadable]
    bodies = {name: found.body for name, found in read.items()}
    frequent = matching.common_keys(everyone, bodies, options.common)
    aside = common.set_aside({s.name: bodies[s.name] for s in students}, frequent) if options.common > 0 else None
    bodies = {name: found.without(set(frequent)) for name, found in bodies.items()}
    matches = matching.find(everyone, bodies, options.threshold)
    default = " (the default)" if options.threshold == matching.THRESHOLD else ""
    idiom = f"code found in more than {options.common} students' code" if options.common > 0 else "nothing else"
    facts = [
        f"threshold {options.threshold:.2f}{default}: a pair is listed when either student has that share of their "
        f"own code in the other's and at least {matching.MIN_MATCHED} tokens match; each student's files are one body",
        f"students compared: {len(students)}, not compared: {len(left_out)}, files not read or read in part: "
        f"{len(unreadable)} (a group submission is compared once, named by all its submitters)",
        f"left out: the release's own code ({markdown(options.release.name)}/: {given.note}); set aside: {idiom}",
        *[f"against {markdown(label)}: {len(works)} works" for label, works in zip(labels, corpora)],
        f"pairs at or above the threshold: {len(matches)} "
        f"({sum(not m.corpus for m in matches)} of students, {sum(m.corpus for m in matches)} with a corpus)",
    ]
    report.write_csv(out, matches, bodies)
    report.write_html(out, matches, bodies, facts + left_out + unreadable, aside, len(students))
    return Result(matches, facts, aside, len(students), left_out + unreadable)


def tell(result: Result, out: Path) -> None:
    """The facts, what was set aside, the linked pairs and the first pairs, on the terminal."""
    for line in result.facts:
        say(line)
    if result.aside is not None:
        say(report.set_aside_fact(result.aside, result.students))
    for line in result.left_out:
        say(line)
    for chain in matching.linked(result.matches):
        say(f"linked through pairs: {report.chain_text(chain, most=report.CHAIN)}")
    for n, m in enumerate(result.matches[:TOP], 1):
        share_a, share_b = m.overlap.similarity
        say(f"{n}. {m.a} and {report.other(m)}: {share_a:.0%} / {share_b:.0%}, {m.overlap.matched} tokens")
    say(f"written: {out / 'similarity.csv'}, {out / 'similarity.html'}")


def for_class(out: Path, submissions: list[layouts.Submission]) -> None:
    """minigrad-class --similarity: the report beside the grades, its section in summary.md.
    The grades are written by then; a failure here is said and costs none of them."""
    try:
        result = compare(submissions, out, Options())
    except Exception as error:  # noqa: BLE001 - any failure: the grade files under --out stand
        say(f"similarity: not written: {type(error).__name__}: {error}", sys.stderr)
        return
    section = report.summary_section(result.matches, result.facts, result.left_out, result.aside, result.students)
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
