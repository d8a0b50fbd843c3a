"""Write grade files so that nothing planted in the output folder can redirect them.

The grader runs as root. An `--out` folder that already holds a `results.json` link would
otherwise make root write through it (and make its target world-readable). Each file is
written under a fresh name (`O_EXCL | O_NOFOLLOW`) and renamed into place: a rename replaces
whatever stood at the name, link or not, and never follows it.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path


def prepare_folder(folder: Path) -> None:
    """Create `folder` (closed to other users) if missing; refuse one that is a link."""
    if folder.is_symlink():
        raise SystemExit(f"{folder} is a symbolic link; give a real folder for the grades")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def write_new(folder: Path, name: str, data: bytes, mode: int = 0o644) -> Path:
    """Write `folder/name` with `data`, replacing any file or link of that name."""
    temporary = folder / f".{name}.{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(temporary, mode, follow_symlinks=False)  # whatever the umask took away
        os.replace(temporary, folder / name)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return folder / name


def read_json(path: Path) -> object | None:
    """A JSON file written here earlier, read without following a link planted at its name;
    None when it is missing, a link or not JSON."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        try:
            return json.loads(file.read())
        except ValueError:
            return None
