"""Unpack an LMS's bulk download: one zip whose file names carry the student.

Canvas names each file `{name}_{userid}_{submissionid}_{filename}` (`{name}_late_...` when
late) and appends `-1`, `-2` to a file submitted again under the same name: the newest copy
of a name (latest submission, highest suffix) is the one unpacked. A student who
uploaded a zip of their folder gets that zip's members unpacked in place. Nothing in the zip
is trusted: only regular files are written, each under a path that cannot leave the
student's folder, never through a link, and a student's files are capped in number and size.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from collections import defaultdict
from pathlib import Path, PurePosixPath

CANVAS = re.compile(r"(?P<name>[^_]+)_(?:late_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)")
RESUBMITTED = re.compile(r"-\d+(?=\.[A-Za-z0-9]+$)")  # engine-1.py: Canvas renamed a resubmission
MAX_FILES = 200  # per student
MAX_BYTES = 16 * 1024 * 1024  # per student, unpacked


def unpack(archive: Path, staging: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """Each student's files unpacked into `staging/{n}/`; returns (student name, folder) pairs
    and a warning for every entry that names no student or could not be unpacked."""
    warnings: list[str] = []
    by_student: dict[tuple[str, str], list[tuple[tuple, zipfile.ZipInfo, str]]] = defaultdict(list)
    try:
        bundle = zipfile.ZipFile(archive)
    except (OSError, zipfile.BadZipFile) as exc:
        raise SystemExit(f"{archive}: not a readable zip ({exc})") from exc
    with bundle:
        for info in bundle.infolist():
            if info.is_dir():
                continue
            match = CANVAS.fullmatch(PurePosixPath(info.filename).name)
            if match is None:
                warnings.append(f"{info.filename}: the name carries no student (expected name_id_id_file)")
                continue
            again = RESUBMITTED.search(match["file"])
            newest_first = (-int(match["submission"]), -int(again[0][1:]) if again else 0)
            by_student[(match["name"], match["user"])].append((newest_first, info, RESUBMITTED.sub("", match["file"])))
        names = [name for name, _ in by_student]
        found = []
        for n, ((name, user), entries) in enumerate(sorted(by_student.items())):
            folder = staging / str(n)
            folder.mkdir(parents=True)
            budget = _Budget(name)
            for _, info, filename in sorted(entries, key=lambda entry: (entry[0], entry[1].filename)):
                if filename.lower().endswith(".zip"):
                    _unpack_inner(bundle, info, folder, budget)
                elif _is_regular(info):
                    _write(folder, filename, bundle.read(info), budget)
            warnings.extend(budget.problems)
            found.append((name if names.count(name) == 1 else f"{name}_{user}", folder))
    return found, warnings


class _Budget:
    """What one student may still unpack, and what was refused."""

    def __init__(self, student: str) -> None:
        self.student, self.files, self.bytes = student, MAX_FILES, MAX_BYTES
        self.problems: list[str] = []

    def take(self, name: str, size: int) -> bool:
        if self.files == 0 or size > self.bytes:
            self.problems.append(f"{self.student}: {name} not unpacked (over {MAX_FILES} files or {MAX_BYTES} bytes)")
            return False
        self.files -= 1
        self.bytes -= size
        return True


def _is_regular(info: zipfile.ZipInfo) -> bool:
    """Zips made on Unix record the file type; a link is stored as a 'file' holding its target."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    return kind in (0, stat.S_IFREG)


def _unpack_inner(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, folder: Path, budget: _Budget) -> None:
    """A student's own zip: its regular members, at their paths inside the student's folder."""
    if not budget.take(info.filename, 0):
        return
    try:
        with bundle.open(info) as raw, zipfile.ZipFile(raw) as inner:
            for member in inner.infolist():
                parts = PurePosixPath(member.filename).parts
                if member.is_dir() or not _is_regular(member) or not parts or parts[0] == "/" or ".." in parts:
                    continue
                if member.file_size <= budget.bytes:
                    _write(folder, "/".join(parts), inner.read(member), budget)
                else:
                    budget.take(member.filename, member.file_size)
    except (zipfile.BadZipFile, OSError) as exc:
        budget.problems.append(f"{budget.student}: {info.filename} is not a readable zip ({exc})")


def _write(folder: Path, relative: str, data: bytes, budget: _Budget) -> None:
    """A new file under `folder`, never through a link; folders on the way are made."""
    if not budget.take(relative, len(data)):
        return
    target = folder / relative
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        budget.problems.append(f"{budget.student}: {relative} not unpacked ({exc.strerror or exc})")
        return
    with os.fdopen(fd, "wb") as file:
        file.write(data)
