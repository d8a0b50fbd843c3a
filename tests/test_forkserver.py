"""The forkserver's gradings are the `minigrad-grade` command they replace: the same exit
status and stderr, stopped by SIGTERM like it, and ended when the server's user goes away."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_class_grading import JAY

from course.submissions import materialize
from graders.class_grading import forkserver
from graders.isolation import processes

from grading import ROOT, grader_tmp, leftover_processes, needs_isolation

GRADE = [sys.executable, "-m", "graders"]
STOPPED = 128 + 15  # the grader's SIGTERM handler exits so (grade.stop_cleanly_on_sigterm)


def test_a_refused_command_line_exits_and_says_as_the_command_does(tmp_path: Path) -> None:
    client = forkserver.Client()
    try:
        flags = [str(tmp_path), "--isolation", "no-such-level"]
        pid = client.start(flags, tmp_path / "stderr")
        assert client.wait(pid, 60) == 2
    finally:
        client.close()
    command = subprocess.run([*GRADE, *flags], capture_output=True, text=True, cwd=ROOT)
    assert command.returncode == 2 and "invalid choice: 'no-such-level'" in command.stderr
    assert (tmp_path / "stderr").read_text() == command.stderr


@needs_isolation
def test_stop_and_a_closed_server_end_their_gradings_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One grading is stopped on request; another is running when the server's stdin closes
    (its user exited): both exit through the grader's SIGTERM handler, and leave no process
    and no work folder behind."""
    jay = materialize(JAY, tmp_path / "jay")
    with grader_tmp() as work:
        monkeypatch.setenv("TMPDIR", str(work))  # the server's gradings make their folders there
        client = forkserver.Client()
        flags = [str(jay), "--parts", "mlp", "--seed", "0"]
        stopped = client.start([*flags, "--out", str(tmp_path / "stopped")], tmp_path / "stopped.err")
        time.sleep(2)  # into jay's endless loop
        client.stop(stopped)
        assert client.wait(stopped, 60) == STOPPED
        left = client.start([*flags, "--out", str(tmp_path / "left")], tmp_path / "left.err")
        time.sleep(2)
        client.close()
        assert not processes.alive(left)
    assert client.wait(left, 1) == -15  # what a client says of a grading its server took down
    assert leftover_processes() == []


def open_descriptors(pid: int) -> list[str]:
    """What each open file descriptor of `pid` points at; one closed while they are read is gone."""
    links = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except FileNotFoundError:
            continue
    return links


@needs_isolation
def test_the_server_listens_on_nothing_and_its_gradings_carry_no_flags_on_their_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Requests come on a pipe, so a grading's seed and label (the student's upload path) are
    on no command line another process could read, and no socket of the server's waits for
    anyone (a filesystem Unix socket would be out of a network namespace's reach)."""
    jay = materialize(JAY, tmp_path / "jay-lovelace")
    with grader_tmp() as work:
        monkeypatch.setenv("TMPDIR", str(work))
        client = forkserver.Client()
        try:
            flags = [
                str(jay),
                "--parts",
                "mlp",
                "--seed",
                "4242",
                "--label",
                "jay-lovelace",
                "--out",
                str(tmp_path / "o"),
            ]
            pid = client.start(flags, tmp_path / "err")
            command_lines = [Path(f"/proc/{p}/cmdline").read_bytes() for p in (client.process.pid, pid)]
            time.sleep(2)  # into jay's endless loop, the grader's SIGTERM handler set
            # Read once the grading is past its self-test, whose canary (isolation/selftest.py)
            # listens on 127.0.0.1 for as long as its probe runs, to prove the child cannot reach it.
            descriptors = [link for p in (client.process.pid, pid) for link in open_descriptors(p)]
            client.stop(pid)
            assert client.wait(pid, 60) == STOPPED
        finally:
            client.close()
    assert command_lines == [f"{sys.executable}\0-m\0graders.class_grading.forkserver\0".encode()] * 2
    assert [link for link in descriptors if link.startswith("socket:")] == []
    assert leftover_processes() == []
