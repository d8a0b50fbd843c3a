"""Make the reference package and the checks' trusted helpers importable in the project tests,
and prove the tests leave the project's own files alone."""

import hashlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "reference"))
sys.path.insert(0, str(ROOT / "reference" / "checks"))


def snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Each file under `folder`: its bytes' hash, its mode and its number of links. Walked
    with a list, never through a link and without recursion, so a link or a deep folder that
    a test leaves there is reported, not a RecursionError."""
    found, folders = {}, [folder]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(path)
                    continue
                info = entry.stat(follow_symlinks=False)
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if entry.is_file(follow_symlinks=False) else "-"
                found[str(path.relative_to(ROOT))] = (digest, info.st_mode, info.st_nlink)
    return found


@pytest.fixture(scope="session", autouse=True)
def reference_untouched():
    """reference/ is byte- and mode-unchanged after the tests, and no file of it is linked from
    elsewhere: a hard link left in a temporary folder (pytest keeps its last three) makes the
    grader refuse `minigrad-grade reference` file by file as "a hard link to another file"."""
    before = snapshot(ROOT / "reference")
    yield
    after = snapshot(ROOT / "reference")
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    linked = sorted(name for name, (_, _, links) in after.items() if links != 1)
    assert not changed and not linked, f"the tests changed reference/: {changed}; hard-linked: {linked}"
