"""Find a submission's package and copy its `minigrad/*.py` for grading: read it, never follow it.

Git and zip uploads keep symbolic links, and a hard link looks like an ordinary file: a
`minigrad/` that points at the reference would otherwise be graded as the reference. So the
package folder and every file are opened relative to their parent with `O_NOFOLLOW`, each
file must be a regular file with exactly one link, and the bytes are copied from the open
file, never from a path that could change in between. The copy is capped in files and bytes,
so a folder of sparse giant files costs nothing. Every refusal is said in words.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 32
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 4 * 1024 * 1024
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.py")
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO must not block the grader
NOT_FOUND = "no minigrad/ folder found in the submission"  # a grade's output says so when `found` is False


@dataclass
class Intake:
    """What was copied, and why anything else was not."""

    found: bool = False
    location: str = ""  # where the files were, from the upload's top: "hw1/minigrad"; "" for a flat upload
    copied: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # where other copies of the package were, not graded


def copy_package(submission: Path, target: Path) -> Intake:
    """Copy the regular `.py` files of the submission's package (see `_open_package` for
    where it may be) into the existing folder `target`."""
    intake = Intake()
    package = _open_package(submission, intake)
    if package is None:
        return intake
    intake.found = True
    try:
        with os.scandir(package) as entries:  # a folder of a million names is read no further than any other
            names = sorted(entry.name for entry in itertools.islice(entries, SCAN_ENTRIES))
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


def locate(submission: Path) -> Intake:
    """Where the package is in `submission` (found, location, other copies), copying nothing."""
    intake = Intake()
    package = _open_package(submission, intake)
    if package is not None:
        intake.found = True
        os.close(package)
    return intake


def _open_package(submission: Path, intake: Intake) -> int | None:
    """An open descriptor of the package folder, or None (with the reason when it is not
    simply missing). Students put it anywhere: `minigrad/` at the top, the upload being
    `minigrad/` itself, wrapping folders (`Downloads/hw/src/minigrad/`), or a flat upload
    whose `engine.py` sits in some folder. Of several copies, the one with the most `.py`
    files is graded, then the one with the most code (bytes), then the shallower, then the
    first by path: only what the upload holds decides, never file times, which each LMS's
    download sets its own way (the same files would be graded differently through Canvas and
    Gradescope). The others are named in `intake.refused`, so nobody has to guess."""
    if submission.is_symlink():
        intake.refused.append(f"{submission.name}: a symbolic link, not a folder; upload the files themselves")
        return None
    try:
        top = os.open(submission, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        found = _candidates(top, submission.name, intake)
        if not found:
            return None
        chosen, *others = sorted(found, key=lambda c: (-c.files, -c.size, len(c.parts), c.parts))
        intake.location = "/".join(chosen.parts) or ("minigrad" if submission.name == "minigrad" else "")
        intake.others = ["/".join(other.parts) or "." for other in others]
        if others:
            intake.refused.append(
                f"{', '.join(intake.others)}: another copy of the package, not graded; graded "
                f"{intake.location or '.'} (of several copies, the one with the most .py files, then the most code)"
            )
        try:
            return _open_path(top, chosen.parts)
        except OSError:
            return None  # replaced since it was searched
    finally:
        os.close(top)


SEARCH_DEPTH = 8  # folders below the upload's top: Downloads/course/hw1/src/minigrad/ and more
SEARCH_FOLDERS = 2000  # folders looked into, at most, so a huge tree costs little
SCAN_ENTRIES = 4096  # entries of one folder looked at, at most


@dataclass(frozen=True)
class _Candidate:
    parts: tuple[str, ...]  # the folder's path from the upload's top
    files: int  # its .py modules
    size: int  # their bytes together


def _candidates(top: int, top_name: str, intake: Intake) -> list[_Candidate]:
    """Every folder that holds the package: a `minigrad/` with `.py` files in it, or any
    folder with an `engine.py` (a flat upload); searched breadth first, never through a link,
    without the hidden folders uploads carry (`.git`, `__MACOSX`, `__pycache__`)."""
    found: list[_Candidate] = []
    queue: deque[tuple[str, ...]] = deque([()])
    looked = 0
    while queue and looked < SEARCH_FOLDERS:
        parts = queue.popleft()
        looked += 1
        try:
            folder = _open_path(top, parts)
        except OSError:
            continue
        try:
            modules, flat, subfolders = _scan(folder, parts, intake)
        finally:
            os.close(folder)
        named = (parts[-1] if parts else top_name) == "minigrad"
        if modules and (flat or named):
            found.append(_Candidate(parts, len(modules), sum(modules.values())))
        if len(parts) < SEARCH_DEPTH:  # never more waiting than will be looked into
            queue.extend((*parts, name) for name in subfolders[: max(0, SEARCH_FOLDERS - looked - len(queue))])
    return found


def _open_path(top: int, parts: tuple[str, ...]) -> int:
    """The folder at `parts` below `top`, each step opened without following a link."""
    folder = os.dup(top)
    for name in parts:
        try:
            deeper = os.open(name, DIRECTORY, dir_fd=folder)
        finally:
            os.close(folder)
        folder = deeper
    return folder


def _scan(folder: int, parts: tuple[str, ...], intake: Intake) -> tuple[dict[str, int], bool, list[str]]:
    """A folder's `.py` modules (name: size in bytes; links and other non-folders too, so
    that copying them says why each is refused), whether its `engine.py` is a regular file,
    and its real subfolders. A `minigrad` that is a link or a file is said: a student meant
    it as the package."""
    modules: dict[str, int] = {}
    subfolders: list[str] = []
    flat = False
    with os.scandir(folder) as entries:
        for _, entry in zip(range(SCAN_ENTRIES), entries):
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith((".", "__")):
                    subfolders.append(entry.name)
                continue
            if entry.name == "minigrad":
                where = "/".join((*parts, "minigrad"))
                if entry.is_symlink():
                    intake.refused.append(f"{where}/: a symbolic link, not a folder; upload the files themselves")
                else:
                    intake.refused.append(f"{where}: not a folder")
            elif MODULE_NAME.fullmatch(entry.name):
                modules[entry.name] = entry.stat(follow_symlinks=False).st_size
                flat |= entry.name == "engine.py" and entry.is_file(follow_symlinks=False)
    return modules, flat, sorted(subfolders)


def _read_regular(package: int, name: str, intake: Intake) -> bytes | None:
    try:
        fd = os.open(name, FILE, dir_fd=package)
    except OSError as error:  # O_NOFOLLOW on a link: ELOOP
        problem = LINK if error.errno == errno.ELOOP else f"unreadable ({error.strerror})"
        intake.refused.append(f"minigrad/{name}: {problem}; not graded")
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            problem = "not a regular file"
        elif info.st_nlink != 1:
            problem = "a hard link to another file"
        elif info.st_size > MAX_FILE_BYTES:
            problem = f"{info.st_size // 1024} KiB, over the {MAX_FILE_BYTES // 1024} KiB the grader reads of one file"
        else:
            return _read_all(fd, MAX_FILE_BYTES)
        intake.refused.append(f"minigrad/{name}: {problem}; not graded")
        return None
    finally:
        os.close(fd)


LINK = "a symbolic link, which the grader never follows (upload the file itself)"
# How each refusal of a file begins (above, and an archive's member left out by archives.py):
# what a student is told was refused, and why.
_FILE_REASON = re.compile(
    r"a symbolic link|unreadable|not a regular file|a hard link|\d+ KiB, over|over \d+ KiB|more than \d+ "
    r"|the package is over"
)


def _file_refusal(problem: str) -> tuple[str, str] | None:
    """(path, reason) of a file's refusal above; the reason never holds ": ", so the path (the
    student's own text) may hold anything."""
    path, _, reason = problem.rpartition(": ")
    return (path, reason) if path and _FILE_REASON.match(reason) else None


def refused_files(problems: list[str]) -> dict[str, str]:
    """The files a grading was refused, by path (`minigrad/nn.py`), each with its reason."""
    return dict(found for problem in problems if (found := _file_refusal(problem)))


def for_student(problem: str) -> str:
    """A refusal as a student reads it: "`minigrad/nn.py` was refused: a symbolic link, ...",
    the path marked as code; anything else (another copy of the package) as the grade's
    output says it, after "refused: "."""
    found = _file_refusal(problem)
    return f"`{found[0]}` was refused: {found[1]}" if found else f"refused: {problem}"


def read_head(path: Path, limit: int) -> bytes | None:
    """The first `limit` bytes of a regular file of an upload (a timestamp, a metadata file), or
    None: never through a link, and never from a FIFO or a device, where a read would wait for
    ever and hold the class."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return _read_all(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
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
    for folder, files in walk(submission):
        found += [str(Path(folder, f.name).relative_to(submission)) for f in files if not f.name.startswith(".")]
        if len(found) >= limit:
            return found[:limit] + ["..."]
    return found


WALK_ENTRIES = 20_000  # files and folders `walk` looks at, at most (a virtualenv has thousands)


def walk(top: Path, depth: int = SEARCH_DEPTH) -> Iterator[tuple[Path, list[os.DirEntry]]]:
    """Each folder under `top` with its entries that are not folders (files, links, FIFOs:
    the caller decides), breadth first, never through a link, without hidden folders, at most
    `depth` folders down and WALK_ENTRIES entries in all. Not os.walk: it recurses, and an
    upload two thousand folders deep would end the program."""
    queue: deque[tuple[Path, int]] = deque([(top, 0)])
    looked = 0
    while queue and looked < WALK_ENTRIES:
        folder, level = queue.popleft()
        try:
            with os.scandir(folder) as scan:
                entries = sorted(itertools.islice(scan, WALK_ENTRIES - looked), key=lambda entry: entry.name)
        except OSError:
            continue
        looked += len(entries)
        yield folder, [entry for entry in entries if not entry.is_dir(follow_symlinks=False)]
        if level < depth:
            queue.extend(
                (Path(entry.path), level + 1)
                for entry in entries
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith((".", "__"))
            )
