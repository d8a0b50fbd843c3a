"""Copy a submission's `minigrad/*.py` for grading: read it, never follow it.

Git and zip uploads keep symbolic links, and a hard link looks like an ordinary file: a
`minigrad/` that points at the reference would otherwise be graded as the reference. So the
package folder and every file are opened relative to their parent with `O_NOFOLLOW`, each
file must be a regular file with exactly one link, and the bytes are copied from the open
file, never from a path that could change in between. The copy is capped in files and bytes,
so a folder of sparse giant files costs nothing. Every refusal is said in words.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 32
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO must not block the grader


@dataclass
class Intake:
    """What was copied, and why anything else was not."""

    found: bool = False
    location: str = ""  # where the files were, from the upload's top: "hw1/minigrad"; "" for a flat upload
    copied: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def copy_package(submission: Path, target: Path) -> Intake:
    """Copy the regular `.py` files of the submission's package (see `_open_package` for
    where it may be) into the existing folder `target`."""
    intake = Intake()
    package = _open_package(submission, intake)
    if package is None:
        return intake
    intake.found = True
    try:
        names = sorted(entry.name for entry in os.scandir(package))
        total = 0
        for name in names:
            if not MODULE_NAME.fullmatch(name):
                continue
            if len(intake.copied) == MAX_FILES:
                intake.refused.append(f"minigrad/{name}: more than {MAX_FILES} .py files; the rest were not read")
                break
            data = _read_regular(package, name, intake)
            if data is None:
                continue
            if total + len(data) > MAX_TOTAL_BYTES:
                intake.refused.append(f"minigrad/{name}: the package is over {MAX_TOTAL_BYTES // 1024**2} MiB")
                break
            total += len(data)
            (target / name).write_bytes(data)
            intake.copied.append(name)
    finally:
        os.close(package)
    return intake


def _open_package(submission: Path, intake: Intake) -> int | None:
    """An open descriptor of the package folder, or None (with the reason when it is not
    simply missing). Where students put it varies: `minigrad/` at the top, the upload being
    `minigrad/` itself, one wrapping folder (`hw1-alice/minigrad/`), or a flat upload whose
    `engine.py` sits at the top; each folder on the way is opened without following links."""
    if submission.is_symlink():
        intake.refused.append(f"{submission.name}: a symbolic link, not a folder; upload the files themselves")
        return None
    try:
        folder = os.open(submission, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    if submission.name == "minigrad":
        intake.location = "minigrad"
        return folder
    path: list[str] = []
    for _ in range(SEARCH_DEPTH):
        found = _package_in(folder, intake)
        if found is not _DESCEND:
            if found is not None:
                intake.location = "/".join(path + ([] if found == folder else ["minigrad"]))
            return found
        subfolders = _visible_subfolders(folder)
        if len(subfolders) != 1:
            break
        path.append(subfolders[0])
        deeper = os.open(subfolders[0], DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = deeper
    os.close(folder)
    return None


SEARCH_DEPTH = 3  # an upload, a wrapping folder, one more (`hw1-alice/hw1/minigrad/`)
_DESCEND = object()


def _package_in(folder: int, intake: Intake) -> int | None | object:
    """`folder`'s `minigrad/`, `folder` itself for a flat upload, None for a refused
    package, or _DESCEND: look one folder deeper. Closes `folder` unless it is returned."""
    try:
        package = os.open("minigrad", DIRECTORY, dir_fd=folder)
    except FileNotFoundError:
        if _is_regular(folder, "engine.py"):
            return folder
        return _DESCEND
    except OSError:
        if stat.S_ISLNK(os.stat("minigrad", dir_fd=folder, follow_symlinks=False).st_mode):
            intake.refused.append("minigrad/: a symbolic link, not a folder; upload the files themselves")
        else:
            intake.refused.append("minigrad: not a folder")
        os.close(folder)
        return None
    os.close(folder)
    return package


def _is_regular(folder: int, name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _visible_subfolders(folder: int) -> list[str]:
    """Real folders only, without the `.git`, `__MACOSX` and `__pycache__` that uploads carry."""
    with os.scandir(folder) as entries:
        return sorted(
            entry.name
            for entry in entries
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith((".", "__"))
        )


def _read_regular(package: int, name: str, intake: Intake) -> bytes | None:
    try:
        fd = os.open(name, FILE, dir_fd=package)
    except OSError:
        intake.refused.append(f"minigrad/{name}: a symbolic link or unreadable; not graded")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            problem = "not a regular file"
        elif info.st_nlink != 1:
            problem = "a hard link to another file"
        elif info.st_size > MAX_FILE_BYTES:
            problem = f"larger than {MAX_FILE_BYTES // 1024} KiB"
        else:
            return _read_all(fd, MAX_FILE_BYTES)
        intake.refused.append(f"minigrad/{name}: {problem}; not graded")
        return None
    finally:
        os.close(fd)


def _read_all(fd: int, limit: int) -> bytes:
    """At most `limit` bytes: the size checked above may grow while we read."""
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def listing(submission: Path, limit: int = 12) -> list[str]:
    """What an upload holds, for the message when no package is found in it: files by their
    path from the upload's top, without the hidden ones, never through a link, at most `limit`."""
    found: list[str] = []
    if submission.is_symlink() or not submission.is_dir():
        return found
    for top, folders, files in os.walk(submission, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith((".", "__")))
        found += [str(Path(top, f).relative_to(submission)) for f in sorted(files) if not f.startswith(".")]
        if len(found) >= limit:
            return found[:limit] + ["..."]
    return found
