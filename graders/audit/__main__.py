"""python -m graders.audit: make every mutant, grade them all, write the report.

    python -m graders.audit [--jobs 2] [--out build/audit] [--cap 10] [--seeds 0,1,2]
                            [--only NAME ...]

Exit status 1 when a target is missed (a mutant killed by the public checks only, or fewer
than 95% of the counted mutants killed by the hidden grader); the report says which.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import asdict
from pathlib import Path

from graders.course_facts.kit import ROOT

from . import allowed, report, stored
from .mutants import capped, package_mutants
from .run import Graded, grade_all

DEFAULT_CAP = 10  # mutants per function: keeps `make audit` under 15 minutes on 2 cores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.audit", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="gradings at once (default 2)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "audit")
    parser.add_argument("--cap", type=int, default=DEFAULT_CAP, help="mutants per function at most (0: no cap)")
    parser.add_argument("--seeds", default="0,1,2", help="the grading seeds; the first decides a kill")
    parser.add_argument("--only", nargs="*", default=[], help="only these functions (qualified names)")
    parser.add_argument(
        "--report-only", action="store_true", help="write the report again from the last run's results.json"
    )
    args = parser.parse_args(argv)
    results = args.out / "results.json"
    if args.report_only:
        graded, stored_settings = stored.load(results)
        return finish(graded, report.Settings(**stored_settings), args.out)
    started, cpu = time.monotonic(), children_cpu()
    seeds = [int(s) for s in args.seeds.split(",")]
    mutants = package_mutants(ROOT / "reference" / "minigrad")
    if args.only:
        mutants = [m for m in mutants if m.function in args.only]
    mutants, capped_functions = capped(mutants, args.cap or None)
    print(f"audit: {len(mutants)} mutants, {args.jobs} jobs, seeds {seeds}", flush=True)
    done = []

    def progress(graded: Graded) -> None:
        done.append(graded)
        if len(done) % 25 == 0 or len(done) == len(mutants):
            print(f"  {len(done)}/{len(mutants)} graded, {time.monotonic() - started:.0f} s", flush=True)

    graded = grade_all(mutants, seeds, args.jobs, args.out / "work", progress)
    settings = report.Settings(
        seeds, args.jobs, args.cap or None, capped_functions, time.monotonic() - started, children_cpu() - cpu
    )
    stored.dump(graded, asdict(settings), results)
    return finish(graded, settings, args.out)


def finish(graded: list[Graded], settings: report.Settings, out: Path) -> int:
    audit = report.Audit(graded, allowed.load(), settings)
    report.write(audit, out)
    print(report.markdown(audit).split("\n## ")[0])
    print(f"wrote {out / 'report.md'} and report.csv; graded in {settings.seconds:.0f} s")
    return 0 if audit.passes() else 1


def children_cpu() -> float:
    """CPU seconds of every finished subprocess (the gradings and what they ran)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
