"""The child runs the kit's own Python at every level, never another: where the grading uid
cannot read it (pyenv's in /root), a root-owned copy of the same build; where no copy can be
made, a refusal naming the fix; and a child that would run another build is refused."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from graders.isolation import child_numpy, child_python, identity, sandbox, selftest
from graders.isolation.workdir import prepare_workdir

from grading import needs_isolation


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch):
    """A fresh /var/lib/minigrad under /tmp (which the grading uid can reach), and no answer
    remembered from the real one."""
    folder = Path(tempfile.mkdtemp(prefix="minigrad-home-"))
    folder.chmod(0o755)
    monkeypatch.setattr(child_numpy, "HOME", folder / "lib")
    for cached in (child_python.executable, sandbox.numpy_for):
        cached.cache_clear()
    yield folder / "lib"
    for cached in (child_python.executable, sandbox.numpy_for):
        cached.cache_clear()
    shutil.rmtree(folder)


def probe_imports(python_version: str) -> dict:
    """What a user-level child answers when asked to import the course's modules on a Python
    whose sys.version is `python_version`."""
    with identity.claimed() as who:
        workdir, _ = prepare_workdir(None, who)
        try:
            asked = json.dumps({"imports": True, "version": python_version}).encode()
            ran = sandbox.run(sandbox.Isolation("user", who), workdir, "probe.py", asked, 60)
        finally:
            shutil.rmtree(workdir)
    return json.loads(ran.stdout)


@needs_isolation
def test_a_grading_uid_runs_a_root_owned_copy_of_the_kits_own_python(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As for pyenv's Python in /root (0700): the copy is the same build, sys.version to the last
    character, and a grading uid imports the standard library and NumPy with it."""
    monkeypatch.setattr(child_python, "_needed", lambda own: [Path("/root/.unreadable-by-others")])
    python = sandbox.python_for("user")
    copy = Path(python).parent.parent
    assert copy.parent == home and copy.name.startswith(f"python-{child_python.describe()['version']}-")
    assert [p.name for p in home.iterdir()] == [copy.name]  # no partial copy left
    for path in [copy, *copy.rglob("*")]:
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode):
            assert info.st_uid == 0 and not info.st_mode & 0o022 and info.st_mode & 0o004, path
    assert not (copy / "lib" / Path(sysconfig.get_path("stdlib")).name / "site-packages").exists()
    assert probe_imports(sys.version) == {"imports": None}
    assert child_python.executable() == python  # made once


@needs_isolation
def test_a_child_on_another_python_is_refused_with_the_fix(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit's version as the probe is told it differs from the child's: no grade, and the fix."""
    monkeypatch.setattr(child_python, "_needed", lambda own: [Path("/root/.unreadable-by-others")])
    answer = probe_imports("3.9.0 (another build)")["imports"]
    assert answer == f"the child runs another Python: {sys.version}, not the kit's 3.9.0 (another build)"
    python = sandbox.python_for("user")
    monkeypatch.setattr(sys, "version", "3.9.0 (another build)")
    refusal = selftest.missing_imports(sandbox.Isolation("user", None), None)
    assert refusal is not None and "the child runs another Python" in refusal
    assert refusal.endswith(f"Fix: remove {Path(python).parent.parent} (the grader copies the kit's Python again).")


def test_without_root_a_private_python_is_refused_with_the_fix(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_python, "_needed", lambda own: [Path("/root/.unreadable-by-others")])
    monkeypatch.setattr(child_python.os, "geteuid", lambda: 1000)
    with pytest.raises(RuntimeError) as refused:
        sandbox.python_for("bwrap")
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert str(refused.value).endswith(
        f"user cannot read /root/.unreadable-by-others. Fix: run the grader as root (it copies this Python to "
        f"{home}), or remove .venv and make it again with a Python every user can read "
        f"(make PYTHON=/usr/bin/python{minor})"
    )
    assert not home.exists()
