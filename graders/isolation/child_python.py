"""The child's Python: the very interpreter the kit was installed with, where every grading uid
can run it.

The reference computes the expected values with the kit's own Python and NumPy, and the tests
ran on it; a child under another Python (the system's /usr/bin/python3, say) would grade with
another build, and cannot load the kit's NumPy at all when its version differs. At the bwrap
and user levels the child runs under a uid of its own, so an interpreter in a private folder
(pyenv, uv or conda in /root or an instructor's home, 0700) is out of its reach.

So where the kit's interpreter is readable by everyone (Debian's, /usr/local, /opt) the child
runs it as it is. Otherwise the grader, as root, copies that installation (the executable, its
libpython, the standard library without its tests, IDLE, Tk demos and site-packages) into
`/var/lib/minigrad/python-...`, owned by root, folders 0755 and files 0644 (0755 where the
original may be run), under a temporary name renamed into place, as child_numpy.py does for
NumPy; the name holds the version, the extension tag and the files' sizes and times, so one
copy serves every grading of one installation. The copy is the same build: its compiled files
and their byte code are the originals. Failing both, the grading is refused with the fix; the
child never runs a different Python.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from . import child_numpy

# Folders of the standard library no grading imports (tests, the IDE, Tk, pip's bootstrap) and
# the installation's own site-packages (the child runs with -S: no site-packages at all).
LEFT_OUT = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages", "lib2to3", "__phello__"}


def describe() -> dict[str, str]:
    """The child's Python as results.json records it: the kit's own, at every level."""
    return {"implementation": platform.python_implementation(), "version": platform.python_version()}


@functools.cache
def executable() -> str:
    """The interpreter the child runs at the bwrap and user levels: the kit's own, or a
    root-owned copy of it; RuntimeError, naming the fix, when neither can be had."""
    own = Path(os.path.realpath(sys.executable))
    if all(child_numpy.readable_by_all(path) for path in _needed(own)):
        return str(own)
    copy = _copy()
    if copy is not None:
        return str(copy / "bin" / own.name)
    unreadable = next(path for path in _needed(own) if not child_numpy.readable_by_all(path))
    raise RuntimeError(
        f"the grading's child must run the kit's own Python ({own}, {describe()['version']}), and the sandbox's "
        f"user cannot read {unreadable}. Fix: run the grader as root (it copies this Python to {child_numpy.HOME}), "
        "or remove .venv and make it again with a Python every user can read "
        f"(make PYTHON=/usr/bin/python{sys.version_info.major}.{sys.version_info.minor})"
    )


def environment(python: str) -> dict[str, str]:
    """What the child's environment must hold for `python` to start: a copy of an interpreter
    linked to its own libpython (pyenv's) finds it in the copy, not in the private folder its
    run path names."""
    lib = Path(python).parent.parent / "lib"
    if child_numpy.HOME in Path(python).parents and any(lib.glob("libpython*")):
        return {"LD_LIBRARY_PATH": str(lib)}
    return {}


def _needed(own: Path) -> list[Path]:
    """The files the child must read to start this interpreter: itself, its libpython, and the
    standard library (os.py stands for it)."""
    return [own, Path(sysconfig.get_path("stdlib")) / "os.py", *filter(None, [_libpython()])]


def _libpython() -> Path | None:
    """The shared libpython the interpreter is linked to (pyenv builds one), or None."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return None
    name, folder = sysconfig.get_config_var("INSTSONAME"), sysconfig.get_config_var("LIBDIR")
    path = Path(folder or "", name or "")
    return path if name and path.is_file() else None


def _copy() -> Path | None:
    """The root-owned copy of this installation, made now if this process is root."""
    own = Path(os.path.realpath(sys.executable))
    target = child_numpy.HOME / _name(own)
    if _complete(target, own):
        return target
    if os.geteuid() != 0 or not child_numpy.own_home():
        return None
    _make(own, target)
    return target if _complete(target, own) else None


def _complete(target: Path, own: Path) -> bool:
    """A finished copy (it is renamed into place whole) that only root can change: a copy a
    grading uid could write would let one student's code change what runs another's."""
    if not child_numpy.readable_by_all(target / "bin" / own.name):
        return False
    info = target.stat()
    return info.st_uid == 0 and not info.st_mode & 0o022


def _name(own: Path) -> str:
    """python-VERSION-TAG-HASH, the hash over where the installation is and its files' sizes and
    times: a rebuilt or upgraded Python gets a copy of its own."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    hashed = hashlib.sha256(sys.version.encode())
    for path in (own, stdlib / "os.py", *filter(None, [_libpython()])):
        info = path.stat()
        hashed.update(f"{path}:{info.st_size}:{info.st_mtime_ns}".encode())
    tag = importlib.machinery.EXTENSION_SUFFIXES[0].strip(".").removesuffix(".so")
    return f"python-{platform.python_version()}-{tag}-{hashed.hexdigest()[:16]}"


def _make(own: Path, target: Path) -> None:
    """Copy bin/python, lib/libpython and lib/pythonX.Y into a new folder beside `target`,
    keeping every file's time (so the byte code stays valid), make root own it, open it to
    reading, and rename it into place; a copy another grading finished first wins."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    try:
        partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    except OSError:
        return  # a read-only or full disk: executable() refuses, naming the fix
    try:
        (partial / "bin").mkdir()
        (partial / "lib").mkdir()
        shutil.copy2(own, partial / "bin" / own.name)
        if (libpython := _libpython()) is not None:
            shutil.copy2(libpython, partial / "lib" / libpython.name)
        ignore = shutil.ignore_patterns(*LEFT_OUT, "config-*")
        shutil.copytree(stdlib, partial / "lib" / stdlib.name, symlinks=True, ignore=ignore)
        for path in [partial, *partial.rglob("*")]:
            if not path.is_symlink():
                os.chown(path, 0, 0)
                path.chmod(0o755 if path.is_dir() or path.stat().st_mode & 0o100 else 0o644)
        os.rename(partial, target)
    except OSError:
        pass  # another grading's copy won the rename, or none could be made: executable() looks again
    finally:
        shutil.rmtree(partial, ignore_errors=True)
