"""A process that has imported the grader once and forks one grading per request.

A fresh `minigrad-grade` spends about a fifth of a grading's CPU starting Python and importing
pytest, its plugins and the grader, the same work for every student. The class command (and
each cluster worker) starts this server once instead; every grading is a fork of it, so it
begins with all of that done. A forked grading is otherwise the process `minigrad-grade` was:
the same `grade_cli.main` with the same flags, in a session of its own (Ctrl-C reaches only the
class command), with its own uid, limits and work folders, and its stderr in a file.

multiprocessing's own forkserver is not used: a Dask worker is a daemonic process, which
multiprocessing forbids to have children, and it would import the class command's `__main__`
again in every grading. The protocol is JSON lines on the server's stdin and stdout:
  {"grade": [flags], "stderr": path}  ->  {"started": pid}, later {"ended": pid, "status": code}
  {"stop": pid}                       ->  SIGTERM to that grading, if it still runs
`code` is what `subprocess` would say: the exit status, or minus the signal. The server ends
when its stdin closes (the class command or worker exited, however it died), after SIGTERM to
every grading still running: each grading's own handler then removes its folders and uid.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import traceback
from pathlib import Path

from _pytest.config import default_plugins

from graders.grading import grade_cli
from graders.isolation import namespaces, sandbox

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def preload() -> None:
    """Import the plugins every grading loads: the JSON report and pytest's built-in ones,
    which pytest imports only when a run starts. Then learn what each grading asks this
    machine first, answers a process keeps once found: whether bubblewrap may make namespaces
    here, whether root may give a user-level child a network and a /proc of its own, and which
    NumPy each level's child can load (each found by running a program or a fork)."""
    importlib.import_module("pytest_jsonreport.plugin")
    for name in default_plugins:
        importlib.import_module(f"_pytest.{name}")
    namespaces.problem()
    for level in sandbox.available_levels():
        sandbox.numpy_for(sandbox.python_for(level))


def serve() -> None:
    """Answer requests on stdin until it closes; one thread, so forking is safe."""
    preload()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    running: dict[int, int] = {}  # pid -> pidfd: a pidfd signals only its own process, never a reused pid
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.data is not None:  # a grading ended
                pid = key.data
                selector.unregister(running[pid])
                os.close(running.pop(pid))
                _answer({"ended": pid, "status": os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])})
                continue
            chunk = os.read(0, 1 << 16)
            if not chunk:
                _stop_all(running)
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                request = json.loads(line)
                if "grade" in request:
                    pid = os.fork()
                    if pid == 0:
                        _become_grading(request["grade"], request["stderr"])
                    running[pid] = os.pidfd_open(pid)
                    selector.register(running[pid], selectors.EVENT_READ, pid)
                    _answer({"started": pid})
                elif request.get("stop") in running:
                    signal.pidfd_send_signal(running[request["stop"]], signal.SIGTERM)


def _answer(message: dict) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _stop_all(running: dict[int, int]) -> None:
    for pidfd in running.values():
        signal.pidfd_send_signal(pidfd, signal.SIGTERM)
    for pid in running:
        os.waitpid(pid, 0)


def _become_grading(flags: list[str], stderr: str) -> None:
    """In the forked child: become `minigrad-grade FLAGS` and exit with its status."""
    status = 1
    try:
        os.setsid()
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        null = os.open(os.devnull, os.O_RDWR)
        error = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(error, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the server's pipes, selector and pidfds
        status = grade_cli.main(flags)
    except SystemExit as exit:  # argparse, or a refusal that says why: as Python would exit
        if isinstance(exit.code, str):
            print(exit.code, file=sys.stderr)
        status = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    except BaseException:  # noqa: BLE001 - said on stderr, like any crashed command
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(status)


class Client:
    """The class command's side: start the server, start and stop gradings, wait for them."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "graders.class_grading.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        self.lock = threading.Lock()  # one request and its "started" answer at a time
        self.changed = threading.Condition()
        self.started: list[int] = []
        self.ended: dict[int, int] = {}
        threading.Thread(target=self._read, daemon=True, name="forkserver").start()
        atexit.register(self.close)

    def close(self) -> None:
        """End the server (it stops any grading still running) and reap it, so that its
        gradings' CPU time is counted as this process's children's."""
        self.process.stdin.close()
        self.process.wait()

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            with self.changed:
                if "started" in message:
                    self.started.append(message["started"])
                else:
                    self.ended[message["ended"]] = message["status"]
                self.changed.notify_all()
        with self.changed:
            self.process.wait()
            self.changed.notify_all()

    def alive(self) -> bool:
        return self.process.poll() is None

    def start(self, flags: list[str], stderr: Path) -> int | None:
        """Fork a grading; its pid, or None when the server is gone."""
        with self.lock, self.changed:
            if not self._send({"grade": flags, "stderr": str(stderr)}):
                return None
            self.changed.wait_for(lambda: self.started or not self.alive())
            return self.started.pop(0) if self.started else None

    def wait(self, pid: int, timeout: float | None) -> int | None:
        """The grading's exit status once it ends (within `timeout`), else None. A server that
        is gone ends every grading: its gradings got SIGTERM."""
        with self.changed:
            self.changed.wait_for(lambda: pid in self.ended or not self.alive(), timeout)
            return self.ended.pop(pid, None if self.alive() else -signal.SIGTERM)

    def stop(self, pid: int) -> None:
        with self.lock:
            self._send({"stop": pid})

    def _send(self, request: dict) -> bool:
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
            return True
        except (BrokenPipeError, ValueError):
            return False


if __name__ == "__main__":
    serve()
