"""The release's own code, in every version students may have started from, left out of every
comparison as boilerplate.

Students start from `assignments/minigrad/`: the given files entire (`datasets.py`, `draw.py`,
`plots.py`, ...) and the stubs' imports and signatures. Two students who kept them share all of
it and copied nothing, and a student who started from last month's release kept last month's
given files: so every k-gram of every `.py` file the release has held in the repository's
history (read in two git calls: `git log --raw` for the files' blobs, `git cat-file --batch` for
their text), and of the files there now, is removed from each body's fingerprints before any
comparison. What remains is what the students wrote: two untouched releases of any version share
nothing, and a similarity is a share of the student's own code only. A release that is no git
checkout gives its current files only, and the report says so.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graders.course_facts import kit

from . import fingerprints, tokens

RELEASE = kit.ROOT / "assignments" / "minigrad"
GIT_SECONDS = 60


@dataclass(frozen=True)
class Boilerplate:
    hashes: np.ndarray  # sorted k-gram hashes
    versions: int  # versions of the release's files read (the current files included)
    note: str  # where they came from, for the report


def boilerplate(release: Path = RELEASE) -> Boilerplate:
    """The k-gram hashes of every `.py` file of the release, now and in its git history."""
    files = sorted(release.glob("*.py"))
    if not files:
        raise SystemExit(f"{release}: no .py files; --release must name the students' starting package")
    texts = {path.read_bytes() for path in files}
    try:
        history = _history(release)
        note = f"every version of its .py files in its git history ({len(history)})"
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        history = set()
        note = f"its current files only: not a git checkout, or git failed ({error})"
    texts |= history
    hashes = [np.array([], dtype=np.int64)]
    for text in texts:
        try:
            hashes.append(fingerprints.all_hashes([t.symbol for t in tokens.tokens(tokens.decode(text)).kept]))
        except tokens.Unreadable:
            continue  # a version Python could not read either: no student kept it working
    return Boilerplate(np.unique(np.concatenate(hashes)), len(texts), note)


def _git(release: Path, *arguments: str, given: bytes | None = None) -> bytes:
    ran = subprocess.run(
        ["git", "-C", str(release), *arguments], input=given, capture_output=True, timeout=GIT_SECONDS, check=False
    )
    if ran.returncode:
        raise ValueError(ran.stderr.decode(errors="replace").strip().splitlines()[-1:] or f"git {arguments[0]} failed")
    return ran.stdout


def _history(release: Path) -> set[bytes]:
    """The text of every version of the release's `.py` files (directly in it) git recorded."""
    prefix = _git(release, "rev-parse", "--show-prefix").decode().strip()
    log = _git(release, "log", "--all", "--format=", "--raw", "--no-abbrev", "--no-renames", "--", ".")
    blobs = set()
    for line in log.decode("utf-8", "replace").splitlines():
        status, _, path = line.partition("\t")
        fields = status.split()
        name = path.removeprefix(prefix)
        if len(fields) == 5 and "/" not in name and name.endswith(".py") and set(fields[3]) != {"0"}:
            blobs.add(fields[3])
    if not blobs:
        return set()
    batch = _git(release, "cat-file", "--batch", given="".join(f"{blob}\n" for blob in sorted(blobs)).encode())
    texts, at = set(), 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        texts.add(batch[header_end + 1 : header_end + 1 + size])
        at = header_end + 2 + size
    return texts


def modules(release: Path = RELEASE) -> set[str]:
    """The release's module names (`engine.py`, ...): the files students hand in."""
    return {path.name for path in release.glob("*.py")}
