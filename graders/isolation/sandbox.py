"""Run untrusted code in a child process, at the strongest isolation this machine allows.

Levels, strongest first:
  bwrap  bubblewrap namespaces: no network, own PID namespace, read-only system, only the
         child's work folder visible, empty environment, every tmpfs sized; started under
         the grading's own uid, so process limits hold.
  user   no namespaces of bwrap's: the child runs under the grading's own uid, on a work folder
         only that uid's group can read; nothing hidden is readable by other users. Where root
         may make them, it also gets a network and a /proc of its own (namespaces.py).
  local  a plain subprocess as the current user: for a student's own machine, untrusted.
Every child joins the grading's cgroup (where there is one), gets resource limits, a wall
deadline that only a valid answer renews, and a bounded read of its output.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from . import child_numpy, child_python, namespaces
from .identity import Identity, kill_processes
from .identity import processes as identity_processes
from .processes import CLOCK_TICKS, adopt_orphans, cpu_ticks, in_sessions, stat_fields

LEVELS = ("bwrap", "user", "local")
ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag
FIXED_HASH = ("PYTHONHASHSEED", "0")  # string hashes, and so set orders, the same every run
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # threads count as processes
OUTPUT_LIMIT = 4 * 1024 * 1024  # bytes of stdout read before the child is stopped
LINE_LIMIT = 1024 * 1024  # one answer line; a longer one is garbage, not parsed
STDERR_LIMIT = 64 * 1024
TMPFS_BYTES = 16 * 1024 * 1024  # each of the sandbox's /tmp and /dev/shm
LIMITS = {
    resource.RLIMIT_CPU: 60,  # seconds of CPU per child
    resource.RLIMIT_AS: 1024 * 1024 * 1024,  # 1 GiB of address space per process
    resource.RLIMIT_NPROC: 8,  # per grading uid: 8 x 1 GiB bounds a grading without a cgroup
    resource.RLIMIT_FSIZE: 1024 * 1024,  # no file larger than 1 MiB
    resource.RLIMIT_NOFILE: 64,
    resource.RLIMIT_CORE: 0,
}
RUNNING: set[int] = set()  # process groups of the children running now, for an abrupt stop
# Docker (Gradescope) may refuse a fresh /proc; binding the container's own is the fallback.
PROC_MOUNTS = (("--proc", "/proc"), ("--bind", "/proc", "/proc"))


@dataclass
class ChildResult:
    stdout: bytes
    stderr: bytes
    returncode: int | None
    timed_out: bool
    flooded: bool
    seconds: float
    cpu_share: float = 1.0  # at a time-out: the share of one core the child got over its life


def python_for(level: str) -> str:
    """The interpreter the child runs (`-I -S`: no site, no env): the kit's own, at the bwrap and
    user levels where the grading uid can read it (child_python.py), never another Python."""
    return sys.executable if level == "local" else child_python.executable()


DEBIAN_PACKAGES = Path("/usr/lib/python3/dist-packages")  # Debian's python3-numpy lives here
NUMPY_LINKS = Path("/etc/alternatives")  # Debian finds NumPy's BLAS and LAPACK through these links


@functools.cache
def numpy_for(python: str) -> Path | None:
    """The folder holding a NumPy that `python` (the child's interpreter) can load, or None.

    Students may `import numpy`, but the child runs with `-I -S`, so no site-packages is on its
    path: it gets this folder, and only `numpy` from it. The local level gets the parent's own
    NumPy. The bwrap and user levels, whose child runs as another uid, get the first of: the
    parent's own NumPy where every user can read it (a system-wide install), the kit's NumPy
    copied where they can (child_numpy.py), Debian's `python3-numpy`. `$MINIGRAD_CHILD_NUMPY`
    names the folder instead. A NumPy built for another Python is never offered: its compiled
    core must carry one of `python`'s extension tags. The tag is read from the file name, not
    by importing NumPy, which would add a quarter of a second to every grading.
    """
    suffixes = _extension_suffixes(python)
    for folder in _numpy_candidates(python, suffixes):
        if _built_for(folder, suffixes) and (python == sys.executable or child_numpy.safe_for_children(folder)):
            return folder
    return None


def _numpy_candidates(python: str, suffixes: list[str]) -> Iterator[Path]:
    """Where the child's NumPy may be, best first; made lazily, so the kit's NumPy is copied
    only when no better one serves."""
    if (chosen := os.environ.get(child_numpy.OVERRIDE)) is not None:
        yield Path(chosen)
        return
    if (own := child_numpy.kit_numpy()) is not None:
        yield own
    if python == sys.executable:
        return
    tag = suffixes[0].strip(".").removesuffix(".so") if suffixes else "unknown"
    if (copy := child_numpy.copy_for(python, tag)) is not None:
        yield copy
    yield DEBIAN_PACKAGES


def _built_for(folder: Path, suffixes: list[str]) -> bool:
    """Whether `folder/numpy`'s compiled core carries one of `suffixes`."""
    cores = [folder / "numpy" / sub / f"_multiarray_umath{end}" for sub in ("_core", "core") for end in suffixes]
    return any(core.is_file() for core in cores)


def _extension_suffixes(python: str) -> list[str]:
    """The file endings of compiled modules that `python` loads, e.g. `.cpython-311-x86_64-linux-gnu.so`."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return list(importlib.machinery.EXTENSION_SUFFIXES)
    ask = "import importlib.machinery as m; print(*m.EXTENSION_SUFFIXES)"
    try:
        ran = subprocess.run([python, "-I", "-S", "-c", ask], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ran.stdout.split() if ran.returncode == 0 else []


def _numpy_mounts(folder: Path | None) -> list[str]:
    """bwrap arguments that show NumPy (and the libraries it loads) read-only, where it is."""
    if folder is None:
        return []
    paths = [folder / "numpy", folder / "numpy.libs", NUMPY_LINKS]  # numpy.libs: a wheel's own BLAS
    return [arg for path in paths if path.exists() for arg in ("--ro-bind", str(path), str(path))]


def available_levels() -> list[str]:
    """The levels this machine can provide, strongest first (the self-test decides further)."""
    levels = []
    root = os.geteuid() == 0
    if root and _bwrap_works():
        levels.append("bwrap")
    if root:
        levels.append("user")
    levels.append("local")
    return levels


@functools.cache
def _bwrap_works() -> bool:
    """Whether bubblewrap is installed and may make its namespaces here: a chroot or a container
    without user namespaces has the program but not the kernel's leave (bwrap: "No permissions
    to create new namespace"), and is then the user level's machine."""
    if shutil.which("bwrap") is None:
        return False
    try:
        ran = subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return ran.returncode == 0


def _preexec(identity: Identity | None, own_namespaces: bool, nice: int):
    """Runs in the child between fork and exec: new session, cgroup, the user level's own
    network and /proc (as root, before the uid is dropped), priority, limits, then the uid."""
    procs_files = identity.limits.procs_files() if identity and identity.limits else []

    def setup() -> None:
        os.setsid()
        for procs in procs_files:
            fd = os.open(procs, os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
        if own_namespaces:
            namespaces.enter()  # raises if refused: the child never runs on the host's network
        # Same memory layout every run: set iteration order over Values follows id(), so a
        # buggy, order-dependent submission then gets the same score every time it is graded.
        ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)
        if nice:
            os.nice(nice)
        for limit, value in LIMITS.items():
            resource.setrlimit(limit, (value, value))
        if identity:
            os.setgroups(list(identity.groups))
            os.setgid(identity.gid)
            os.setuid(identity.uid)

    return setup


def command(level: str, workdir: Path, script: str, proc_mount: tuple[str, ...] = PROC_MOUNTS[0]) -> list[str]:
    """The argv that runs `workdir/script` at `level`; `workdir` holds runner and submission."""
    python = python_for(level)
    numpy = numpy_for(python)
    found = [str(numpy)] if numpy else []  # the child's one argument: where NumPy is
    if level != "bwrap":
        return [python, "-I", "-S", str(workdir / script), *found]
    system = [arg for d in ("/usr", "/lib", "/lib64", "/bin") if Path(d).exists() for arg in ("--ro-bind", d, d)]
    python_home = Path(python).resolve().parent.parent
    if not str(python_home).startswith("/usr"):
        system += ["--ro-bind", str(python_home), str(python_home)]
    size = str(TMPFS_BYTES)
    env = {**ONE_THREAD, **child_python.environment(python)}
    return [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        *FIXED_HASH,
        *(arg for name, value in env.items() for arg in ("--setenv", name, value)),
        # /tmp first: a Python or NumPy that lives under /tmp (a venv made there) is bound over it, not hidden
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        *system,
        *_numpy_mounts(numpy),
        "--ro-bind",
        str(workdir),
        "/sandbox",
        *proc_mount,
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--chdir",
        "/tmp",
        python,
        "-I",
        "-S",
        f"/sandbox/{script}",
        *found,
    ]


@dataclass(frozen=True)
class Isolation:
    """How to run a child: the level, the grading's identity (None: as this user), for bwrap
    the way /proc is mounted (chosen by the self-test), for the user level whether the
    child gets a network and a /proc of its own (where root may make them), and how much
    lower than the grader's its priority is (os.nice)."""

    level: str
    identity: Identity | None = None
    proc_mount: tuple[str, ...] = PROC_MOUNTS[0]
    own_namespaces: bool = False
    nice: int = 0

    @property
    def runs_as(self) -> Identity | None:
        return self.identity if self.level != "local" else None

    def timed(self) -> Isolation:
        """How the child of a timed program runs: as the grading's second uid where it has one,
        so its CPU is counted apart from the other children's, and its end kills none of theirs."""
        if self.runs_as is None or self.runs_as.timed is None:
            return self
        return replace(self, identity=self.runs_as.timed)

    @property
    def apart(self) -> bool:
        """Whether a timed program's child may run at the same time as the others: only where no
        child can reach another, and their counts are apart. bwrap with a /proc of its own gives
        each child its own /tmp, /dev/shm, network, IPC and processes, and the two run as two
        uids. Not at the user level, whose children share the host's /tmp, /var/tmp and /dev/shm,
        nor at bwrap with the host's /proc bound, where each could read the other's command line
        and thread names: there, while the other children run, the timed program's could hand
        them its initial parameters and be handed back the trained ones, its own CPU clean."""
        return self.level == "bwrap" and self.proc_mount == PROC_MOUNTS[0] and self.timed() != self

    @property
    def network(self) -> str:
        """What the child can reach, as results.json records it."""
        if self.level == "bwrap":
            return "none: bwrap's network namespace"
        if self.level == "user" and self.own_namespaces:
            return "none: a network namespace of its own, loopback down; its /proc lists its own processes only"
        return "the host's: every service on its loopback, and every process's command line in /proc"


def run(
    isolation: Isolation,
    workdir: Path,
    script: str,
    stdin: bytes,
    timeout: float,
    accept: Callable[[bytes], float | None] | None = None,
    starved: Callable[[float], float | None] | None = None,
) -> ChildResult:
    """Run the child, feed it `stdin`, and read at most OUTPUT_LIMIT bytes.

    The child has `timeout` seconds; with `accept`, every complete line it prints is shown to
    `accept`, and only a line it accepts (a valid answer) gives the child more: the seconds
    `accept` returns. With `starved`, a child at its deadline is first shown to `starved` with
    the share of a core it has had over its life, and keeps running for the seconds it
    returns (None: it has timed out).
    """
    env = dict([FIXED_HASH], **ONE_THREAD)
    if isolation.level == "local":
        env.update(PATH=os.environ.get("PATH", ""), LANG="C.UTF-8")
    else:
        env.update(child_python.environment(python_for(isolation.level)))
    identity = isolation.runs_as
    adopt_orphans()  # the sandbox's inner processes come back to us to be reaped (set once)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            command(isolation.level, workdir, script, isolation.proc_mount),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=env,
            preexec_fn=_preexec(identity, isolation.level == "user" and isolation.own_namespaces, isolation.nice),
            close_fds=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:  # the uid's process limit; namespaces refused
        return ChildResult(b"", f"could not start: {exc}".encode(), None, False, False, 0.0)
    RUNNING.add(proc.pid)
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass

    def share() -> float:  # of one core, over the child's life
        return cpu_seconds(identity, proc.pid) / max(time.monotonic() - start, 1e-3)

    extend = (lambda: starved(share())) if starved else None
    out, err, timed_out, flooded = _read_bounded(proc, timeout, accept, extend)
    cpu_share = share() if timed_out else 1.0
    _stop(proc, identity)
    RUNNING.discard(proc.pid)
    return ChildResult(bytes(out), bytes(err), proc.returncode, timed_out, flooded, time.monotonic() - start, cpu_share)


def _read_bounded(
    proc: subprocess.Popen,
    timeout: float,
    accept: Callable[[bytes], float | None] | None,
    extend: Callable[[], float | None] | None,
) -> tuple[bytearray, bytearray, bool, bool]:
    out, err = bytearray(), bytearray()
    line_start = 0
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, out)
    selector.register(proc.stderr, selectors.EVENT_READ, err)
    open_streams = 2
    while open_streams:
        remaining = deadline - time.monotonic()
        if remaining <= 0 and extend is not None and (extra := extend()) is not None:
            deadline, remaining = time.monotonic() + extra, extra
        if remaining <= 0:
            return out, err, True, False
        for key, _ in selector.select(timeout=remaining):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data is err:
                err.extend(chunk[: max(0, STDERR_LIMIT - len(err))])
                continue
            if len(out) + len(chunk) > OUTPUT_LIMIT:
                return out, err, False, True
            out.extend(chunk)
            while (end := out.find(b"\n", line_start)) != -1:
                if accept is not None and (more := accept(bytes(out[line_start:end]))) is not None:
                    deadline = time.monotonic() + more
                line_start = end + 1
            if len(out) - line_start > LINE_LIMIT:
                return out, err, False, True
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return out, err, True, False
    return out, err, False, False


def cpu_seconds(identity: Identity | None, session: int) -> float:
    """CPU time used so far by the grading's uid (or, at the local level, the child's session),
    each process with what it has reaped (processes.cpu_ticks): an engine that works in a
    worker it forks and waits for is busy, not asleep, however little its own clock shows."""
    pids = identity_processes(identity.uid) if identity else in_sessions({session})
    return sum(cpu_ticks(fields) for pid in pids if (fields := stat_fields(pid)) is not None) / CLOCK_TICKS


def restore_priority(isolation: Isolation) -> None:
    """Give every process of `isolation`'s uid this process's priority again: a child started at
    a lower one (Isolation.nice) whose reason to wait is over."""
    if (who := isolation.runs_as) is None:
        return
    try:
        os.setpriority(os.PRIO_USER, who.uid, os.getpriority(os.PRIO_PROCESS, 0))
    except OSError:  # no process of that uid is left
        pass


def kill_running() -> None:
    """SIGKILL every child this process has running, trusted reference runs included."""
    for group in list(RUNNING):
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _stop(proc: subprocess.Popen, identity: Identity | None) -> None:
    """Kill the child's whole session and, with an identity, anything of its uid that escaped."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    if identity:
        kill_processes(identity.uid)
