"""The child's NumPy: the kit's own, copied once to where every grading uid can read it.

Students may `import numpy` (an honest engine that does must not score 0), and the reference
computes part 4's answers with the kit's NumPy. At the bwrap and user levels the child runs
under a uid of its own, and the project folder, `.venv` included, is closed to other users,
so the kit's NumPy there is out of the child's reach. A system NumPy (Debian's
`python3-numpy`) may be missing, or another version than the reference's.

So the grader, as root, copies the kit's `numpy` (and `numpy.libs`, the libraries its wheel
carries) into a folder of its own outside the project, `/var/lib/minigrad/numpy-...`: owned
by root, folders 0755 and files 0644, so no grading uid can change what another grading
imports. The name holds the NumPy version, the child Python's extension tag and a hash of the
wheel's file list, so one copy serves every grading of one kit, and a new NumPy or Python gets
a copy of its own. The copy is made under a temporary name and renamed into place: a grading
that runs meanwhile sees all of it or none of it. bwrap binds it read-only; at the user level
the child gets its path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

HOME = Path("/var/lib/minigrad")
# A folder holding `numpy/` that the child must use instead: an operator's own NumPy, or an
# empty folder to see the grader refuse a child that cannot import NumPy.
OVERRIDE = "MINIGRAD_CHILD_NUMPY"


def kit_numpy() -> Path | None:
    """The folder holding the NumPy this (the parent's) interpreter imports, without importing it."""
    spec = importlib.util.find_spec("numpy")
    return Path(spec.origin).parent.parent if spec and spec.origin else None


def copy_for(python: str, tag: str) -> Path | None:
    """The root-owned copy of the kit's NumPy for a child running `python` (extension tag
    `tag`, e.g. `cpython-311-x86_64-linux-gnu`), made now if this process is root; None when
    there is none and this process cannot make one."""
    source = kit_numpy()
    if source is None:
        return None
    target = HOME / _name(source, tag)
    if safe_for_children(target):
        return target
    if os.geteuid() != 0 or not own_home():
        return None
    _make(source, target, python)
    return target if safe_for_children(target) else None


def safe_for_children(folder: Path) -> bool:
    """Whether `folder/numpy` may be offered to children: every user can read it, and only
    root or this user can change it (a folder a grading uid could write would let one
    student's code plant a `numpy` that another student's grading imports)."""
    package = folder / "numpy"
    try:
        info = package.lstat()
    except OSError:
        return False
    trusted = {0, os.geteuid()}
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid in trusted
        and not info.st_mode & 0o022
        and all(_unchangeable_by_others(p, trusted) for p in [folder, *folder.parents])
        and readable_by_all(package / "__init__.py")
    )


def _unchangeable_by_others(folder: Path, trusted: set[int]) -> bool:
    """Owned by a trusted uid, and writable by others at most as /tmp is (sticky: no one
    may rename or remove another's entries)."""
    info = folder.stat()
    return info.st_uid in trusted and (not info.st_mode & 0o002 or bool(info.st_mode & stat.S_ISVTX))


def readable_by_all(path: Path) -> bool:
    """Whether any uid can read `path`: it is readable by others, and every folder above it
    lets others in."""
    try:
        return bool(path.stat().st_mode & 0o004) and all(p.stat().st_mode & 0o005 == 0o005 for p in path.parents)
    except OSError:
        return False


def _name(source: Path, tag: str) -> str:
    """numpy-VERSION-TAG-HASH, the hash taken over the wheel's RECORD (every file and its hash)."""
    records = sorted(source.glob("numpy-*.dist-info/RECORD"))
    hashed = hashlib.sha256(tag.encode())
    version = "unknown"
    if records:
        hashed.update(records[-1].read_bytes())
        version = records[-1].parent.name.removeprefix("numpy-").removesuffix(".dist-info")
    else:  # no wheel metadata: the package's own files name the build
        hashed.update(str(source.resolve()).encode())
        hashed.update(str((source / "numpy" / "__init__.py").stat().st_mtime_ns).encode())
    return f"numpy-{version}-{tag}-{hashed.hexdigest()[:16]}"


def own_home() -> bool:
    """Make HOME root's folder, 0755, whatever the umask; refuse one that is a link or that
    others could change."""
    try:
        HOME.mkdir(mode=0o755, parents=True, exist_ok=True)
        info = HOME.lstat()
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            HOME.chmod(0o755)
            return True
    except OSError:
        pass
    return False


def _make(source: Path, target: Path, python: str) -> None:
    """Copy `numpy` and `numpy.libs` into a new folder beside `target`, compile what the
    wheel left uncompiled with the child's own Python (the child cannot write there), open it
    to reading, and rename it into place; a copy another grading finished first wins."""
    try:
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    except OSError:
        return  # a read-only or full disk: copy_for finds no copy, and the grader says so
    try:
        for name in ("numpy", "numpy.libs"):
            if (source / name).is_dir():
                shutil.copytree(source / name, partial / name, symlinks=True)
        subprocess.run(
            [python, "-I", "-S", "-m", "compileall", "-q", str(partial / "numpy")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=600,
        )
        for path in [partial, *partial.rglob("*")]:
            if not path.is_symlink():
                os.chown(path, 0, 0)
                path.chmod(0o755 if path.is_dir() else 0o644)
        os.rename(partial, target)
    except (OSError, subprocess.SubprocessError):
        pass  # another grading's copy won the rename, or none could be made: copy_for looks
    finally:
        shutil.rmtree(partial, ignore_errors=True)
