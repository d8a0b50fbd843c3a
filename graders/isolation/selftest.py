"""Before grading: prove the chosen isolation level hides what it must, and that its child
can import what the course promises; or refuse to grade.

The probe child tries to reach a port the parent opened on loopback, read a canary file
planted beside the hidden suites, and find a canary in the parent's environment
(`/proc/*/environ`). What each level must hide:
  bwrap: all three;  local: nothing (untrusted);
  user:  all three where root may give its child a network of its own (namespaces.py); where
         it may not, the canary file and the environment, and the level is refused for
         official grades and classes (`closed_network`): its child would reach every service
         on this machine's loopback.
Then the probe imports the standard library and NumPy the way the runner will. The machine is
not trusted to have them: without this, a child that cannot import NumPy would give every
honest part-4 engine 0 and call it the student's mistake. That proof is kept (per kit version,
level, interpreter and NumPy folder), so it costs a grading nothing once made.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import socket
import sys
from contextlib import contextmanager
from pathlib import Path

from graders.course_facts import kit_version
from graders.course_facts.kit import SUITES

from . import child_numpy, namespaces, sandbox
from .identity import Identity
from .workdir import prepare_workdir

MUST_HIDE = {"bwrap": {"network", "canary", "environ"}, "user": {"network", "canary", "environ"}, "local": set()}
ENV_KEY = "MINIGRAD_GRADER_CANARY"
RUNS_ANOTHER = "the child runs another Python"  # the probe's words (child/probe.py)


@contextmanager
def planted_canaries():
    token = secrets.token_hex(16)
    canary = SUITES / f".canary-{token[:8]}"
    canary.write_text(token)
    old = os.environ.get(ENV_KEY)
    os.environ[ENV_KEY] = token
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        yield {"canary": str(canary), "token": token, "port": listener.getsockname()[1]}
    finally:
        listener.close()
        canary.unlink()
        if old is None:
            del os.environ[ENV_KEY]
        else:
            os.environ[ENV_KEY] = old


def probe(isolation: sandbox.Isolation, workdir: Path) -> dict[str, bool]:
    """What a child run this way could see; a probe that does not answer counts as seeing all."""
    with planted_canaries() as request:
        result = sandbox.run(isolation, workdir, "probe.py", json.dumps({"hide": request}).encode(), timeout=10)
    try:
        seen = json.loads(result.stdout)
        return {key: seen[key] is not False for key in ("network", "canary", "environ")}
    except (ValueError, KeyError, TypeError):
        return {"network": True, "canary": True, "environ": True}


def passes(isolation: sandbox.Isolation, seen: dict[str, bool]) -> bool:
    """Whether the probe saw nothing `isolation` must hide; a user level without a network of
    its own (allowed only where the network need not be closed) may see the network."""
    hide = MUST_HIDE[isolation.level]
    if isolation.level == "user" and not isolation.own_namespaces:
        hide = hide - {"network"}
    return not any(seen[key] for key in hide)


def missing_imports(isolation: sandbox.Isolation, who: Identity | None) -> str | None:
    """Why the child at `isolation` cannot grade what the course promises, with the fix; None
    when its probe imported the standard library and NumPy (proved once, then remembered)."""
    python = sandbox.python_for(isolation.level)
    numpy = sandbox.numpy_for(python)
    proof = _proof_file(isolation, python, numpy)
    if proof is not None and proof.is_file():
        return None
    workdir, _ = prepare_workdir(None, who)
    try:
        asked = json.dumps({"imports": True, "version": sys.version}).encode()
        result = sandbox.run(isolation, workdir, "probe.py", asked, timeout=60)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    try:
        problem = json.loads(result.stdout)["imports"]
    except (ValueError, KeyError, TypeError):
        said = result.stderr.decode(errors="replace")[-300:]
        problem = f"the probe gave no answer (exit {result.returncode}): {said}"
    if problem is None:
        _remember(proof)
        return None
    where = f"NumPy from {numpy}" if numpy else "no NumPy it can read"
    if (chosen := os.environ.get(child_numpy.OVERRIDE)) is not None:
        where += f", as ${child_numpy.OVERRIDE}={chosen} asks"
    return (
        f"the grading's child ({isolation.level} level, {python}, {where}) cannot import what the course "
        f"promises: {problem}. No grade is written: every honest part-4 engine would score 0. "
        f"Fix: {_fix(python, numpy, problem)}."
    )


def _fix(python: str, numpy: Path | None, problem: str) -> str:
    """What gives the child the kit's Python and a NumPy it can load, as this machine stands."""
    system = "`apt-get install python3-numpy`"  # Debian's NumPy is built for Debian's Python only
    if Path(python).parent != Path("/usr/bin"):
        system = f"install the kit's NumPy again (`{sys.executable} -m pip install --force-reinstall numpy`)"
    if problem.startswith(RUNS_ANOTHER) and child_numpy.HOME in Path(python).parents:
        return f"remove {Path(python).parent.parent} (the grader copies the kit's Python again)"
    if problem.startswith(RUNS_ANOTHER):
        return f"run the grader with {python}, the Python its .venv was made with"
    if os.environ.get(child_numpy.OVERRIDE) is not None:
        return f"point ${child_numpy.OVERRIDE} at a folder holding numpy/ built for {python}, or unset it"
    if numpy is not None and child_numpy.HOME in numpy.parents:
        return f"remove {numpy} (the grader makes its copy again), or {system}"
    if os.geteuid() != 0:
        return f"run `make grade` as root once (the grader copies the kit's NumPy to {child_numpy.HOME}), or {system}"
    return (
        f"{child_numpy.HOME} must be a folder of root's that others cannot write, where the grader copies the "
        f"kit's NumPy (remove it to have it made again), or {system}"
    )


def _proof_file(isolation: sandbox.Isolation, python: str, numpy: Path | None) -> Path | None:
    """Where the proof for this kit, level, interpreter and NumPy folder is kept: root's under
    /var/lib/minigrad, another user's in their cache folder. A replaced interpreter or NumPy
    (another inode or time) needs a proof of its own."""
    facts = [kit_version.digest(), isolation.level, *isolation.proc_mount, python, str(numpy)]
    for path in (Path(python), *([numpy / "numpy" / "__init__.py"] if numpy else [])):
        try:
            info = path.stat()
        except OSError:
            return None
        facts.append(f"{info.st_ino}:{info.st_mtime_ns}:{info.st_size}")
    name = hashlib.sha256("\0".join(facts).encode()).hexdigest()[:32]
    if os.geteuid() == 0:
        return child_numpy.HOME / "proofs" / name
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "minigrad" / "proofs" / name


def _remember(proof: Path | None) -> None:
    """Keep a proof; a machine where it cannot be kept only proves it again next time."""
    if proof is None or (os.geteuid() == 0 and not child_numpy.own_home()):
        return
    try:
        proof.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        proof.touch()
    except OSError:
        pass


def choose_level(
    requested: str, official: bool, who: Identity | None, closed_network: bool = False
) -> tuple[sandbox.Isolation, dict, str]:
    """The strongest level whose self-test passes (or the requested one, checked the same way),
    with what its probe saw and, when a stronger level failed, why it was passed over. With
    `closed_network` (official grades, classes) the user level is used only where its child
    gets a network of its own."""
    candidates = sandbox.available_levels() if requested == "auto" else [requested]
    if official:
        candidates = [level for level in candidates if level != "local"]
    own = namespaces.problem() is None
    passed_over = []
    if closed_network and not own and "user" in candidates:
        # nor a fall back from it to `local`, whose child has the network too
        candidates = [level for level in candidates if level not in ("user", "local")]
        passed_over.append(
            f"the user level's child would share this machine's network ({namespaces.problem()}), "
            f"which official grades and classes refuse; fix: {namespaces.FIX}"
        )
    try:
        workdir, _ = prepare_workdir(None, who)
    except OSError as exc:  # e.g. a container without the capabilities to hand files to the grading's uid
        needed = "the bwrap or user level" if official else f"isolation level {requested!r}"
        raise SystemExit(
            f"grading needs {needed}, and this machine cannot give the grading's uid its files: {exc}"
        ) from None
    try:
        for level in candidates:
            mounts = sandbox.PROC_MOUNTS if level == "bwrap" else sandbox.PROC_MOUNTS[:1]
            for proc_mount in mounts:
                isolation = sandbox.Isolation(level, who, proc_mount, own_namespaces=level == "user" and own)
                for _ in range(2):  # once more: a self-test may lose a race with a busy machine
                    seen = probe(isolation, workdir)
                    if passes(isolation, seen):
                        return isolation, seen, "; ".join(passed_over)
            passed_over.append(f"{level} failed its self-test (the child could see: {_visible(seen)})")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if official:
        reason = "official grading needs the bwrap or user level, and neither passed its self-test"
    else:
        reason = f"isolation level {requested!r} is not available here"
    print("; ".join([reason, *passed_over]), file=sys.stderr)
    raise SystemExit(2)  # fail closed: no grade at all rather than one from a weaker level


def _visible(seen: dict[str, bool]) -> str:
    return ", ".join(key for key, value in seen.items() if value) or "nothing"
