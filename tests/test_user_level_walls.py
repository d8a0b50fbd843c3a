"""The user level (what the kit falls back to where bwrap cannot make namespaces) reaches no
network and no other process's command line, and where root cannot give its child a network
of its own it is refused for official grades and classes, saying why and how to fix it. A
class's gradings ask for that, and their task folders name no student."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_grader_submissions import listening

from course.submissions import expected_scores, load, materialize
from graders.class_grading import jobs
from graders.course_facts import course_seed, kit_version
from graders.isolation import identity, namespaces, preflight, sandbox, selftest
from graders.isolation.workdir import prepare_workdir
from graders.uploads import packing

from grading import ROOT, grade, grader_tmp, leftover_processes, part_scores

SPEC = ROOT / "tests" / "submissions" / "attack-user-level-reach.json"
OWN = "none: a network namespace of its own, loopback down; its /proc lists its own processes only"
SHARED = "the host's: every service on its loopback, and every process's command line in /proc"
REFUSED = "unshare: Operation not permitted"  # what the kernel answers root without CAP_SYS_ADMIN
pytestmark = pytest.mark.skipif("user" not in sandbox.available_levels(), reason="the user level needs root")


@pytest.fixture
def who():
    with identity.claimed() as claimed:
        yield claimed


@pytest.fixture
def no_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process: a machine whose root may not unshare, as the trial there finds it."""
    monkeypatch.setattr(namespaces, "problem", lambda: REFUSED)


def without_sys_admin(*command: str) -> subprocess.CompletedProcess:
    """`command` as root without CAP_SYS_ADMIN, as in a Docker container: no network or mount
    namespace for root to make (bwrap's user namespaces need no capability, so the tests ask
    for the user level by name)."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to drop CAP_SYS_ADMIN")
    drop = ["setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin"]
    secret = {course_seed.SECRET_VARIABLE: "correct horse battery staple"}
    with grader_tmp() as work:
        return subprocess.run(
            [*drop, sys.executable, *command],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, **secret, "TMPDIR": str(work)},
        )


def test_a_user_level_child_reaches_no_port_and_no_other_command_line(tmp_path: Path) -> None:
    """Before, the child connected to the test's port and read the grader's `--seed 7` in
    /proc: its backward() raised "LEAKED ..." instead of the stub's NotImplementedError."""
    assert namespaces.problem() is None, f"this machine cannot test the user level's namespaces: {namespaces.problem()}"
    submission = materialize(SPEC, tmp_path / "submission")
    with listening(load(SPEC)["loopback_port"]) as server:
        run, results = grade(submission, tmp_path / "out", "--isolation", "user")
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected
    assert (
        part_scores(results)
        == expected_scores(SPEC)
        == {"value": 28, "backward": 4, "mlp": 0, "tensor": 32.5, "checkpoint": 11}
    )
    messages = "\n".join(test["output"] for test in results["tests"])
    assert "not attempted yet: `Value.backward`" in messages
    assert "LEAKED" not in (tmp_path / "out" / "results.json").read_text() + run.stdout
    assert (results["extra_data"]["isolation"], results["extra_data"]["network"]) == ("user", OWN)
    assert results["extra_data"]["self_test"] == {"network": False, "canary": False, "environ": False}
    assert leftover_processes() == []


def test_without_sys_admin_official_grades_and_classes_refuse_the_user_level(tmp_path: Path) -> None:
    submission = materialize(SPEC, tmp_path / "class" / "ada")
    official = without_sys_admin(
        "-m", "graders", str(submission), "--out", str(tmp_path / "o"), "--official", "--isolation", "user"
    )
    in_class = without_sys_admin(
        "-m", "graders", str(submission), "--out", str(tmp_path / "c"), "--in-class", "--isolation", "user"
    )
    whole_class = without_sys_admin(
        "-m",
        "graders.class_grading.cli",
        str(tmp_path / "class"),
        "--out",
        str(tmp_path / "grades"),
        "--isolation",
        "user",
    )
    why = (
        f"the user level's child would share this machine's network ({REFUSED}), which official grades and classes "
        f"refuse; fix: {namespaces.FIX}\n"
    )
    assert (official.returncode, official.stderr) == (
        2,
        f"official grading needs the bwrap or user level, and neither passed its self-test; {why}",
    )
    for refused in (in_class, whole_class):
        assert (refused.returncode, refused.stderr) == (2, f"isolation level 'user' is not available here; {why}")
    assert not (tmp_path / "o" / "results.json").exists() and not (tmp_path / "c" / "results.json").exists()
    assert not (tmp_path / "grades" / "grades.csv").exists()


def test_without_sys_admin_a_practice_grading_keeps_the_user_level_and_says_what_it_lacks(tmp_path: Path) -> None:
    """Not official, not a class: the user level still beats `local` (its child is not root),
    and results.json says the child had the host's network, as its self-test saw."""
    submission = materialize(ROOT / "tests" / "submissions" / "correct.json", tmp_path / "correct")
    run = without_sys_admin(
        "-m", "graders", str(submission), "--out", str(tmp_path / "out"), "--parts", "value", "--isolation", "user"
    )
    assert run.returncode == 0, run.stderr[-2000:]
    extra = json.loads((tmp_path / "out" / "results.json").read_text())["extra_data"]
    assert (extra["isolation"], extra["network"]) == ("user", SHARED)
    assert extra["self_test"] == {"network": True, "canary": False, "environ": False}


def test_without_namespaces_a_class_refuses_the_user_level_and_falls_back_to_nothing_weaker(
    no_namespaces: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The class's preflight (and each of its gradings, `--in-class`) asks for a closed network:
    with no bwrap either, `auto` neither uses the user level nor falls to `local`."""
    monkeypatch.setattr(sandbox, "available_levels", lambda: ["user", "local"])  # and bwrap cannot run here
    with pytest.raises(SystemExit) as refused:
        preflight.main(["--isolation", "auto"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.startswith(
        f"isolation level 'auto' is not available here; the user level's child would share this machine's network "
        f"({REFUSED}), which official grades and classes refuse; fix: run the grader where bubblewrap"
    )


def test_the_self_test_fails_a_user_level_with_namespaces_whose_child_sees_the_network() -> None:
    seen = {"network": True, "canary": False, "environ": False}
    assert not selftest.passes(sandbox.Isolation("user", own_namespaces=True), seen)
    assert selftest.passes(sandbox.Isolation("user", own_namespaces=False), seen)


def test_a_user_level_child_sees_only_its_own_processes_and_no_network(who: identity.Identity) -> None:
    script = (
        "import os, socket\n"
        "uids = {os.stat(f'/proc/{p}').st_uid for p in os.listdir('/proc') if p.isdigit()}\n"
        "print(sorted(uids) == [os.getuid()], socket.if_nameindex())\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 1), timeout=1)\n"
        "except OSError as e:\n"
        "    print(e.strerror)\n"
    )
    workdir, _ = prepare_workdir(None, who)
    try:
        (workdir / "script.py").write_text(script)
        (workdir / "script.py").chmod(0o644)
        result = sandbox.run(sandbox.Isolation("user", who, own_namespaces=True), workdir, "script.py", b"", 60)
    finally:
        shutil.rmtree(workdir)
    assert result.stdout.decode().splitlines() == ["True [(1, 'lo')]", "Network is unreachable"], result.stderr


def test_a_class_grading_asks_for_a_closed_network_and_its_folder_names_no_student(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task folder lies where a user-level child may list names (/tmp, a worker's
    directory): it is a random token, root's alone; the student is named only inside it."""
    seen: dict[str, object] = {}

    def run(flags: list[str], stderr: Path) -> str:
        folder = stderr.parent
        seen.update(flags=flags, folder=folder.name, mode=stat.S_IMODE(folder.stat().st_mode), stderr=stderr.name)
        return "stopped here"

    monkeypatch.setattr(jobs, "_run", run)
    packed = packing.pack(materialize(ROOT / "examples" / "submissions" / "ada-correct.json", tmp_path / "ada"))
    job = jobs.Job("ada-lovelace", packed.archive, packed.digest, ("--seed", "7"), kit_version.digest(), None)
    assert jobs.grade(job).problem == "stopped here"
    assert "--in-class" in seen["flags"]
    assert re.fullmatch(f"{jobs.TASK}[a-z0-9_]{{8}}", seen["folder"]) and seen["mode"] == 0o700
    assert seen["stderr"] == "ada-lovelace.grader-stderr.txt"
