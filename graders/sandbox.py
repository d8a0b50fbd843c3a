"""Run untrusted code in a child process, at the strongest isolation this machine allows.

Levels, strongest first (DESIGN §5):
  bwrap  bubblewrap namespaces: no network, own PID namespace, read-only system, only the
         submission and the child runner visible, empty environment; started as an
         unprivileged user so process limits hold.
  user   no namespaces, but the child runs as `nobody` on a private copy of the files.
  local  a plain subprocess as the current user: for a student's own machine, untrusted.
Every child gets resource limits, a wall timeout and a bounded read of its output.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

LEVELS = ("bwrap", "user", "local")
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag
FIXED_HASH = ("PYTHONHASHSEED", "0")  # string hashes, and so set orders, the same every run
SANDBOX_USER = "nobody"
OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of stdout read before the child is stopped
STDERR_LIMIT = 64 * 1024
LIMITS = {
    resource.RLIMIT_CPU: 60,  # seconds of CPU per child
    resource.RLIMIT_AS: 1024 * 1024 * 1024,  # 1 GiB of address space
    resource.RLIMIT_NPROC: 32,
    resource.RLIMIT_FSIZE: 1024 * 1024,  # no file larger than 1 MiB
    resource.RLIMIT_NOFILE: 64,
    resource.RLIMIT_CORE: 0,
}


@dataclass
class ChildResult:
    stdout: bytes
    stderr: bytes
    returncode: int | None
    timed_out: bool
    flooded: bool
    seconds: float


def python_for(level: str) -> str:
    """The interpreter the child runs: one the sandbox user can read, stdlib only (`-I -S`)."""
    if level == "local":
        return sys.executable
    for candidate in (os.path.realpath(sys.executable), "/usr/bin/python3"):
        if _readable_by_all(Path(candidate)):
            return candidate
    raise RuntimeError("no Python interpreter readable by the sandbox user; install Debian's python3")


def _readable_by_all(path: Path) -> bool:
    parts = [path, *path.parents]
    return (
        path.exists()
        and all(p.stat().st_mode & 0o005 == 0o005 for p in parts if p != path)
        and bool(path.stat().st_mode & 0o004)
    )


def available_levels() -> list[str]:
    """The levels this machine can provide, strongest first (the self-test decides further)."""
    levels = []
    root = os.geteuid() == 0
    if shutil.which("bwrap") and root:
        levels.append("bwrap")
    if root:
        levels.append("user")
    levels.append("local")
    return levels


def _sandbox_ids() -> tuple[int, int]:
    entry = pwd.getpwnam(SANDBOX_USER)
    return entry.pw_uid, entry.pw_gid


def _preexec(level: str):
    """Runs in the child between fork and exec: new session, limits, then drop privileges."""
    uid_gid = _sandbox_ids() if level in ("bwrap", "user") else None

    def setup() -> None:
        os.setsid()
        # Same memory layout every run: set iteration order over Values follows id(), so a
        # buggy, order-dependent submission then gets the same score every time it is graded.
        ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)
        for limit, value in LIMITS.items():
            resource.setrlimit(limit, (value, value))
        if uid_gid:
            os.setgroups([])
            os.setgid(uid_gid[1])
            os.setuid(uid_gid[0])

    return setup


def command(level: str, workdir: Path, script: str) -> list[str]:
    """The argv that runs `workdir/script` at `level`; `workdir` holds runner and submission."""
    python = python_for(level)
    if level != "bwrap":
        return [python, "-I", "-S", str(workdir / script)]
    system = [arg for d in ("/usr", "/lib", "/lib64", "/bin") if Path(d).exists() for arg in ("--ro-bind", d, d)]
    python_home = Path(python).resolve().parent.parent
    if not str(python_home).startswith("/usr"):
        system += ["--ro-bind", str(python_home), str(python_home)]
    return [
        "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--setenv", *FIXED_HASH,
        *system,
        "--ro-bind", str(workdir), "/sandbox",
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp",
        python, "-I", "-S", f"/sandbox/{script}",
    ]  # fmt: skip


def run(level: str, workdir: Path, script: str, stdin: bytes, timeout: float, per_line: bool = False) -> ChildResult:
    """Run the child, feed it `stdin`, and read at most OUTPUT_LIMIT bytes within `timeout`.

    With `per_line`, the timeout restarts at every complete line the child prints, so a
    child answering many questions gets `timeout` seconds for each.
    """
    env = dict([FIXED_HASH])
    if level == "local":
        env.update(PATH=os.environ.get("PATH", ""), LANG="C.UTF-8")
    start = time.monotonic()
    proc = subprocess.Popen(
        command(level, workdir, script),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=workdir, env=env, preexec_fn=_preexec(level), close_fds=True,
    )  # fmt: skip
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    out, err, timed_out, flooded = _read_bounded(proc, timeout, per_line)
    _stop(proc, level)
    return ChildResult(bytes(out), bytes(err), proc.returncode, timed_out, flooded, time.monotonic() - start)


def _read_bounded(proc: subprocess.Popen, timeout: float, per_line: bool) -> tuple[bytearray, bytearray, bool, bool]:
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, out)
    selector.register(proc.stderr, selectors.EVENT_READ, err)
    open_streams = 2
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return out, err, True, False
        for key, _ in selector.select(timeout=remaining):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            buffer = key.data
            if buffer is out and len(out) + len(chunk) > OUTPUT_LIMIT:
                return out, err, False, True
            if buffer is err and len(err) >= STDERR_LIMIT:
                continue
            buffer.extend(chunk)
            if per_line and buffer is out and b"\n" in chunk:
                deadline = time.monotonic() + timeout
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return out, err, True, False
    return out, err, False, False


def _stop(proc: subprocess.Popen, level: str) -> None:
    """Kill the child's whole session and, as the sandbox user, anything that escaped it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    if level == "user":
        kill_user_processes(_sandbox_ids()[0])


def kill_user_processes(uid: int) -> None:
    """SIGKILL every process owned by `uid` (setsid daemons leave the process group)."""
    for _ in range(3):
        found = False
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        os.kill(int(entry.name), signal.SIGKILL)
                        found = True
                except (FileNotFoundError, ProcessLookupError, PermissionError):
                    continue
        if not found:
            return
        time.sleep(0.05)
