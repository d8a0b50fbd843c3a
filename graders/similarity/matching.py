"""Which files are compared, which pairs are reported, and the groups they form.

Students hand in the same modules (`engine.py`, `nn.py`, ...), since the grader imports them
by name: each file is compared with the other students' file of that name. A corpus file is
compared with the students' files of its name, or, when its name is none of the release's
modules (a solution found online kept as `micrograd_engine.py`), with every student file.
Corpus files are never compared with each other.

Code that many students wrote alike is the course's idiom, not a copy: every closure-based
engine says `out = Value(...)`, then `def _backward(): self.grad += ... * out.grad`. As MOSS
does (its `-m`), a fingerprint found in the files of more than COMMON students is ignored
for everyone; a class all of whose members copied one solution is then missed, which is what
`--common 0` (keep everything) and `--against` (the solution itself) are for.

A pair is reported when either file's share of its own code found in the other reaches the
threshold (one side may have copied a part of the other), and at least MIN_MATCHED characters
of normalised code match, so a student who wrote three lines is not 100% like everyone who
wrote the same three lines. The order is fixed (highest share, then most matched, then
names), so the same class gives the same report.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np

from .fingerprints import Fingerprint, Overlap, compare, fingerprint
from .sources import Source

THRESHOLD = 0.5  # the default share of a file's own code found in the other
MIN_MATCHED = 80  # characters of normalised code, about three lines of a method
COMMON = 10  # students: a passage in more files than this is the course's idiom (MOSS's default)
PARALLEL_FROM = 40  # files; fewer are fingerprinted in this process (a pool costs more)


@dataclass(frozen=True)
class Match:
    """Two files that share code: `a` is always a student, `b` a student or a corpus."""

    a: str
    b: str
    file_a: str
    file_b: str
    overlap: Overlap
    corpus: bool = False

    @property
    def score(self) -> float:
        return max(self.overlap.similarity)


def fingerprint_all(sources: list[Source], boilerplate: np.ndarray, jobs: int) -> dict[tuple[str, str], Fingerprint]:
    """Every file's fingerprint by (source name, file name); files with the same text are
    fingerprinted once, and many files on `jobs` processes."""
    texts = {(source.name, name): text for source in sources for name, text in source.files.items()}
    digests = {key: hashlib.sha256(text.encode()).digest() for key, text in texts.items()}
    unique = {digest: texts[key] for key, digest in digests.items()}
    work = partial(fingerprint, boilerplate=boilerplate)
    if jobs > 1 and len(unique) >= PARALLEL_FROM:
        with ProcessPoolExecutor(jobs) as pool:
            done = dict(zip(unique, pool.map(work, unique.values(), chunksize=8)))
    else:
        done = {digest: work(text) for digest, text in unique.items()}
    return {key: done[digest] for key, digest in digests.items()}


def without_common(
    sources: list[Source], prints: dict[tuple[str, str], Fingerprint], modules: set[str], common: int
) -> tuple[dict[tuple[str, str], Fingerprint], int]:
    """The fingerprints without those found in more than `common` students' files of one name
    (0: none removed), and how many were removed. A corpus file loses those of its name's
    files, or of all files when its name is no module of the release."""
    if common <= 0:
        return prints, 0
    counts: dict[str, Counter[int]] = {}
    for source in sources:
        if not source.corpus:
            for name in source.files:
                counts.setdefault(name, Counter()).update(prints[(source.name, name)].keys)
    frequent = {name: {key for key, n in counted.items() if n > common} for name, counted in counts.items()}
    everywhere = set().union(*frequent.values())
    kept = {}
    for (source, name), found in prints.items():
        base = name.rsplit("/", 1)[-1]
        kept[(source, name)] = found.without(frequent.get(base, set()) if base in modules else everywhere)
    return kept, len(everywhere)


def find(
    sources: list[Source], prints: dict[tuple[str, str], Fingerprint], modules: set[str], threshold: float
) -> list[Match]:
    """The pairs at or above `threshold`, highest first."""
    students = sorted((s for s in sources if not s.corpus), key=lambda s: s.name)
    found = []
    for i, a in enumerate(students):
        for b in students[i + 1 :]:
            for name in sorted(a.files.keys() & b.files.keys()):
                found.append(_match(a.name, b.name, name, name, prints, False))
    for corpus in (s for s in sources if s.corpus):
        for path in sorted(corpus.files):
            base = path.rsplit("/", 1)[-1]
            for a in students:
                for name in sorted(a.files):
                    if name == base or base not in modules:
                        found.append(_match(a.name, corpus.name, name, path, prints, True))
    kept = [m for m in found if m is not None and m.score >= threshold and m.overlap.matched >= MIN_MATCHED]
    return sorted(kept, key=lambda m: (-round(m.score, 6), -m.overlap.matched, m.a, m.b, m.file_a, m.file_b))


def _match(
    a: str, b: str, file_a: str, file_b: str, prints: dict[tuple[str, str], Fingerprint], corpus: bool
) -> Match | None:
    overlap = compare(prints[(a, file_a)], prints[(b, file_b)])
    return None if overlap is None else Match(a, b, file_a, file_b, overlap, corpus)


def groups(matches: list[Match]) -> list[list[str]]:
    """Students linked by reported pairs (connected components), three or more, largest first."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for m in matches:
        if not m.corpus:
            parent[root(m.a)] = root(m.b)
    members: dict[str, list[str]] = {}
    for name in sorted(parent):
        members.setdefault(root(name), []).append(name)
    return sorted((g for g in members.values() if len(g) >= 3), key=lambda g: (-len(g), g))


def default_jobs() -> int:
    return len(os.sched_getaffinity(0))
