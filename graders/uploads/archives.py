"""Unpack a student's archive (`.zip`, `.tar`, `.tar.gz`/`.tgz`) without trusting any of it.

The class command runs as root, and an archive is the student's to shape: member names that
climb out (`../x`, `/x`, `//x`, `C:x`, `a\\b`), links, devices, members that claim one size
and inflate to another, thousands of members, archives inside archives, a central directory
in reverse order so that each member is a seek back through a compressed stream. So:

- every budget is checked against what an entry's header claims *before* it is read (members,
  bytes per file and in all, compression ratio, nesting depth), and again while its bytes
  stream in 64 KiB at a time, and the whole upload has a time budget;
- a zip is only ever opened from a file on disk (an archive inside another is first copied out
  under the same budgets), and its members are read in the order they lie in the file;
- a tar is read as a stream (`r|`), forward only, through a reader that stops at the byte
  budget and the ratio, so even tarfile's own reads of long headers are bounded; an extended
  header (pax, GNU long name or link) is refused by its claimed size before tarfile reads it,
  since tarfile parses one whole in calls the clock never interrupts (see `_Header`), and
  gzip's header is read through a file that asks the clock first (see `_Timed`);
- every member name must be a plain relative path (the rules of tarfile's `data` filter, which
  is also asked when this Python has it), and only regular files are written: new files
  (`O_EXCL | O_NOFOLLOW`) in folders this module made, inside the student's folder;
- only what grading can use is written: `.py` files (and notebooks, so that code not in a
  package can be pointed out) and archives to open in turn; other members are counted, never
  written.

Anything wrong with the archive itself raises `Refused` with the reason in words: the caller
makes it that student's refusal, never the batch's crash. Members left out (a link, a large
file) are noted in `Budget.notes`.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import stat
import tarfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from graders.uploads import intake

ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
CODE = (".py", ".ipynb")
MAX_MEMBERS = 2000  # entries of all of one student's archives together
MAX_CODE_BYTES = 512 * 1024  # one .py or notebook: the grader copies none larger
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024  # an archive inside another, unpacked
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # everything read out of one student's archives
MAX_RATIO = 100  # unpacked bytes per compressed byte, beyond the first MiB
RATIO_SLACK = 1024 * 1024
MAX_DEPTH = 3  # an LMS download's student zip, an archive in it, and one more
SECONDS = 8.0  # to unpack one student's upload
CHUNK = 64 * 1024
MAX_NAME = 1024  # characters of a member's path
MAX_PARTS = 32  # folders in a member's path: deeper trees only cost (removing one recurses)
ENTRY_BYTES = 1024  # a zip's central directory per member allowed, on average
# An extended header (pax, GNU long name or link), and the global pax headers of one tar in
# all: tarfile before 3.11.10 and 3.12.6 searches a pax header in time quadratic in its size
# (CVE-2024-6232) inside one C call: 0.1 s at 8 KiB, 0.46 s at 16 KiB, 33 s at 120 KB on the
# machine that measured it. An honest one holds a path the kit accepts (MAX_NAME characters:
# at most 4 KiB of UTF-8), times, and a few attributes (a Mac's quarantine and origin: a few
# hundred bytes); a name beyond that is refused anyway.
MAX_HEADER = 8 * 1024
EXTENDED = {
    tarfile.XHDTYPE: "pax",
    tarfile.SOLARIS_XHDTYPE: "pax",
    tarfile.XGLTYPE: "global pax",
    tarfile.GNUTYPE_LONGNAME: "GNU long name",
    tarfile.GNUTYPE_LONGLINK: "GNU long link",
}
# Zip methods whose every read is bounded: zipfile inflates deflate at most as much as is
# asked, but hands bzip2 and LZMA all a read's compressed bytes make (402 bytes of bzip2 are
# 512 MiB of zeros, made in one 10 s call whatever size the member claims).
READ_IN_STEPS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
DRIVE = re.compile(r"^[A-Za-z]:")


class Refused(Exception):
    """The archive cannot be unpacked; the message says why, for the instructor and student."""


@dataclass
class Budget:
    """What one student's upload may still spend, and what was left out of it."""

    members: int = MAX_MEMBERS
    bytes: int = MAX_TOTAL_BYTES
    deadline: float = field(default_factory=lambda: time.monotonic() + SECONDS)
    notes: list[str] = field(default_factory=list)

    def member(self, name: str) -> None:
        self.members -= 1
        if self.members < 0:
            raise Refused(f"more than {MAX_MEMBERS} files in the archive (at {name})")
        self.clock()

    def spend(self, count: int) -> None:
        self.bytes -= count
        if self.bytes < 0:
            raise Refused(f"more than {MAX_TOTAL_BYTES // 1024**2} MiB unpacked")
        self.clock()

    def clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise Refused(f"unpacking took over {SECONDS:.0f} s")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVES)


def wanted(name: str) -> bool:
    """Whether a member is written at all: code, or an archive to open in turn."""
    return name.lower().endswith(CODE) or is_archive(name)


def safe_path(name: str) -> PurePosixPath:
    """`name` as a relative path that stays where it is unpacked, or Refused: the rules of
    tarfile's `data` filter (no absolute path, no `..`), and what a zip can also carry (a
    drive letter, a backslash, `//`, a control character, a name that is not text)."""
    problem = None
    if "\\" in name or DRIVE.match(name):
        problem = "a Windows path (backslash or drive letter)"
    elif name.startswith("/"):
        problem = "an absolute path"
    elif any(ord(c) < 32 or ord(c) == 127 for c in name):
        problem = "a control character in the name"
    elif len(name) > MAX_NAME:
        problem = f"a name over {MAX_NAME} characters"
    else:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            problem = "a name that is not UTF-8 text"
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if problem is None and ".." in parts:
        problem = "a path out of its folder (..)"
    if problem is None and not parts:
        problem = "an empty name"
    if problem is None and len(parts) > MAX_PARTS:
        problem = f"a path over {MAX_PARTS} folders deep"
    if problem:
        raise Refused(f"a member has {problem}: {name!r}")
    return PurePosixPath(*parts)


def unpack(archive: Path, folder: Path, budget: Budget, depth: int = 1) -> None:
    """Unpack `archive` (a file this process made or was given) into the existing `folder`;
    archives found inside are unpacked in their place (see `unpack_inner`)."""
    if depth > MAX_DEPTH:
        raise Refused(f"{archive.name}: archives nested more than {MAX_DEPTH} deep")
    try:
        if archive.name.lower().endswith(".zip"):
            written = _zip(archive, folder, budget)
        else:
            with archive.open("rb") as raw:
                written = _tar(raw, folder, budget)
    except Refused as refused:
        raise Refused(f"{archive.name}: {refused}") from None
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError, ValueError) as exc:
        raise Refused(f"{archive.name}: not a readable archive ({type(exc).__name__}: {exc})") from None
    except (NotImplementedError, RuntimeError) as exc:  # zipfile: an unknown method, a password
        raise Refused(f"{archive.name}: cannot be read ({exc})") from None
    unpack_inner(written, budget, depth + 1)


def unpack_inner(written: list[Path], budget: Budget, depth: int) -> None:
    """Each archive among the files `written` unpacked in its place: `hw1.zip` becomes a
    folder `hw1.zip/`, so where the package was found names the archive it came in."""
    for inner in written:
        if not is_archive(inner.name):
            continue
        target = inner.with_name(inner.name + ".unpacking")
        try:
            target.mkdir()
        except OSError as exc:
            budget.notes.append(f"{inner.name}: not unpacked ({exc.strerror or exc})")
            continue
        unpack(inner, target, budget, depth)
        inner.unlink()
        target.rename(inner)


def copy_folder(source: Path, folder: Path, budget: Budget) -> list[str]:
    """A student's folder that holds archives, copied into the existing `folder` (code and
    archives only, regular files with one link, never through a link; hidden folders left
    out), each archive then unpacked in its place. The upload itself is never written to.
    Returns why each archive that could not be unpacked was not (it is left out, so a package
    elsewhere in the folder is still graded); a file whose name breaks the rules is noted."""
    written, problems = [], []
    for top, files in intake.walk(source):
        here = top.relative_to(source)
        for name in (entry.name for entry in files if wanted(entry.name)):
            budget.member(name)
            try:
                path = safe_path(str(here / name))
            except Refused as refused:
                budget.notes.append(f"left out: {refused}")
                continue
            if (target := _copy_file(top / name, folder, path, budget)) is not None:
                written.append(target)
    for archive in written:
        try:
            unpack_inner([archive], budget, 1)
        except Refused as refused:
            problems.append(str(refused))
            shutil.rmtree(archive.with_name(archive.name + ".unpacking"), ignore_errors=True)
            archive.unlink(missing_ok=True)
    return problems


def _copy_file(source: Path, folder: Path, path: PurePosixPath, budget: Budget) -> Path | None:
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        budget.notes.append(f"{path}: a symbolic link or unreadable; left out")
        return None
    with os.fdopen(fd, "rb") as data:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            budget.notes.append(f"{path}: not a regular file with one link; left out")
            return None
        if not _check_claim(path, info.st_size, None, budget):
            return None
        target = _write(folder, path, data, info.st_size, budget)
    if target is not None:
        _set_time(target, info.st_mtime)
    return target


@contextmanager
def open_zip(path: Path, most: int) -> Iterator[tuple[zipfile.ZipFile, set[str]]]:
    """`path` as a zip, once its end record shows at most `most` members in a directory of a
    size to match (zipfile makes an object per entry before anyone can count them), and the
    names that are flagged UTF-8 but are not: zipfile stops at the first such name, so they
    are read as cp437 instead and returned, for the caller to refuse what they name."""
    with path.open("rb") as file:
        end = zipfile._EndRecData(file)  # the end record zipfile reads first; no public way to it
        if not end:
            raise zipfile.BadZipFile("File is not a zip file")
        count, size = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
        if count > most or size > most * ENTRY_BYTES:
            raise Refused(f"{count} files, over the {most} allowed")
        try:
            bundle, bad = zipfile.ZipFile(file), set()
        except UnicodeDecodeError:
            start = end[zipfile._ECD_LOCATION] - size
            if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
                start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
            file.seek(max(start, 0))
            patches, bad = _bad_names(file.read(size), max(start, 0))
            bundle = zipfile.ZipFile(_Patched(file, patches))
        with bundle:
            yield bundle, bad


def _bad_names(directory: bytes, start: int) -> tuple[dict[int, int], set[str]]:
    """The central directory's entries whose names are flagged UTF-8 and are not: the byte to
    change (the flag cleared) at each one's file offset, and the names as cp437 will read them."""
    patches, bad, at = {}, set(), 0
    while directory[at : at + 4] == b"PK\x01\x02" and at + 46 <= len(directory):
        lengths = [int.from_bytes(directory[at + i : at + i + 2], "little") for i in (28, 30, 32)]
        name = directory[at + 46 : at + 46 + lengths[0]]
        if directory[at + 9] & 0x08:  # bit 11 of the flags: the name is UTF-8
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                patches[start + at + 9] = directory[at + 9] & ~0x08
                bad.add(name.decode("cp437"))
        at += 46 + sum(lengths)
    return patches, bad


class _Patched:
    """A zip file read with a few bytes changed (see `open_zip`), never written."""

    def __init__(self, file: BinaryIO, patches: dict[int, int]) -> None:
        self.file, self.patches = file, patches

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.file.seek(offset, whence)

    def tell(self) -> int:
        return self.file.tell()

    def seekable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        start = self.file.tell()
        data = self.file.read(size)
        hits = [at for at in self.patches if start <= at < start + len(data)]
        if not hits:
            return data
        changed = bytearray(data)
        for at in hits:
            changed[at - start] = self.patches[at]
        return bytes(changed)


def _zip(archive: Path, folder: Path, budget: Budget) -> list[Path]:
    written = []
    with open_zip(archive, MAX_MEMBERS) as (bundle, bad):
        if bad:
            raise Refused(f"a member's name is marked UTF-8 but is not: {sorted(bad)[0]!r}")
        members = sorted(bundle.infolist(), key=lambda info: info.header_offset)  # forward only
        if len(members) > budget.members:
            raise Refused(f"{len(members)} files, over the {MAX_MEMBERS} allowed")
        for info in members:
            budget.member(info.filename)
            path = safe_path(info.filename)
            if (target := copy_member(bundle, info, folder, path, budget)) is not None:
                written.append(target)
    return written


def copy_member(
    bundle: zipfile.ZipFile, info: zipfile.ZipInfo, folder: Path, path: PurePosixPath, budget: Budget
) -> Path | None:
    """One zip member written at `folder/path` when grading can use it (code, an archive);
    its claims checked first. Returns the file written, or None."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if info.is_dir() or kind == stat.S_IFDIR:
        return None
    if kind not in (0, stat.S_IFREG):  # a link is stored as a file holding its target
        budget.notes.append(f"{path}: not a regular file (a link?); left out")
        return None
    if not wanted(path.name) or not _check_claim(path, info.file_size, info.compress_size, budget):
        return None
    if info.flag_bits & 0x1:
        raise Refused(f"{path} is password-protected; upload it without a password")
    if info.compress_type not in READ_IN_STEPS:
        method = zipfile.compressor_names.get(info.compress_type, f"method {info.compress_type}")
        raise Refused(f"{path} is compressed with {method}; zip it again with the usual compression (deflate)")
    try:
        with bundle.open(info) as data:
            target = _write(folder, path, data, info.file_size, budget)
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
        raise Refused(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None
    if target is not None:
        _set_time(target, _zip_time(info.date_time))
    return target


def _tar(raw: BinaryIO, folder: Path, budget: Budget) -> list[Path]:
    """A tar, gzipped or not, read forward only."""
    written = []
    compressed = raw.read(2) == b"\x1f\x8b"
    raw.seek(0)
    stream = gzip.GzipFile(fileobj=_Timed(raw, budget), mode="rb") if compressed else raw
    with tarfile.open(
        fileobj=_Capped(stream, raw, budget), mode="r|", errors="surrogateescape", tarinfo=_Header
    ) as tar:
        for member in tar:
            budget.member(member.name)
            path = safe_path(member.name)
            if member.size < 0:  # a base-256 size field, or a pax `size`, can say so
                raise Refused(f"{path}: a size below zero ({member.size} bytes)")
            if member.isdir():
                continue
            if not member.isreg():
                budget.notes.append(f"{path}: not a regular file (a link or a device); left out")
                continue
            if getattr(tarfile, "data_filter", None):  # Python 3.11.4 and later
                try:
                    tarfile.data_filter(member, str(folder))
                except tarfile.FilterError as exc:
                    raise Refused(f"{path}: {exc}") from None
            if member.size > budget.bytes:
                raise Refused(f"{path}: {member.size} bytes, over what is left of the budget")
            if not wanted(path.name) or not _check_claim(path, member.size, None, budget):
                continue
            data = tar.extractfile(member)
            target = _write(folder, path, data, member.size, budget) if data else None
            if target is not None:
                _set_time(target, member.mtime)
                written.append(target)
    return written


def _check_claim(path: PurePosixPath, size: int, compressed: int | None, budget: Budget) -> bool:
    """What a member's header claims, checked before a byte of it is read: False (noted) for
    a code file too large to grade, which is left out; Refused for an archive too large, a
    bomb's ratio, or more than the budget has left."""
    if not is_archive(path.name) and size > MAX_CODE_BYTES:
        budget.notes.append(f"{path}: over {MAX_CODE_BYTES // 1024} KiB, the most the grader reads; left out")
        return False
    if size > MAX_ARCHIVE_BYTES:
        raise Refused(f"{path}: {size} bytes unpacked, over the {MAX_ARCHIVE_BYTES // 1024**2} MiB allowed")
    if compressed is not None and size > RATIO_SLACK and size > MAX_RATIO * max(compressed, 1):
        raise Refused(f"{path}: compressed {size // max(compressed, 1)} to 1 (a zip bomb?)")
    if size > budget.bytes:
        raise Refused(f"{path}: {size} bytes, over what is left of the {MAX_TOTAL_BYTES // 1024**2} MiB budget")
    return True


def _write(folder: Path, path: PurePosixPath, data: BinaryIO, size: int, budget: Budget) -> Path | None:
    """A new regular file at `folder/path`, never through a link, at most `size` bytes (a
    member may lie about its size); None, with a note, when the name is already taken."""
    target = folder.joinpath(*path.parts)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        budget.notes.append(f"{path}: left out ({exc.strerror or exc})")
        return None
    with os.fdopen(fd, "wb") as file:
        left = size
        while chunk := data.read(min(CHUNK, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise Refused(f"{path}: more bytes than its header says")
            budget.spend(len(chunk))
            file.write(chunk)
    return target


def _set_time(path: Path, when: float | None) -> None:
    """Keep a member's time: with --file-times it is the upload's hand-in time. The time
    is the student's to choose: one no file can have (NaN, infinite, beyond time_t) leaves the
    file its own; one a file can have but no datetime can (the year 11476, which tmpfs keeps)
    is kept, and reading it as a hand-in time gives none (`layouts.moment_of`), where dropping
    it here would give the time of unpacking instead."""
    if when is not None:
        try:
            os.utime(path, (when, when), follow_symlinks=False)
        except (OSError, OverflowError, ValueError):
            pass  # a time no file can have: the file keeps its own


def _zip_time(date_time: tuple[int, ...]) -> float | None:
    """A zip's DOS date and time as seconds, or None: each field is the zip's to fill (month 0
    or 15, hour 31, second 62), and mktime is left to carry them over or refuse them."""
    try:
        return time.mktime((*date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


class _Header(tarfile.TarInfo):
    """A tar header that refuses an extended header (pax, GNU long name or link) over
    MAX_HEADER by the size it claims, and global pax headers over MAX_HEADER in all, before
    tarfile reads a byte of them. `_proc_member` is where tarfile reads what follows a header
    and, by its own comment, the place a subclass overrides; `tarinfo=` is how a TarFile is
    given one."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        kind = EXTENDED.get(self.type)
        held = sum(len(key) + len(value) for key, value in tar.pax_headers.items()) if kind == "global pax" else 0
        if kind and not 0 <= self.size <= MAX_HEADER - held:
            wrong = "below zero" if self.size < 0 else f"over the {MAX_HEADER // 1024} KiB allowed"
            advice = "upload a zip, or a tar made without extended attributes"
            raise Refused(f"a {kind} header of {self.size} bytes, {wrong}; {advice}")
        return super()._proc_member(tar)


class _Timed:
    """The compressed file under gzip, asking the budget's clock before every read: gzip
    reads a header's file name and comment a byte at a time until a NUL, all in one read of
    its own (a 32 MiB name: 5 s), which the clock after each read would only see at the end."""

    def __init__(self, file: BinaryIO, budget: Budget) -> None:
        self.file, self.budget = file, budget

    def read(self, size: int = -1) -> bytes:
        self.budget.clock()
        return self.file.read(size)


class _Capped:
    """A tar stream that stops at the byte budget and at a ratio of unpacked to compressed
    bytes that no honest archive reaches: tarfile reads everything through it, skipped
    members and long headers (a pax header may claim a gigabyte) included."""

    def __init__(self, stream: BinaryIO, raw: BinaryIO, budget: Budget) -> None:
        self.stream, self.raw, self.budget, self.count = stream, raw, budget, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(min(size, CHUNK) if size >= 0 else CHUNK)
        self._take(len(chunk))
        return chunk

    def _take(self, count: int) -> None:
        self.count += count
        if self.count > MAX_TOTAL_BYTES:
            raise Refused(f"more than {MAX_TOTAL_BYTES // 1024**2} MiB in the tar")
        if self.count > RATIO_SLACK and self.count > MAX_RATIO * max(self.raw.tell(), 1):
            raise Refused(f"compressed over {MAX_RATIO} to 1 (a tar bomb?)")
        self.budget.clock()


def unpack_tar(archive: bytes, folder: Path) -> None:
    """Unpack a tar held in memory (the class command's packed files, made to be small) into
    the existing `folder` by the rules above, on any Python: 3.11.2 has no extraction filters."""
    _tar(io.BytesIO(archive), folder, Budget())
