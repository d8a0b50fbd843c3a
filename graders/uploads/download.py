"""An LMS's bulk download: one zip whose file names carry the student (Canvas's, Moodle's).

Each platform's naming is its own module's (lms_zip.py, moodle.py); what they share is here:
the files grouped by the student their name carries (a name that carries none is said), each
student's files unpacked into a folder of their own under one budget, and a student whose files
break a rule (a path out of their folder, a bomb, a corrupt or encrypted archive, a name that
is not text) refused with the reason while the others go on.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import archives

MAX_ENTRIES = 200_000  # files in one download: a large course's, and a bound on zipfile's memory
Entries = list[tuple[zipfile.ZipInfo, re.Match]]


@dataclass
class Upload:
    """One student's files, as found in the download."""

    name: str  # as the platform wrote it ("" when anonymous)
    user: str  # the platform's key: a Canvas user id (`anon_{id}` when anonymous), a Moodle participant id
    folder: Path
    late: bool = False
    refused: str = ""  # why the files could not be unpacked
    notes: list[str] = field(default_factory=list)  # files left out, renamed or combined
    attachment: str = ""  # Canvas: the id of the file it stored last, which its comment upload names

    @property
    def anonymous(self) -> bool:
        return self.user.startswith("anon_")


@dataclass(frozen=True)
class Naming:
    """How one platform names a download's files."""

    pattern: re.Pattern  # a member's whole name
    student: Callable[[re.Match], str]  # the key of the student a name carries
    written: str  # how the platform writes names, for the warning
    upload: Callable[[str, Entries, Path], Upload]  # a student's Upload, from their key and entries
    unpack: Callable[[zipfile.ZipFile, Entries, Upload], None]  # their files into upload.folder


def number(digits: str) -> tuple[int, str]:
    """A digit string's order as a number, without converting it (a 4,400-digit id is an
    attack on int(), not a submission)."""
    digits = digits.lstrip("0")
    return (len(digits), digits)


def unpack(archive: Path, staging: Path, naming: Naming) -> tuple[list[Upload], list[str]]:
    """Each student's files unpacked into `staging/{n}/`; returns the uploads (sorted by key,
    anonymous ones last) and a warning for every entry that names no student."""
    try:
        with archives.open_zip(archive, MAX_ENTRIES) as (bundle, bad):
            return _unpack(bundle, bad, staging, naming)
    except (OSError, zipfile.BadZipFile, archives.Refused) as exc:
        raise SystemExit(f"{archive}: not a readable zip ({exc})") from exc


def _unpack(bundle: zipfile.ZipFile, bad: set[str], staging: Path, naming: Naming) -> tuple[list[Upload], list[str]]:
    """The download's files grouped by student; a student whose file name is not text (`bad`:
    flagged UTF-8, and not) is refused, the others go on."""
    warnings: list[str] = []
    by_key: dict[str, Entries] = defaultdict(list)
    for info in sorted(bundle.infolist(), key=lambda info: info.header_offset):
        if info.is_dir():
            continue
        match = naming.pattern.fullmatch(info.filename)
        if match is None:
            warnings.append(f"{info.filename}: the name carries no student ({naming.written})")
            continue
        by_key[naming.student(match)].append((info, match))
    uploads = []
    for n, key in enumerate(sorted(by_key, key=lambda key: (key.startswith("anon_"), number(key), key))):
        entries = by_key[key]
        folder = staging / str(n)
        folder.mkdir(parents=True)
        upload = naming.upload(key, entries, folder)
        try:
            if named := [info.filename for info, _ in entries if info.filename in bad]:
                raise archives.Refused(f"{named[0]}: a file name marked UTF-8 that is not")
            naming.unpack(bundle, entries, upload)
        except (archives.Refused, OSError) as exc:
            upload.refused = str(exc)
            shutil.rmtree(folder)  # nothing of a refused upload is kept
        uploads.append(upload)
    return uploads, warnings
