"""The code to compare: each student's graded files, and the files of reference corpora.

A student's files are exactly what the class command grades: the upload found by its layout
(`layouts.collect`, with its ids and refusals), then the grader's own intake packing the
package's `.py` files (`packing.pack`: the same copy, caps and refusals). Nothing is run or
imported; the code is only read. A corpus (`--against DIR`: earlier terms, solutions found
online) is a folder an instructor put together: its `.py` files are read wherever they lie,
never through a link and within the intake's size cap, each named by its path so a match
says which file it came from.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from graders import intake
from graders.class_grading import layouts, packing


@dataclass(frozen=True)
class Source:
    """Who wrote some code (a student id, or a corpus's name) and its files by name."""

    name: str
    files: dict[str, str] = field(default_factory=dict)
    corpus: bool = False


def text(data: bytes) -> str:
    """Source text as compared and shown: UTF-8 (undecodable bytes replaced), `\\n` lines,
    tabs expanded as Python reads indentation."""
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").expandtabs(8)


def students(submissions: list[layouts.Submission]) -> tuple[list[Source], list[str]]:
    """Each student's graded files, and why anyone is left out (refused, no package, one
    group submission compared once under its first submitter, as it is graded)."""
    sources, left_out = [], []
    for s in submissions:
        if s.graded_as:
            left_out.append(f"{s.student}: one group submission with {s.graded_as}, compared as {s.graded_as}")
        elif s.refused or s.folder is None:
            left_out.append(f"{s.student}: not compared: upload refused: {s.refused}")
        else:
            try:
                packed = packing.pack(s.folder)
            except (OSError, ValueError, tarfile.TarError) as error:  # one student's upload, never the class
                left_out.append(f"{s.student}: not compared: its files could not be read ({error})")
                continue
            if packed.found:
                sources.append(Source(s.student, _members(packed.archive)))
            else:
                left_out.append(f"{s.student}: not compared: no minigrad package found")
    return sources, left_out


def _members(archive: bytes) -> dict[str, str]:
    """The files of a packed submission (made by `packing.pack`, so plain files only) by name."""
    files = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar:
            if member.isfile() and (data := tar.extractfile(member)) is not None:
                files[PurePosixPath(member.name).name] = text(data.read())
    return files


def corpus(folder: Path, label: str) -> Source:
    """The `.py` files under `folder`, each named `label/its/path.py`."""
    if not folder.is_dir() or folder.is_symlink():
        raise SystemExit(f"--against {folder}: not a folder")
    files = {}
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
            files[f"{label}/{(parent / entry.name).relative_to(folder).as_posix()}"] = text(data)
    return Source(label, files, corpus=True)


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
