"""A student's code as one body, and two bodies compared by what they share.

A student's files are one body: moving code into new modules (`core.py`, with a one-line
`engine.py` importing it) changes which file holds it, not the program. Each file's tokens
(tokens.py) are hashed in k-grams of K tokens that never cross a file's end, the hashes of all
the files laid end to end, so a match is found wherever the two copies lie.

The fingerprints are MOSS's, through copydetect: the k-gram hashes winnowed
(`copydetect.utils.winnow`), matched (`find_fingerprint_overlap`) and merged into spans
(`get_copied_slices`). The k-gram hash is our own: copydetect hashes text with Python's `hash`,
which changes from process to process (PYTHONHASHSEED), so its winnowing would pick other
fingerprints each run; a polynomial hash over stable token hashes gives the same report every
time.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, replace

import numpy as np
from copydetect.utils import find_fingerprint_overlap, get_copied_slices, winnow
from numpy.lib.stride_tricks import sliding_window_view

from .tokens import Token

K = 12  # tokens in a k-gram: about one line of code
WINDOW = 6  # winnowing window: every match of K + WINDOW - 1 tokens is found (MOSS's guarantee)
_POWERS = np.array([pow(1_000_003, K - 1 - i, 2**64) for i in range(K)], dtype=np.uint64)
PAIRED = 64  # a fingerprint found this often in both bodies pairs its places in order, not all with all


@dataclass(frozen=True)
class Body:
    """One author's code: the files' names and texts, where each token lies (its file, its
    offsets there), and the fingerprints (the release's removed) with the tokens they start at."""

    names: tuple[str, ...]
    texts: tuple[str, ...]
    file_of: np.ndarray  # per token: the index of its file
    starts: np.ndarray  # per token: its offsets in its file's text
    ends: np.ndarray
    lines: np.ndarray  # per token: its line (from 0) in its file
    positions: dict[int, list[int]]
    keys: frozenset[int]
    coverage: int  # tokens the fingerprints cover: what a similarity is a share of

    @property
    def length(self) -> int:
        return len(self.file_of)

    def without(self, common: set[int]) -> Body:
        """This body without the fingerprints in `common` (code too many students share)."""
        if self.keys.isdisjoint(common):
            return self
        positions = {key: where for key, where in self.positions.items() if key not in common}
        return replace(self, keys=frozenset(positions), positions=positions, coverage=covered(positions, self.length))


@dataclass(frozen=True)
class Place:
    """Where two bodies share code: a file of each, the matched spans in each file's text,
    and the tokens matched there (the fewer of the two sides)."""

    file_a: int
    file_b: int
    spans_a: list[tuple[int, int]]
    spans_b: list[tuple[int, int]]
    tokens: int


@dataclass(frozen=True)
class Overlap:
    """What two bodies share: matched tokens on each side, each as a share of that body's own
    code, and the places, most matched first."""

    matched: int
    similarity: tuple[float, float]
    places: list[Place]  # filled for the pairs reported only (places())


@functools.cache
def _token_hash(symbol: str) -> int:
    return int.from_bytes(hashlib.blake2b(symbol.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def kgram_hashes(symbols: list[str]) -> np.ndarray:
    """A hash of every K tokens in a row, the same in every process."""
    if len(symbols) < K:
        return np.array([], dtype=np.int64)
    values = np.array([_token_hash(symbol) for symbol in symbols], dtype=np.uint64)
    with np.errstate(over="ignore"):
        return (sliding_window_view(values, K) @ _POWERS).view(np.int64)


def body(files: dict[str, tuple[str, list[Token]]], boilerplate: np.ndarray) -> Body:
    """The body of `files` (name: decoded text and its tokens), without the k-grams in
    `boilerplate` (sorted hashes)."""
    names = tuple(sorted(files))
    positions: dict[int, list[int]] = {}
    file_of, starts, ends, lines = [], [], [], []
    for index, name in enumerate(names):
        found = files[name][1]
        hashes = kgram_hashes([token.symbol for token in found])
        if len(hashes):
            chosen, where = winnow(hashes, WINDOW, remove_duplicates=False)
            keep = ~np.isin(chosen, boilerplate)
            for value, at in zip(chosen[keep].tolist(), where[keep].tolist()):
                positions.setdefault(value, []).append(at + len(file_of))
        file_of += [index] * len(found)
        starts += [token.start for token in found]
        ends += [token.end for token in found]
        newlines = np.flatnonzero(np.frombuffer(files[name][0].encode("utf-32-le"), dtype=np.uint32) == 10)
        lines += np.searchsorted(newlines, [token.start for token in found]).tolist()
    return Body(
        names,
        tuple(files[name][0] for name in names),
        np.array(file_of, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.array(lines, dtype=np.int64),
        positions,
        frozenset(positions),
        covered(positions, len(file_of)),
    )


def covered(positions: dict[int, list[int]], length: int) -> int:
    """How many tokens the k-grams at `positions` cover."""
    return int(mask([at for ats in positions.values() for at in ats], length).sum())


def mask(starts: list[int], length: int) -> np.ndarray:
    """Per token: whether a k-gram starting at one of `starts` covers it."""
    covers = np.zeros(length, dtype=bool)
    where = np.array(starts, dtype=np.int64)
    for offset in range(K):
        covers[where + offset] = True
    return covers


def compare(a: Body, b: Body) -> Overlap | None:
    """What `a` and `b` share, or None when no fingerprint is common."""
    if a.keys.isdisjoint(b.keys):
        return None
    where_a, where_b = find_fingerprint_overlap(a.keys, b.keys, a.positions, b.positions)
    matched_a, matched_b = (_tokens(get_copied_slices(where, K)) for where in (where_a, where_b))
    return Overlap(min(matched_a, matched_b), (matched_a / a.coverage, matched_b / b.coverage), [])


def _tokens(slices: np.ndarray) -> int:
    return int(np.sum(slices[1] - slices[0])) if slices.size else 0


def places(a: Body, b: Body) -> list[Place]:
    """The shared fingerprints' places paired across the bodies, by pair of files: each
    fingerprint's places in `a` with its places in `b` (in order when it is found more than
    PAIRED times on both sides, as repeated code is)."""
    paired: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
    for key in sorted(a.keys & b.keys):
        here, there = a.positions[key], b.positions[key]
        pairs = zip(here, there) if len(here) * len(there) > PAIRED else ((x, y) for x in here for y in there)
        for x, y in pairs:
            sides = paired.setdefault((int(a.file_of[x]), int(b.file_of[y])), ([], []))
            sides[0].append(x)
            sides[1].append(y)
    places = []
    for (file_a, file_b), (here, there) in paired.items():
        slices_a, slices_b = get_copied_slices(np.array(here), K), get_copied_slices(np.array(there), K)
        tokens = min(_tokens(slices_a), _tokens(slices_b))
        places.append(Place(file_a, file_b, spans(a, slices_a), spans(b, slices_b), tokens))
    return sorted(places, key=lambda p: (-p.tokens, a.names[p.file_a], b.names[p.file_b]))


def spans(side: Body, slices: np.ndarray) -> list[tuple[int, int]]:
    """Spans of tokens (never across files: a k-gram never is) as offsets in their file's text."""
    return [(int(side.starts[s]), int(side.ends[e - 1])) for s, e in zip(slices[0].tolist(), slices[1].tolist())]


def all_hashes(symbols: list[str]) -> np.ndarray:
    """Every k-gram hash of a file's tokens: what a boilerplate file contributes."""
    return np.unique(kgram_hashes(symbols))
