"""Whose code is read, which pairs are reported, and what is set aside as common.

Every student's body is compared with every other student's body and with every work of every
`--against` corpus; works of corpora are never compared with each other.

Code that many students wrote alike is the course's idiom, not a copy: every closure-based
engine says `out = Value(...)`, then `def _backward(): self.grad += ... * out.grad`. As MOSS
does (its `-m`), a fingerprint found in the code of more than COMMON students is set aside for
everyone. A class that copied one solution is then set aside too, so the report always says what
it set aside (common.py), the largest such block first.

A pair is reported when either body's share of its own code found in the other reaches the
threshold (one side may have copied a part of the other), and at least MIN_MATCHED tokens
match, so a student who wrote three lines is not 100% like everyone who wrote the same three
lines. The order is fixed (highest share, then most matched, then names), so the same class
gives the same report.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from . import tokens
from .fingerprints import Body, Overlap, body, compare, places
from .sources import Source

THRESHOLD = 0.5  # the default share of a body's own code found in the other
MIN_MATCHED = 60  # tokens, about five lines of a method
COMMON = 10  # students: code in more bodies than this is the course's idiom (MOSS's default)
PARALLEL_FROM = 40  # sources; fewer are read in this process (a pool costs more)


@dataclass(frozen=True)
class Read:
    """A source's body, and the files it could not read (or read only in part) with the reasons."""

    body: Body
    unreadable: list[str]


@dataclass(frozen=True)
class Match:
    """Two bodies that share code: `a` is always a student (or group), `b` one or a corpus work."""

    a: str
    b: str
    overlap: Overlap
    corpus: bool = False

    @property
    def score(self) -> float:
        return max(self.overlap.similarity)


def read(files: dict[str, bytes], boilerplate: np.ndarray) -> Read:
    """A source's files decoded and tokenised as Python reads them, as one body."""
    readable, unreadable, budget = {}, [], tokens.MAX_TOKENS
    for name, data in sorted(files.items()):
        try:
            text = tokens.decode(data)
            found = tokens.tokens(text, budget)
        except tokens.Unreadable as why:
            unreadable.append(f"{name}: not compared: {why}")
            continue
        readable[name], budget = (text, found.kept), budget - found.yielded
        if found.stopped:
            unreadable.append(f"{name}: {found.stopped}")
    return Read(body(readable, boilerplate), unreadable)


def read_all(sources: list[Source], boilerplate: np.ndarray, jobs: int) -> dict[str, Read]:
    """Every source read, by name; sources with the same files are read once, many of them on
    `jobs` processes."""
    digests = {}
    for source in sources:
        digest = hashlib.sha256()
        for name, data in sorted(source.files.items()):
            digest.update(hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest())
            digest.update(hashlib.sha256(data).digest())
        digests[source.name] = digest.digest()
    unique = {digests[source.name]: source.files for source in sources}
    work = partial(read, boilerplate=boilerplate)
    if jobs > 1 and len(unique) >= PARALLEL_FROM:
        with ProcessPoolExecutor(jobs) as pool:
            done = dict(zip(unique, pool.map(work, unique.values(), chunksize=4)))
    else:
        done = {digest: work(files) for digest, files in unique.items()}
    return {name: done[digest] for name, digest in digests.items()}


def common_keys(sources: list[Source], bodies: dict[str, Body], common: int) -> dict[int, int]:
    """The fingerprints found in more than `common` students' bodies (0: none), with how many."""
    if common <= 0:
        return {}
    counts = Counter(key for source in sources if not source.corpus for key in bodies[source.name].keys)
    return {key: n for key, n in counts.items() if n > common}


def find(sources: list[Source], bodies: dict[str, Body], threshold: float) -> list[Match]:
    """The pairs at or above `threshold`, highest first."""
    students = sorted(s.name for s in sources if not s.corpus)
    works = sorted(s.name for s in sources if s.corpus)
    found = [_match(a, b, bodies, False) for i, a in enumerate(students) for b in students[i + 1 :]]
    found += [_match(a, work, bodies, True) for work in works for a in students]
    kept = [
        replace(m, overlap=replace(m.overlap, places=places(bodies[m.a], bodies[m.b])))
        for m in found
        if m is not None and m.score >= threshold and m.overlap.matched >= MIN_MATCHED
    ]
    return sorted(kept, key=lambda m: (-round(m.score, 6), -m.overlap.matched, m.a, m.b))


def _match(a: str, b: str, bodies: dict[str, Body], corpus: bool) -> Match | None:
    overlap = compare(bodies[a], bodies[b])
    return None if overlap is None else Match(a, b, overlap, corpus)


def linked(matches: list[Match]) -> list[list[Match]]:
    """Students linked through reported pairs (three or more), each drawn as its pairs: a
    student who copied from two links them here, but never makes them a pair."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    among = [m for m in matches if not m.corpus]
    for m in among:
        parent[root(m.a)] = root(m.b)
    chains: dict[str, list[Match]] = {}
    for m in among:
        chains.setdefault(root(m.a), []).append(m)
    size = {key: len({n for m in chain for n in (m.a, m.b)}) for key, chain in chains.items()}
    return [chains[key] for key in sorted(chains, key=lambda key: (-size[key], chains[key][0].a)) if size[key] >= 3]


def default_jobs() -> int:
    return len(os.sched_getaffinity(0))
