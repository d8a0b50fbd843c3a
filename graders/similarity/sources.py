"""The code to compare: each student's graded files, and the works of reference corpora.

A student's files are exactly what the class command grades: the upload found by its layout
(`layouts.collect`, with its ids and refusals), then the grader's own intake packing the
package's `.py` files (`packing.pack`: the same copy, caps and refusals). Nothing is run or
imported; the code is only read. A Gradescope group submission is one body of code handed in
by all its submitters: it is compared once, named by all of them together, never as the one
member whose id sorts first.

A corpus (`--against DIR`: earlier terms, solutions found online) is a folder an instructor put
together: each folder at its top is one work (an earlier student's upload), and each `.py` file
at its top one work too. Its `.py` files are read wherever they lie, never through a link and
within the intake's size cap, each named by its path so a match says which file it came from.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from graders.uploads import intake, layouts, packing

TOGETHER = " + "  # joins the submitters of a group submission (never in an id: ids keep no `+`)


@dataclass(frozen=True)
class Source:
    """Who wrote some code (a student id, a group's ids joined, or `corpus/work`) and its files
    by name, as bytes: they are decoded as Python decodes them when fingerprinted."""

    name: str
    files: dict[str, bytes] = field(default_factory=dict)
    corpus: bool = False


def students(submissions: list[layouts.Submission]) -> tuple[list[Source], list[str]]:
    """Each student's (or group's) graded files, and why anyone is left out."""
    members: dict[str, list[str]] = {}
    for s in submissions:
        members.setdefault(s.graded_as or s.student, []).append(s.student)
    sources, left_out = [], []
    for s in submissions:
        if s.graded_as:
            continue
        name = TOGETHER.join([s.student, *sorted(m for m in members[s.student] if m != s.student)])
        if s.refused or s.folder is None:
            left_out.append(f"{name}: not compared: upload refused: {s.refused}")
            continue
        try:
            packed = packing.pack(s.folder)
        except (OSError, ValueError, tarfile.TarError) as error:  # one student's upload, never the class
            left_out.append(f"{name}: not compared: its files could not be read ({error})")
            continue
        if packed.found:
            sources.append(Source(name, _members(packed.archive)))
        else:
            left_out.append(f"{name}: not compared: no minigrad package found")
    return sources, left_out


def _members(archive: bytes) -> dict[str, bytes]:
    """The files of a packed submission (made by `packing.pack`, so plain files only) by name."""
    files = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if member.isfile() and (data := tar.extractfile(member)) is not None:
                files[PurePosixPath(member.name).name] = data.read()
    return files


def corpus(folder: Path, label: str) -> list[Source]:
    """The works of the corpus at `folder`: its `.py` files by the folder or file at its top,
    each file named `label/its/path.py`."""
    if not folder.is_dir() or folder.is_symlink():
        raise SystemExit(f"--against {folder}: not a folder")
    works: dict[str, dict[str, bytes]] = {}
    for parent, entries in intake.walk(folder):
        for entry in entries:
            if not entry.name.endswith(".py") or not entry.is_file(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_size > intake.MAX_FILE_BYTES:
                    continue
                data = (parent / entry.name).read_bytes()
            except OSError:
                continue  # gone or unreadable since the folder was listed: not part of the corpus
            path = (parent / entry.name).relative_to(folder).as_posix()
            works.setdefault(f"{label}/{path.split('/', 1)[0]}", {})[f"{label}/{path}"] = data
    return [Source(name, files, corpus=True) for name, files in sorted(works.items())]


def corpus_labels(folders: list[Path]) -> list[str]:
    """A name for each corpus: its folder's name, numbered when two share one."""
    labels: list[str] = []
    for folder in folders:
        name = folder.resolve().name or "corpus"
        label, n = name, 1
        while label in labels:
            n += 1
            label = f"{name}-{n}"
        labels.append(label)
    return labels
