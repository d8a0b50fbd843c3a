"""One identity per grading: a uid of its own, so two gradings on one machine never meet.

Every child of one grading runs as a uid drawn from a reserved range that no account uses.
Process limits (`RLIMIT_NPROC` counts a uid's processes), the final sweep (kill that uid's
processes, delete that uid's files) and `/proc` access (a process may only inspect or signal
its own uid's processes) then apply to that grading alone: a student holding idle processes,
or signalling everything it can see, reaches nobody else's grading.

A uid is claimed by holding an exclusive `flock` on a root-only lock file for the life of the
grading; the kernel drops the lock when the grader exits, however it exits, so a crashed
grading never keeps its uid. Whatever a crashed grading left behind is swept when its uid is
claimed again.

A grading claims two: the second runs the child of a program whose CPU is timed
(graders/grading/cases.py `measured`), so that child can run beside the others with a process
limit, a cgroup and a count of its own (a uid's processes are told apart from the other's), and
the sweep after one of its children touches nothing of the other.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import stat
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from graders.course_facts.kit import ROOT

from . import cgroup
from .processes import kill_until_gone

FIRST_UID = 1_870_000_000  # far above any account, below the 32-bit "no uid" values
UID_COUNT = 100_000
LOCKS = Path("/run/minigrad-uids")
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")  # where a uid can leave files


@dataclass(frozen=True)
class Identity:
    """Who a grading's children run as, and the cgroup that bounds them (None: rlimits only);
    `groups`, the supplementary groups its children keep; `timed`, the identity of the child of
    a timed program (None: it runs as this one)."""

    uid: int
    limits: cgroup.Limits | None
    groups: tuple[int, ...] = ()
    timed: Identity | None = None

    @property
    def gid(self) -> int:
        return self.uid

    def describe(self) -> str:
        own = self.limits.describe() if self.limits else cgroup.RLIMITS_ONLY
        return own if self.timed is None else f"{own}; the same again for the timed program's child, a uid of its own"


@contextmanager
def claimed() -> Iterator[Identity]:
    """Fresh uids (and cgroups, where the machine allows them) for one grading, swept afterwards:
    one for its children, one for the child of its timed program, which belongs to the first's
    group so that it reads the same work folder.

    Before any grading uid runs, the project (hidden suites, reference) is closed to other
    users: from now on there are other users, and they must never read it.
    """
    close_to_others(ROOT)
    LOCKS.mkdir(mode=0o700, exist_ok=True)
    with ExitStack() as held:
        first = held.enter_context(_one())
        yield replace(first, timed=held.enter_context(_one((first.gid,))))


@contextmanager
def _one(groups: tuple[int, ...] = ()) -> Iterator[Identity]:
    lock, uid = _claim_uid()
    claimed = Identity(uid, None, groups)
    try:
        sweep(uid)
        claimed = Identity(uid, cgroup.create(uid), groups)
        yield claimed
    finally:
        release(claimed)
        os.close(lock)


def release(identity: Identity) -> None:
    """End everything the grading left: its processes, its cgroups, its files (both uids')."""
    for who in [who for who in (identity, identity.timed) if who is not None]:
        if who.limits:
            who.limits.kill_and_remove()
        sweep(who.uid)


def _claim_uid() -> tuple[int, int]:
    start = random.SystemRandom().randrange(UID_COUNT)
    for offset in range(UID_COUNT):
        uid = FIRST_UID + (start + offset) % UID_COUNT
        fd = os.open(LOCKS / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, uid
        except BlockingIOError:
            os.close(fd)
    raise RuntimeError("every grading uid is in use")


def sweep(uid: int) -> None:
    """Kill every process of `uid` and delete every file it owns where it could write."""
    kill_processes(uid)
    for top in SHARED_WRITABLE:
        remove_owned(Path(top), uid)


def processes(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    found.append(int(entry.name))
            except FileNotFoundError:
                continue
    return found


def kill_processes(uid: int) -> None:
    kill_until_gone(lambda: processes(uid))


def remove_owned(top: Path, uid: int) -> None:
    """Delete what `uid` owns under `top`, without following links; others' files stay."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if info.st_uid == uid:
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)
        elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
            remove_owned(Path(entry.path), uid)  # only a world-writable folder can hold its files


def close_to_others(path: Path) -> None:
    """Remove every permission of "other users" from `path`, never given back.

    At the `user` level only file permissions stand between the child and the hidden
    material, and the child's uid is exactly an "other user". The project folder (hidden
    suites, reference, specimens, default grade folders) is closed once and for good: a mode
    switched off during a grading and back on afterwards races with a second grading and
    leaves the folder open to whichever child runs in between. Git keeps no folder modes, so
    the checkout stays clean.
    """
    mode = path.stat().st_mode & 0o7777
    if mode & 0o007:
        os.chmod(path, mode & ~0o007)
