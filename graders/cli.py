"""minigrad-grade: grade one submission with the hidden suites and write a Gradescope score.

    minigrad-grade SUBMISSION --out DIR [--parts value,backward,mlp,checkpoint] [--seed N]
                   [--official] [--isolation auto|bwrap|user|local]

The pipeline: choose an isolation level (self-test) -> pick the seed -> run the hidden suites
with pytest (reference here, submission in the child) -> write results.json and report.json.
Exit status 0 whenever a valid grade was written, whatever the score.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import time
from pathlib import Path

import pytest

from . import guard, harness, sandbox, selftest
from .results import Record, gradescope, summary

SUITES = Path(__file__).resolve().parent / "suites"
PARTS = ("value", "backward", "mlp", "checkpoint")
GRADESCOPE_RESULTS = Path("/autograder/results")


class Collector:
    """A pytest plugin that keeps each graded test's declared points, part and message."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.grader_errors: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if "points" not in props or (report.when != "call" and not report.failed):
            return
        if props.get("grader_error"):
            self.grader_errors.append(f"{report.nodeid}: {report.longrepr}")
        name = f"{props['part']}: {props['what']} [{report.nodeid.split('[')[-1].rstrip(']')}]"
        self.records.append(
            Record(name, props["part"], props["points"], report.passed, str(report.longrepr or ""), props["visibility"])
        )


def choose_level(requested: str, official: bool) -> tuple[str, dict]:
    """The strongest level whose self-test passes (or the requested one, checked the same way)."""
    candidates = sandbox.available_levels() if requested == "auto" else [requested]
    workdir = harness.prepare_workdir(None)
    try:
        for level in candidates:
            if official and level == "local":
                break
            with guard.grader_files_hidden(level):
                seen = selftest.probe(level, workdir)
            if selftest.passes(level, seen):
                return level, seen
            if requested != "auto":
                raise SystemExit(f"isolation level {level!r} failed its self-test (child could see: {seen})")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    raise SystemExit("official grading needs the bwrap or user level, and neither passed its self-test")


def run_suites(submission: Path, parts: list[str], seed: int, level: str, out: Path) -> Collector:
    collector = Collector()
    args = [
        *(str(SUITES / f"test_{part}.py") for part in parts),
        f"--submission={submission}", f"--seed={seed}", f"--isolation-level={level}",
        "-c", str(SUITES / "pytest.ini"),
        "-q", "--no-header", "-p", "no:cacheprovider", "--tb=no", "-rN", "--assert=plain",
        "-p", "pytest_jsonreport.plugin", "--json-report", f"--json-report-file={out / 'report.json'}",
        "--json-report-omit=collectors",
    ]  # fmt: skip
    # Only the plugins named here: whatever else is installed (hypothesis, anyio, ...) has no
    # business in a grading run, and loading it triples the start-up time.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with guard.grader_files_hidden(level):
        pytest.main(args, plugins=[collector])
    return collector


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minigrad-grade", description=__doc__.splitlines()[0])
    parser.add_argument("submission", type=Path, help="a folder holding minigrad/, or minigrad/ itself")
    parser.add_argument(
        "--out", type=Path, help="where to write results.json (default on Gradescope: /autograder/results)"
    )
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--seed", type=int, help="replay a grade; official runs draw a secret seed otherwise")
    parser.add_argument("--official", action="store_true", help="refuse the untrusted local level; fail closed")
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    args = parser.parse_args(argv)

    out = args.out or (GRADESCOPE_RESULTS if GRADESCOPE_RESULTS.parent.is_dir() else None)
    if out is None:
        parser.error("--out is required outside Gradescope")
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    out.mkdir(parents=True, exist_ok=True)

    start = time.monotonic()
    level, seen = choose_level(args.isolation, args.official)
    seed = args.seed if args.seed is not None else (secrets.randbelow(2**31) if args.official else 0)
    collector = run_suites(args.submission.resolve(), parts, seed, level, out)
    if collector.grader_errors or not collector.records:
        print("grader error, no grade written:", *collector.grader_errors, sep="\n", file=sys.stderr)
        return 2
    header = [
        f"minigrad hidden tests: {args.submission}",
        f"isolation: {level}{'' if level != 'local' else ' (untrusted: not for official grades)'}, seed: {seed}",
    ]
    text = summary(collector.records, header)
    extra = {"seed": seed, "isolation": level, "trusted": level != "local", "official": args.official,
             "self_test": seen, "parts": parts}  # fmt: skip
    results = gradescope(collector.records, time.monotonic() - start, text, extra)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(text)
    os.chmod(out / "results.json", 0o644)
    return 0
