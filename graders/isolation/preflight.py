"""What a grading proves before it grades, and nothing else: an isolation level that passes
its self-test, and a child at that level that imports what the course promises.

    python -m graders.isolation.preflight [--isolation auto|bwrap|user|local] [--official]

minigrad-class runs it once before a class, so a machine that cannot grade refuses the class
up front (exit 2, the reason on stderr) instead of failing every student, or worse, grading
every student's NumPy engine 0. It asks what a class's gradings ask (`--in-class`): a user
level whose child would share this machine's network is refused.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from contextlib import nullcontext

from . import identity, sandbox, selftest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graders.isolation.preflight", description=__doc__.splitlines()[0])
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    parser.add_argument("--official", action="store_true", help="refuse the untrusted local level, as grading does")
    args = parser.parse_args(argv)
    with identity.claimed() if os.geteuid() == 0 else nullcontext(None) as who:
        isolation, _, _ = selftest.choose_level(args.isolation, args.official, who, True)  # exits 2, said why
        if problem := selftest.missing_imports(isolation, who):
            print(f"grading refused: {problem}", file=sys.stderr)
            return 2
    return 0


def check(isolation: str, official: bool) -> int:
    """main() in a process of its own, as each grading runs: its exit status (the reason for a
    refusal goes to stderr)."""
    official_only = ["--official"] if official else []
    command = [sys.executable, "-m", "graders.isolation.preflight", "--isolation", isolation, *official_only]
    return subprocess.run(command, stdin=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
