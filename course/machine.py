"""What the kit needs from the machine beyond its Python packages, installed where it can be.

    python3 -m course.machine [--stamp FILE] PIECE...     PIECE: venv, bubblewrap, graphviz, browser

Run by make, with the Python that makes `.venv`, before anything else: it refuses a Python
older than the kit supports, then finds which pieces are missing, and
  - as root with apt-get: installs them (`apt-get update`, then `apt-get install -y
    --no-install-recommends` of the missing ones only);
  - otherwise: prints the one command that would, and what works without them.
With --stamp it then creates FILE (make's mark that this was done once; delete it to check
again). Only the standard library, so it runs before `.venv` exists.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

OLDEST = (3, 10)  # Ubuntu 22.04's 3.10 (Gradescope's usual image); CI grades under 3.10 to 3.13 (.ci/run)
PACKAGES = {
    "venv": "python3-venv",
    "bubblewrap": "bubblewrap",
    "graphviz": "graphviz",
    "browser": "chromium chromium-driver",  # the page tests open feedback.html and summary.html in it
}
COMMAND = {"bubblewrap": "bwrap", "graphviz": "dot", "browser": "chromedriver"}  # each piece's, once installed
WITHOUT = {
    "venv": "`python3 -m venv` cannot make .venv",
    "bubblewrap": "grading uses the `user` level as root, the untrusted `local` level otherwise",
    "graphviz": "the tests that draw a graph fail (make check and grading do not need it)",
    "browser": "the tests that open the feedback and class pages in a browser fail",
}


def missing(piece: str) -> bool:
    if piece == "venv":  # Debian's python3 makes a venv only with python3-venv (ensurepip)
        ran = subprocess.run([sys.executable, "-c", "import ensurepip, venv"], capture_output=True)
        return ran.returncode != 0
    return shutil.which(COMMAND[piece]) is None


def install(packages: list[str]) -> None:
    """apt-get update, then install `packages` (apt says why on stderr when it cannot)."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    update = ["apt-get", "update", "-qq"]
    add = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]
    for command in (update, add):
        if subprocess.run(command, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            return


def main(argv: list[str] | None = None) -> int:
    if sys.version_info < OLDEST:
        print(
            f"minigrad needs Python >= {'.'.join(map(str, OLDEST))}, and {sys.executable} is "
            f"{sys.version.split()[0]}: install a newer python3, or name one: make PYTHON=python3.12 ...",
            file=sys.stderr,
        )
        return 1
    parser = argparse.ArgumentParser(prog="python3 -m course.machine", description=__doc__.splitlines()[0])
    parser.add_argument("--stamp", type=Path, help="create this file once done")
    parser.add_argument("pieces", nargs="*", choices=sorted(PACKAGES))
    args = parser.parse_args(argv)
    absent = [piece for piece in args.pieces if missing(piece)]
    packages = [package for piece in absent for package in PACKAGES[piece].split()]
    if absent and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {', '.join(packages)} (once; apt-get as root)", file=sys.stderr)
        install(packages)
        absent = [piece for piece in absent if missing(piece)]  # what apt did not bring, whatever it said
        packages = [package for piece in absent for package in PACKAGES[piece].split()]
    if absent:
        print(
            f"not installed: {', '.join(packages)}; to install: sudo apt-get install --no-install-recommends "
            f"{' '.join(packages)}. Meanwhile:",
            *(f"  {piece}: {WITHOUT[piece]}" for piece in absent),
            sep="\n",
            file=sys.stderr,
        )
    if "venv" in absent:
        return 1
    if args.stamp:
        args.stamp.parent.mkdir(parents=True, exist_ok=True)
        args.stamp.touch()
    return 0


if __name__ == "__main__":
    sys.exit(main())
