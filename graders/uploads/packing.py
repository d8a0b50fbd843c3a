"""A submission packed for grading anywhere: exactly the files the grader would copy.

The class command never hands a grading its student's upload. It runs the grader's own intake
on the upload, packs what the intake copied into a small tar (always as `minigrad/`: where the
upload had it is the student's own text, a folder name that may hold anything, so it is kept
beside the archive as `location`, never inside it), and grades the unpacked copy,
on this machine or on a cluster worker without a shared filesystem. The intake's caps bound
the archive (32 files, 4 MiB); its refusals (a link, a FIFO, a hard link) travel beside the
archive as words, since the refused thing itself must never travel. The archive is built
the same way every time (sorted names, no times, no owners), so its hash is the submission's
fingerprint: `--resume` compares it, and a cluster task is named by it.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graders.uploads import intake

from . import archives


@dataclass(frozen=True)
class Packed:
    archive: bytes
    refused: tuple[str, ...]  # the intake's refusals, in its words
    digest: str  # sha256 of the archive and the refusals
    found: bool = True  # whether the intake found a package at all
    location: str = ""  # where, from the upload's top ("" for its top)
    others: tuple[str, ...] = ()  # other copies of the package, not graded


def pack(upload: Path) -> Packed:
    """The upload's graded files as a tar, with what the intake refused."""
    with tempfile.TemporaryDirectory(prefix="minigrad-pack-") as copy:
        taken = intake.copy_package(upload, Path(copy))
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in taken.copied:  # already sorted by the intake
                data = (Path(copy) / name).read_bytes()
                member = tarfile.TarInfo(f"minigrad/{name}")
                member.size, member.mode = len(data), 0o644
                tar.addfile(member, io.BytesIO(data))
    archive = buffer.getvalue()
    digest = hashlib.sha256(archive)
    for problem in taken.refused:
        digest.update(f"\0refused\0{problem}".encode("utf-8", "surrogateescape"))  # file names may not be UTF-8
    return Packed(archive, tuple(taken.refused), digest.hexdigest(), taken.found, taken.location, tuple(taken.others))


def unpack(archive: bytes, folder: Path) -> None:
    """Unpack into the existing `folder` by the rules of archives.py (tarfile's `data` filter,
    written out, since Debian 12's Python 3.11.2 has no extraction filters): no links,
    devices, absolute paths or paths out of `folder`, whatever the archive claims."""
    archives.unpack_tar(archive, folder)
