"""Dolos (`@dodona/dolos-lib` from npm, run with the machine's Node) for the benches, installed
the first time one needs it.

Its version is pinned by bench/dolos/package.json and package-lock.json, so every run compares
the same Dolos; `npm ci` installs exactly that lock into build/dolos (git-ignored), and again
only when either file changes. Dolos's parsers are compiled on install (node-gyp), so npm, make,
a C++ compiler and Python must be there. tree-sitter's prebuilt linux binary may need a newer
libstdc++ than the machine has (it asks for GLIBCXX_3.4.31, Debian 12's stops at 3.4.30):
whether Dolos loads is found by running it on two small files, and when it does not, tree-sitter
is built from source once. (tree-sitter's own install script does the same when npm runs it;
npm skips install scripts it is told to, so allowScripts in package.json approves the three
Dolos needs, by name as `npm install-scripts approve` writes them, their versions the lock's.)
Whatever is missing is refused with its fix, never skipped: a peer left out would make the
comparison look better than it is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINNED = Path(__file__).resolve().parent / "dolos"
TARGET = ROOT / "build" / "dolos"
STAMP = TARGET / ".installed"  # the hash of the lock installed there, written once Dolos ran

SCRIPT = """
const { Dolos } = require("@dodona/dolos-lib");
(async () => {
  const files = process.argv.slice(1);  // under `node -e`, the first argument is argv[1]
  const report = await new Dolos({ language: "python" }).analyzePaths(files);
  for (const pair of report.allPairs()) {
    console.log([pair.leftFile.path, pair.rightFile.path, pair.similarity].join("\\t"));
  }
})();
"""
RUNS_WITH = {"node": "nodejs"}  # a tool on PATH, and the Debian package that has it
BUILDS_WITH = {
    "npm": "npm",
    "make": "build-essential",
    "cc": "build-essential",
    "g++": "build-essential",
    "python3": "python3",
}


class DolosMissing(RuntimeError):
    """Dolos cannot run here; the message says what is missing and how to add it."""


def run(files: list[str]) -> str:
    """Dolos's pairs for `files`, one `left<TAB>right<TAB>similarity` line each."""
    ran = subprocess.run(["node", "-e", SCRIPT, *files], cwd=TARGET, capture_output=True, text=True)
    if ran.returncode != 0:
        raise DolosMissing(f"Dolos failed in {TARGET}:\n{ran.stderr.strip()}")
    return ran.stdout


def installed() -> Path:
    """build/dolos with the pinned Dolos, installed (and tree-sitter rebuilt) when needed;
    prints what it did and how long it took."""
    _require(RUNS_WITH)
    lock = hashlib.sha256(b"".join((PINNED / name).read_bytes() for name in ("package.json", "package-lock.json")))
    if STAMP.is_file() and STAMP.read_text() == lock.hexdigest():
        return TARGET
    _require(BUILDS_WITH)
    started = time.perf_counter()
    print(
        f"installing Dolos from {PINNED.relative_to(ROOT)} into {TARGET.relative_to(ROOT)} (npm ci, once)", flush=True
    )
    shutil.rmtree(TARGET, ignore_errors=True)
    TARGET.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PINNED / name, TARGET / name)
    _npm("ci")
    if (error := _load_error()) is not None:
        reason = next((line for line in error.splitlines() if line.startswith("Error")), error.splitlines()[-1])
        print(f"Dolos did not load ({reason}): building tree-sitter from source", flush=True)
        _npm("rebuild", "tree-sitter", build_from_source=True)
        if (error := _load_error()) is not None:
            raise DolosMissing(f"Dolos does not load even with tree-sitter built from source:\n{error}")
    STAMP.write_text(lock.hexdigest())
    print(f"Dolos installed in {time.perf_counter() - started:.0f} s", flush=True)
    return TARGET


def _require(tools: dict[str, str]) -> None:
    absent = [tool for tool in tools if not shutil.which(tool)]
    if absent:
        packages = " ".join(sorted({tools[tool] for tool in absent}))
        raise DolosMissing(
            f"Dolos needs {', '.join(absent)}, not found on PATH: `apt-get install {packages}` (Debian's names), "
            "then run the bench again"
        )


def _npm(*arguments: str, build_from_source: bool = False) -> None:
    # node-gyp-build reads npm's config from the environment: this asks for a build from source
    # without the command-line flag npm 11 warns it will stop passing on.
    env = {**os.environ, "npm_config_build_from_source": "true"} if build_from_source else None
    ran = subprocess.run(["npm", *arguments], cwd=TARGET, env=env, capture_output=True, text=True)
    if ran.returncode != 0:
        log = (ran.stdout + ran.stderr).strip().splitlines()
        raise DolosMissing(f"`npm {' '.join(arguments)}` in {TARGET} failed:\n" + "\n".join(log[-30:]))


def _load_error() -> str | None:
    """Why Dolos cannot compare two small Python files here, or None when it can."""
    with tempfile.TemporaryDirectory(prefix="dolos-probe-") as tmp:
        files = [Path(tmp) / name for name in ("a.py", "b.py")]
        for file in files:
            file.write_text("def f(x):\n    return x * 2 + 1\n", encoding="utf-8")
        try:
            lines = run([str(file) for file in files]).splitlines()
        except DolosMissing as error:
            return str(error)
    return None if len(lines) == 1 else f"Dolos gave {len(lines)} pairs for 2 files"
