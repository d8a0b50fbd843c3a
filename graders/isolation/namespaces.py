"""The user level's own walls: a network and a /proc of the child's own, made by root where
bubblewrap cannot make its namespaces.

bwrap needs a user namespace, which a container or a chroot often refuses; root there may
still unshare a network and a mount namespace (they need only CAP_SYS_ADMIN). Without them a
user-level child shares the host's loopback, where a Dask scheduler or any other local service
listens, and reads every process's command line in /proc (the instructor's `minigrad-class
--seed 7`). With them the child has a network of nothing but a loopback that is down (every
connect fails at once; abstract Unix sockets belong to a network namespace too), and a /proc
of its own mounted `hidepid=2`, which lists only its own uid's processes.

`problem` makes them once in a throwaway fork and says whether it could (once per process, and
the class's forkserver asks before it forks its gradings), so a machine that cannot is known
before any child runs, and the level is chosen knowing it.
"""

from __future__ import annotations

import ctypes
import functools
import os

CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000  # linux/sched.h
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_SLAVE = 0x2, 0x4, 0x8, 0x4000, 0x80000  # linux/mount.h
# Before 5.8 every /proc of one pid namespace shared its options: hidepid on the child's mount
# would have hidden processes on the host's /proc too. From 5.8 each mount has its own.
FIRST_KERNEL = (5, 8)
LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here, not in a fork; os.unshare exists only from 3.12
FIX = (
    "run the grader where bubblewrap can make its namespaces (`bwrap --unshare-all --ro-bind / / true` must work), "
    "or give its container CAP_SYS_ADMIN without a profile that forbids unshare and mount "
    "(docker run --cap-add SYS_ADMIN --security-opt apparmor=unconfined, or --privileged)"
)


def enter() -> None:
    """Give the calling process (root, before it drops to the grading's uid) a network
    namespace of its own and a /proc that shows only its own uid's processes; OSError if the
    machine refuses either. The host's /proc is made a slave in the new mount namespace first,
    so the /proc mounted on it never reaches the host's mounts (only /proc: in a chroot, `/` may
    be no mount point at all)."""
    _check(LIBC.unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare")
    _check(LIBC.mount(b"none", b"/proc", None, MS_REC | MS_SLAVE, None), "mount --make-rslave /proc")
    _check(LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2"), "mount /proc")


def _check(status: int, what: str) -> None:
    if status != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


@functools.cache
def problem() -> str | None:
    """Why a user-level child cannot have a network and a /proc of its own here; None when it can."""
    if os.geteuid() != 0:
        return "only root can make them"
    release = os.uname().release
    try:
        kernel = tuple(int(part) for part in release.split("-")[0].split(".")[:2])
    except ValueError:
        kernel = (0, 0)
    if kernel < FIRST_KERNEL:
        return f"kernel {release} is older than 5.8, where a /proc of the child's own would change the host's"
    read, write = os.pipe()
    pid = os.fork()  # not a Python started for it: that would cost each grading a tenth of a second
    if pid == 0:  # the trial: whatever happens in it, it ends here, and only a clean entry is a yes
        said = b"the trial failed"
        try:
            enter()
            said = b""
        except OSError as exc:
            said = str(exc.strerror).encode()
        finally:
            os.write(write, said)
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return said or None
