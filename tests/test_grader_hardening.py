"""Hardening that specimens alone cannot show: linked and special files, gradings running at
the same time, a planted output folder, a starved child, and the sandbox's own bounds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from course.submissions import materialize
from graders.course_facts.parts import POINTS
from graders.grading import child_loop
from graders.isolation import cgroup, identity, sandbox
from graders.isolation.workdir import prepare_workdir
from graders.uploads import intake

from grading import ROOT, STRONG, bonus_score, grade, grader_tmp, leftover_processes, needs_isolation, part_scores

SPECS = ROOT / "tests" / "submissions"
REFERENCE = ROOT / "reference" / "minigrad"
FULL = sum(POINTS.values())


def correct(tmp_path: Path) -> Path:
    return materialize(SPECS / "correct.json", tmp_path / "correct")


def linked(tmp_path: Path, how: str) -> Path:
    """A submission that reaches the reference through a link of kind `how`."""
    submission = tmp_path / "linked"
    submission.mkdir()
    package = submission / "minigrad"
    if how == "absolute symlink":
        package.symlink_to(REFERENCE)
    elif how == "relative symlink":
        package.symlink_to(os.path.relpath(REFERENCE, submission))
    elif how == "hard links":  # to a copy: a link to the project's own files would outlive the test
        copy = shutil.copytree(REFERENCE, tmp_path / "copy")
        package.mkdir()
        for source in copy.glob("*.py"):
            os.link(source, package / source.name)
    else:
        package.mkdir()
        for source in REFERENCE.glob("*.py"):
            (package / source.name).symlink_to(source)
    return submission


REFUSED = {
    "absolute symlink": "minigrad/: a symbolic link, not a folder; upload the files themselves",
    "relative symlink": "minigrad/: a symbolic link, not a folder; upload the files themselves",
    "hard links": "minigrad/engine.py: a hard link to another file; not graded",
    "file symlinks": (
        "minigrad/engine.py: a symbolic link, which the grader never follows (upload the file itself); not graded"
    ),
}


@needs_isolation
@pytest.mark.parametrize("how", ["absolute symlink", "relative symlink", "hard links", "file symlinks"])
def test_a_link_to_the_reference_scores_nothing(how: str, tmp_path: Path) -> None:
    _, results = grade(linked(tmp_path, how), tmp_path / "out", "--official")
    assert results["score"] == 0 and results["max_score"] == FULL
    assert f"refused: {REFUSED[how]}" in results["output"]
    assert REFUSED[how] in results["extra_data"]["refused"]


@needs_isolation
def test_fifo_and_device_are_refused_and_the_rest_is_graded(tmp_path: Path) -> None:
    submission = correct(tmp_path)
    os.mkfifo(submission / "minigrad" / "pipe.py")
    os.mknod(submission / "minigrad" / "zero.py", 0o644 | 0o020000, os.makedev(1, 5))  # /dev/zero
    _, results = grade(submission, tmp_path / "out", "--parts", "value")
    assert results["score"] - bonus_score(results) == 28
    assert set(results["extra_data"]["refused"]) == {
        "minigrad/pipe.py: not a regular file; not graded",
        "minigrad/zero.py: not a regular file; not graded",
    }


def test_the_copy_is_capped_in_files_and_bytes(tmp_path: Path) -> None:
    submission = correct(tmp_path)
    for i in range(2000):
        with open(submission / "minigrad" / f"pad{i:04}.py", "wb") as sparse:
            sparse.truncate(intake.MAX_FILE_BYTES)  # 1 GB in all, none of it on disk
    target = tmp_path / "copy"
    target.mkdir()
    copied = intake.copy_package(submission, target)
    total = sum(path.stat().st_size for path in target.iterdir())
    assert len(copied.copied) <= intake.MAX_FILES and total <= intake.MAX_TOTAL_BYTES
    assert "engine.py" in copied.copied and "nn.py" in copied.copied
    pads = sum(name.startswith("pad") for name in copied.copied)  # the first pad file refused comes next
    assert copied.refused == [f"minigrad/pad{pads:04}.py: the package is over 4 MiB"]


def test_a_missing_package_is_said_plainly(tmp_path: Path) -> None:
    _, results = grade(tmp_path, tmp_path / "out", "--parts", "checkpoint", "--isolation", "local")
    assert results["score"] == 0 and "no minigrad/ folder found in the submission" in results["output"]


def start_grading(spec: str, tmp_path: Path, *args: str) -> subprocess.Popen:
    submission = materialize(SPECS / f"{spec}.json", tmp_path / spec)
    out = tmp_path / f"out-{spec}"
    return subprocess.Popen(
        [sys.executable, "-m", "graders", str(submission), "--out", str(out), "--seed", "7", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finished(grading: subprocess.Popen, out: Path) -> dict:
    assert grading.wait(timeout=300) == 0, grading.stderr.read().decode()[-2000:]
    return json.loads((out / "results.json").read_text())


@needs_isolation
def test_processes_held_by_one_grading_cannot_downgrade_another(tmp_path: Path) -> None:
    holder = start_grading("attack-hold-processes", tmp_path)
    time.sleep(2)  # its children are holding processes by now
    _, results = grade(correct(tmp_path), tmp_path / "out", "--official")
    assert results["score"] - bonus_score(results) == FULL and results["extra_data"]["isolation"] == STRONG[0]
    assert part_scores(finished(holder, tmp_path / "out-attack-hold-processes")) == {
        "value": 28,
        "backward": 4,
        "mlp": 0,
        "tensor": 32.5,
        "checkpoint": 11,
    }
    assert leftover_processes() == []


@pytest.mark.skipif("user" not in sandbox.available_levels(), reason="the user level needs root")
def test_user_level_gradings_at_once_cannot_stop_or_read_each_other(tmp_path: Path) -> None:
    attackers = [start_grading("attack-signal-everyone", tmp_path / str(i), "--isolation", "user") for i in range(2)]
    _, results = grade(correct(tmp_path), tmp_path / "out", "--isolation", "user")
    assert results["score"] - bonus_score(results) == FULL
    for i, attacker in enumerate(attackers):
        assert part_scores(finished(attacker, tmp_path / str(i) / "out-attack-signal-everyone"))["value"] == 28
    assert leftover_processes() == []


@needs_isolation
def test_a_planted_link_in_the_output_folder_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    target.chmod(0o600)
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").symlink_to(target)
    (out / "report.json").symlink_to(target)
    _, results = grade(correct(tmp_path), out, "--parts", "checkpoint")
    assert results["score"] == POINTS["checkpoint"]
    assert target.read_text() == "keep me" and target.stat().st_mode & 0o777 == 0o600
    assert not (out / "results.json").is_symlink() and not (out / "report.json").is_symlink()


def child_processes_of_grading(out: Path) -> list[int]:
    """The sandboxed children of the grading that writes to `out`: other tests' gradings run
    beside it (pytest-xdist) and must not be touched."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit()
        and identity.FIRST_UID <= _owner(entry) < identity.FIRST_UID + identity.UID_COUNT
        and b"runner.py" in _cmdline(entry)
        and not _cmdline(entry).startswith(b"bwrap")  # the Python that runs the programs, not its sandbox
        and any(str(out).encode() in _cmdline(Path(f"/proc/{pid}")) for pid in _ancestors(entry))
    ]


def _ancestors(entry: Path) -> list[int]:
    found = []
    try:
        while (parent := int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])) > 1:
            found.append(parent)
            entry = Path(f"/proc/{parent}")
    except (OSError, ValueError):
        pass
    return found


def _owner(entry: Path) -> int:
    try:
        return entry.stat().st_uid
    except FileNotFoundError:
        return -1


def _cmdline(entry: Path) -> bytes:
    try:
        return (entry / "cmdline").read_bytes()
    except OSError:
        return b""


@needs_isolation
def test_a_child_starved_past_its_deadline_is_retried_not_failed(tmp_path: Path) -> None:
    """Stopping the child stands in for a machine too loaded to run it: the program times
    out, the child used no CPU, so the program is run again instead of costing points."""
    stopped: list[int] = []

    def starve_once() -> None:
        deadline = time.monotonic() + 60
        while not stopped and time.monotonic() < deadline:
            for pid in child_processes_of_grading(tmp_path / "out"):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
                break
            time.sleep(0.01)

    starver = threading.Thread(target=starve_once)
    starver.start()
    _, results = grade(correct(tmp_path), tmp_path / "out", "--parts", "value")
    starver.join()
    assert stopped, "never found the grading's child to stop"
    assert results["score"] - bonus_score(results) == 28


LINGER = """import os as _os, time as _time
if _os.fork() == 0:  # a process left behind, holding the answer channel open
    _time.sleep(600)
    _os._exit(0)
"""


@needs_isolation
def test_a_process_left_behind_after_the_last_answer_holds_nothing(tmp_path: Path) -> None:
    """At the user level no pid namespace ends with the child, so a process the submission
    forks at import and leaves sleeping keeps the answer channel open. The child that answered
    every program has EXIT_GRACE to exit; then it and what it left are stopped: the grade is
    whole, and the grading does not wait out its 150 s budget."""
    if "user" not in sandbox.available_levels():
        pytest.skip("the user level needs root")
    submission = correct(tmp_path)
    package = submission / "minigrad" / "__init__.py"
    package.write_text(LINGER + package.read_text())
    started = time.monotonic()
    _, results = grade(submission, tmp_path / "out", "--parts", "value", "--isolation", "user")
    assert results["score"] - bonus_score(results) == 28
    assert time.monotonic() - started < 15
    assert leftover_processes() == []


@pytest.mark.parametrize(
    ("cpu_share", "stretch"),
    [(1.0, None), (0.95, None), (0.8, 1.25), (0.5, 2.0), (0.25, 2.0), (0.05, None)],
    ids=["full core: an endless loop", "nearly full", "a busy neighbour", "half a core", "starved hard", "asleep"],
)
def test_a_program_at_its_deadline_gets_the_time_the_load_took(cpu_share: float, stretch: float | None) -> None:
    """Two gradings per core give each child half a core: a legitimate program that needs
    0.8 s of CPU then takes 1.6 s, past the 1 s a part gets after an endless loop; it must get
    the time back, while a child that had a whole core gets no more, nor one that barely ran
    (it is run again in a fresh child: test_a_child_starved_past_its_deadline_is_retried_not_failed)."""
    assert child_loop.stretch_for(cpu_share) == stretch


@pytest.fixture
def who():
    if "user" not in sandbox.available_levels():
        pytest.skip("a grading identity needs root")
    with identity.claimed() as claimed:
        yield claimed


def run_script(
    level: str, who: identity.Identity, source: str, timeout: float = 60, **options: object
) -> sandbox.ChildResult:
    """Run `source` as a child at `level` under the grading identity `who` (`options`: sandbox.run's)."""
    if level not in sandbox.available_levels():
        pytest.skip(f"the {level} level is not available here")
    workdir, _ = prepare_workdir(None, who)
    try:
        (workdir / "script.py").write_text(source)
        os.chown(workdir / "script.py", 0, who.gid)
        (workdir / "script.py").chmod(0o640)
        return sandbox.run(sandbox.Isolation(level, who), workdir, "script.py", b"", timeout, **options)
    finally:
        shutil.rmtree(workdir)


def test_a_starved_child_keeps_running_past_its_deadline(who: identity.Identity) -> None:
    """A loaded machine, played by stopping and continuing the child in turn (about half a
    core): at its deadline the child is shown to `starved` with the share it had, and runs on
    for the seconds given, until its next deadline."""
    shares: list[float] = []
    done = threading.Event()

    def starved(cpu_share: float) -> float | None:
        shares.append(cpu_share)
        return 1.0 if len(shares) == 1 else None

    def half_a_core() -> None:
        while not done.is_set():
            held = identity.processes(who.uid)
            for sig in (signal.SIGSTOP, signal.SIGCONT):
                for pid in held:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                time.sleep(0.02)

    throttle = threading.Thread(target=half_a_core)
    throttle.start()
    try:
        result = run_script("user", who, "while True: pass\n", 1.0, starved=starved)
    finally:
        done.set()
        throttle.join()
    assert result.timed_out and len(shares) == 2, (result, shares)
    assert 0.05 < shares[0] < 0.8, shares  # stopped half the time: half a core at most, less on a loaded machine
    assert result.seconds >= 2.0  # its 1 s, then the 1 s more it was given


FILL = """
import json
written = {}
for top in ("/tmp", "/dev/shm", "/dev"):
    written[top] = 0
    for i in range(64):
        try:
            with open(f"{top}/fill-{i}", "wb") as f:
                f.write(b"x" * 1024 * 1024)
            written[top] += 1
        except OSError:
            break
print(json.dumps(written))
"""


def test_the_sandbox_tmpfs_are_sized_and_dev_is_read_only(who: identity.Identity) -> None:
    written = json.loads(run_script("bwrap", who, FILL).stdout)
    megabytes = sandbox.TMPFS_BYTES // 1024**2
    assert written == {"/tmp": megabytes, "/dev/shm": megabytes, "/dev": 0}


FORKS = """
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (700 * 1024 * 1024)  # touched, so really held
        time.sleep(3)
        os._exit(0)
    children.append(pid)
survived = sum(os.waitpid(pid, 0)[1] == 0 for pid in children)
print(survived)
"""


@pytest.mark.parametrize("level", ["bwrap", "user"])
def test_memory_is_bounded_for_the_whole_grading_not_per_process(level: str, who: identity.Identity) -> None:
    if who.limits is None:
        pytest.skip(f"no writable cgroup here; {cgroup.RLIMITS_ONLY}")
    survived = int(run_script(level, who, FORKS).stdout)
    assert survived * 700 * 1024**2 < cgroup.MEMORY_BYTES and survived < 4


LEAVE = """
import os
for top in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
    try:
        with open(f"{top}/left-for-the-next-student", "w") as f:
            f.write("hello")
        os.makedirs(f"{top}/left-folder/inside", exist_ok=True)
    except OSError:
        pass
print("done")
"""


def test_user_level_files_are_removed_when_the_grading_ends(tmp_path: Path) -> None:
    if "user" not in sandbox.available_levels():
        pytest.skip("the user level needs root")
    with identity.claimed() as claimed:
        assert run_script("user", claimed, LEAVE).stdout.strip() == b"done"
        left = [top for top in identity.SHARED_WRITABLE if any(_owned(Path(top), claimed.uid))]
        assert left, "the script wrote nothing: the test proves nothing"
    assert [top for top in identity.SHARED_WRITABLE if any(_owned(Path(top), claimed.uid))] == []


def _owned(top: Path, uid: int) -> list[Path]:
    """The entries of `top` that `uid` owns. Tests in other workers create and remove their own
    entries in /tmp meanwhile: one that is gone by the time it is looked at is not `uid`'s."""
    try:
        entries = list(top.iterdir())
    except OSError:
        return []
    owned = []
    for entry in entries:
        try:
            if entry.lstat().st_uid == uid:
                owned.append(entry)
        except FileNotFoundError:
            continue
    return owned


@needs_isolation
def test_sigterm_still_cleans_up_everything(tmp_path: Path) -> None:
    submission = materialize(SPECS / "attack-hold-processes.json", tmp_path / "holder")
    with grader_tmp() as work:
        grading = subprocess.Popen(
            [sys.executable, "-m", "graders", str(submission), "--out", str(tmp_path / "out"), "--seed", "7"],
            env={**os.environ, "TMPDIR": str(work)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not child_processes_of_grading(tmp_path / "out") and time.monotonic() < deadline:
            time.sleep(0.05)
        grading.send_signal(signal.SIGTERM)
        assert grading.wait(timeout=30) != 0
    assert not (tmp_path / "out" / "results.json").exists()
    assert leftover_processes() == []
