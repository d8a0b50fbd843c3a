"""A machine that cannot give the child what the course promises refuses to grade; one that
can gives it the kit's own NumPy, read-only, where every grading uid can read it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from course import machine
from course.submissions import materialize
from graders.isolation import child_numpy, identity, sandbox, selftest
from graders.isolation.workdir import prepare_workdir

from grading import ROOT, grader_tmp, needs_isolation

EXAMPLES = ROOT / "examples" / "submissions"
NO_NUMPY = "No module named 'numpy'"


def run(module: str, *args: str, numpy: Path) -> subprocess.CompletedProcess:
    """`python -m module args` with the child's NumPy folder set to `numpy`."""
    with grader_tmp() as work:
        env = {**os.environ, child_numpy.OVERRIDE: str(numpy), "TMPDIR": str(work)}
        command = [sys.executable, "-m", module, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def test_a_child_that_cannot_import_numpy_is_refused_and_nothing_is_graded(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ran = run("graders", str(ROOT / "reference"), "--out", str(out), "--parts", "tensor", numpy=tmp_path)
    assert ran.returncode == 2, ran.stderr[-2000:]
    refusal = ran.stderr.strip().splitlines()[-1]
    assert refusal.startswith("grading refused: the grading's child (") and NO_NUMPY in refusal, refusal
    assert f"Fix: point ${child_numpy.OVERRIDE} at a folder holding numpy/" in refusal
    assert not (out / "results.json").exists() and ran.stdout == ""


def test_a_class_on_such_a_machine_is_refused_before_any_student(tmp_path: Path) -> None:
    materialize(EXAMPLES / "ada-correct.json", tmp_path / "class" / "ada")
    out = tmp_path / "out"
    ran = run("graders.class_grading.cli", str(tmp_path / "class"), "--out", str(out), numpy=tmp_path)
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert NO_NUMPY in ran.stderr.strip().splitlines()[-1]
    assert not out.exists()


def test_the_import_proof_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    isolation = sandbox.Isolation("local")
    assert selftest.missing_imports(isolation, None) is None
    monkeypatch.setattr(sandbox, "run", lambda *args, **kwargs: pytest.fail("proved again"))
    assert selftest.missing_imports(isolation, None) is None


@needs_isolation
def test_the_childs_numpy_is_a_root_owned_read_only_copy_that_a_grading_uid_imports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    python = sandbox.python_for("user")  # the kit's Python, or its copy in the real home (child_python.py)
    home = Path(tempfile.mkdtemp(prefix="minigrad-home-"))  # under /tmp: the grading uid can reach it
    home.chmod(0o755)
    monkeypatch.setattr(child_numpy, "HOME", home / "lib")
    try:
        suffixes = sandbox._extension_suffixes(python)
        copy = child_numpy.copy_for(python, suffixes[0].strip(".").removesuffix(".so"))
        assert copy is not None and copy.parent == home / "lib" and ROOT not in copy.parents
        assert child_numpy.copy_for(python, suffixes[0].strip(".").removesuffix(".so")) == copy  # made once
        for path in [copy, *copy.rglob("*")]:
            info = path.lstat()
            assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o755 if path.is_dir() else 0o644), path
        assert [p.name for p in home.joinpath("lib").iterdir()] == [copy.name]  # no partial copy left
        monkeypatch.setenv(child_numpy.OVERRIDE, str(copy))
        sandbox.numpy_for.cache_clear()  # what it found without the override
        with identity.claimed() as who:
            workdir, _ = prepare_workdir(None, who)
            try:
                ran = sandbox.run(sandbox.Isolation("user", who), workdir, "probe.py", b'{"imports": true}', 60)
            finally:
                shutil.rmtree(workdir)
        assert ran.stdout.strip() == b'{"imports": null}', ran.stderr
    finally:
        sandbox.numpy_for.cache_clear()
        shutil.rmtree(home)


def test_the_bootstrap_refuses_a_python_older_than_the_kit_supports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(machine, "OLDEST", (sys.version_info.major, sys.version_info.minor + 1))
    assert machine.main([]) == 1
    assert "minigrad needs Python >= " in capsys.readouterr().err


def test_the_bootstrap_believes_the_machine_not_apt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    """apt can exit 0 and still leave a piece missing (a held package, another name): what
    counts is whether the piece works afterwards, so no stamp says it is done when it is not."""
    installed: list[list[str]] = []
    monkeypatch.setattr(machine, "missing", lambda piece: True)
    monkeypatch.setattr(machine, "install", lambda packages: installed.append(packages) or True)  # apt says yes
    monkeypatch.setattr(machine.os, "geteuid", lambda: 0)
    monkeypatch.setattr(machine.shutil, "which", lambda name: "/usr/bin/" + name)
    stamp = tmp_path / "stamp"
    assert machine.main(["--stamp", str(stamp), "venv", "graphviz"]) == 1
    assert installed == [["python3-venv", "graphviz"]]
    assert "not installed: python3-venv, graphviz" in capsys.readouterr().err
    assert not stamp.exists()
