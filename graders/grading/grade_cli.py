"""minigrad-grade: grade one submission with the hidden suites and write a Gradescope score.

    minigrad-grade SUBMISSION --out DIR [--parts checkpoint,value,backward,mlp,tensor] [--seed N]
                   [--official [--secret-file F]] [--in-class] [--isolation auto|bwrap|user|local]
                   [--check-imports] [--visibility after_due_date|after_published|visible|hidden]
                   [--reference-cache DIR] [--refused NOTE ...] [--label NAME]

Only the command line is here: it is parsed into a frozen `grade.Options`, which grade.py's
pipeline grades. Exit status 0 whenever a valid grade was written, whatever the score.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.course_facts import course_seed
from graders.course_facts.parts import PARTS
from graders.isolation import sandbox

from .grade import VISIBILITIES, Options, run

GRADESCOPE_RESULTS = Path("/autograder/results")


def main(argv: list[str] | None = None) -> int:
    """Parse minigrad-grade's command line into `Options` and grade (see grade.py)."""
    parser = argparse.ArgumentParser(prog="minigrad-grade", description=__doc__.splitlines()[0])
    parser.add_argument("submission", type=Path, help="a folder holding minigrad/, or minigrad/ itself")
    parser.add_argument(
        "--out", type=Path, help="where to write results.json (default on Gradescope: /autograder/results)"
    )
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--seed", type=int, help="replay a grade (default 0; with --official, the course's seed)")
    parser.add_argument(
        "--official", action="store_true", help="the course's seed; refuse the untrusted local level; fail closed"
    )
    parser.add_argument(
        "--in-class",
        action="store_true",
        help="one of minigrad-class's gradings (it passes this): as with --official, the user level is refused "
        "where its child cannot get a network of its own",
    )
    parser.add_argument("--secret-file", type=Path, help=f"the course secret (default: ${course_seed.SECRET_VARIABLE})")
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    parser.add_argument(
        "--check-imports",
        action="store_true",
        help="first, a visible 0-point test: where the files were found and whether each module imports; "
        "when no package is found, only that test",
    )
    parser.add_argument(
        "--visibility", choices=VISIBILITIES, help="when students see the hidden tests (default: after_due_date)"
    )
    parser.add_argument(
        "--reference-cache",
        type=Path,
        help="a folder keeping the reference's answers for gradings with the same seed (default: "
        "$XDG_CACHE_HOME or ~/.cache, in minigrad-grader/reference; none at the local level)",
    )
    parser.add_argument(
        "--refused",
        action="append",
        default=[],
        metavar="NOTE",
        help="a file refused before SUBMISSION was copied out of the upload (minigrad-class packs uploads); "
        "reported with the grader's own refusals",
    )
    parser.add_argument("--label", help="the submission's name in the output (default: its path)")
    args = parser.parse_args(argv)
    out = args.out or (GRADESCOPE_RESULTS if GRADESCOPE_RESULTS.parent.is_dir() else None)
    if out is None:
        parser.error("--out is required outside Gradescope")
    asked = {p.strip() for p in args.parts.split(",") if p.strip()}
    if unknown := asked - set(PARTS):
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    if (seed := course_seed.resolve(args.seed, args.official, args.secret_file)) is None:
        print(course_seed.NO_SECRET, file=sys.stderr)
        return 2
    options = Options(
        seed=seed,
        parts=tuple(part for part in PARTS if part in asked),
        isolation=args.isolation,
        official=args.official,
        in_class=args.in_class,
        check_imports=args.check_imports,
        visibility=args.visibility,
        reference_cache=args.reference_cache,
        refused=tuple(args.refused),
        label=args.label,
    )
    return run(args.submission, out, options)


if __name__ == "__main__":
    sys.exit(main())
