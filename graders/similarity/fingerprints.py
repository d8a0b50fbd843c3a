"""Code reduced to what a copy keeps, and two files compared by it.

Renaming variables, rewording comments and docstrings, changing numbers or strings and
reordering methods are the usual ways to hide a copy. So the code is read with Pygments'
Python lexer and every name becomes `V` (a function being defined `F`, a class `O`, `self`
too), every number `N`, every string `S`; comments, docstrings and blanks are dropped. Keywords,
operators, builtins and the code's shape remain, and each remaining character remembers the
source it came from, so a match is shown on the student's own lines.

The fingerprints are MOSS's, through copydetect: hashes of the k-grams of that text, winnowed
(`copydetect.utils.winnow`), matched (`find_fingerprint_overlap`) and merged into spans
(`get_copied_slices`). Two things are our own. The normalising above: copydetect keeps numbers
and docstrings as written and maps back through offsets that cannot name lines. And the hash:
copydetect hashes k-grams with Python's `hash`, which changes from process to process
(PYTHONHASHSEED), so its winnowing picks other fingerprints each run; a polynomial hash over
the characters gives the same report every time.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
from copydetect.utils import find_fingerprint_overlap, get_copied_slices, winnow
from numpy.lib.stride_tricks import sliding_window_view
from pygments.lexers.python import PythonLexer
from pygments.token import Comment, Name, Number, String, Text

K = 25  # characters of normalised code in a k-gram: copydetect's noise threshold
WINDOW = 4  # winnowing window: every match of K + WINDOW - 1 characters is found (MOSS's guarantee)
_LEXER = PythonLexer()
_POWERS = np.array([pow(1_000_003, K - 1 - i, 2**64) for i in range(K)], dtype=np.uint64)
_VARIABLES = (Name.Builtin.Pseudo, Name.Namespace, Name.Attribute, Name.Variable, Name.Other)


@dataclass(frozen=True)
class Fingerprint:
    """One file: its text, where each normalised character came from, and its fingerprints
    (the release's own removed) with the positions where each occurs."""

    text: str
    starts: np.ndarray  # per normalised character: the source offset its token starts at
    ends: np.ndarray  # ... and ends at
    keys: frozenset[int]
    positions: dict[int, list[int]]
    coverage: int  # normalised characters the fingerprints cover: what a similarity is a share of
    length: int  # characters of normalised code

    def without(self, common: set[int]) -> Fingerprint:
        """This file without the fingerprints in `common` (code too many students share)."""
        if self.keys.isdisjoint(common):
            return self
        positions = {key: where for key, where in self.positions.items() if key not in common}
        return replace(self, keys=frozenset(positions), positions=positions, coverage=_coverage(positions, self.length))


@dataclass(frozen=True)
class Overlap:
    """What two files share: matched characters of normalised code on each side, each as a
    share of that file's own code, and the spans in each file's source text."""

    matched: int
    similarity: tuple[float, float]
    spans: tuple[list[tuple[int, int]], list[tuple[int, int]]]


@functools.cache
def symbol(kind: object) -> str | None:
    """What a token of this type leaves in the normalised code: "" nothing, a symbol, or None
    for its own text (keywords, operators, builtins). Cached: Pygments' type tests are slow."""
    if kind in Comment or kind in Text or kind in String.Doc:
        return ""
    if kind in Number:
        return "N"
    if kind in String:
        return "S"
    if kind in Name.Function:
        return "F"
    if kind in Name.Class:
        return "O"
    if kind is Name or any(kind in group for group in _VARIABLES):
        return "V"
    return None


def normalise(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """The normalised code, and for each of its characters the source span of its token. A
    run of string pieces (an f-string's parts, "a" "b") is one `S`."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    in_string = False
    for index, kind, value in _LEXER.get_tokens_unprocessed(text):
        mark = symbol(kind)
        if mark is None:
            mark = value.strip()
        if not mark:
            continue
        end = index + len(value)
        if mark == "S" and in_string:
            ends[-1] = end
            continue
        in_string = mark == "S"
        chars.extend(mark)
        starts.extend([index] * len(mark))
        ends.extend([end] * len(mark))
    return "".join(chars), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def kgram_hashes(code: str) -> np.ndarray:
    """A hash of every K characters of `code`, the same in every process."""
    if len(code) < K:
        return np.array([], dtype=np.int64)
    values = np.frombuffer(code.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    with np.errstate(over="ignore"):
        return (sliding_window_view(values, K) @ _POWERS).view(np.int64)


def fingerprint(text: str, boilerplate: np.ndarray) -> Fingerprint:
    """`text`'s fingerprint, without the k-grams in `boilerplate` (sorted hashes)."""
    code, starts, ends = normalise(text)
    hashes = kgram_hashes(code)
    if len(hashes):
        chosen, where = winnow(hashes, WINDOW, remove_duplicates=False)
    else:
        chosen, where = hashes, np.array([], dtype=np.int64)
    keep = ~np.isin(chosen, boilerplate)
    chosen, where = chosen[keep], where[keep]
    positions: dict[int, list[int]] = {}
    for value, at in zip(chosen.tolist(), where.tolist()):
        positions.setdefault(value, []).append(at)
    return Fingerprint(text, starts, ends, frozenset(positions), positions, _coverage(positions, len(code)), len(code))


def _coverage(positions: dict[int, list[int]], length: int) -> int:
    """How many characters of the code the k-grams at `positions` cover."""
    covered = np.zeros(length, dtype=bool)
    where = np.array([at for ats in positions.values() for at in ats], dtype=np.int64)
    for offset in range(K):
        covered[where + offset] = True
    return int(covered.sum())


def all_hashes(text: str) -> np.ndarray:
    """Every k-gram hash of `text`'s normalised code: what a boilerplate file contributes."""
    return np.unique(kgram_hashes(normalise(text)[0]))


def compare(a: Fingerprint, b: Fingerprint) -> Overlap | None:
    """What `a` and `b` share, or None when no fingerprint is common."""
    if a.keys.isdisjoint(b.keys):
        return None
    where_a, where_b = find_fingerprint_overlap(a.keys, b.keys, a.positions, b.positions)
    slices_a, slices_b = get_copied_slices(where_a, K), get_copied_slices(where_b, K)
    matched_a = int(np.sum(slices_a[1] - slices_a[0]))
    matched_b = int(np.sum(slices_b[1] - slices_b[0]))
    return Overlap(
        min(matched_a, matched_b),
        (matched_a / a.coverage, matched_b / b.coverage),
        (_source_spans(a, slices_a), _source_spans(b, slices_b)),
    )


def _source_spans(file: Fingerprint, slices: np.ndarray) -> list[tuple[int, int]]:
    """Spans of normalised code as (start, end) offsets in the file's source text."""
    return [(int(file.starts[s]), int(file.ends[e - 1])) for s, e in zip(slices[0].tolist(), slices[1].tolist())]
