"""Before grading: prove the chosen isolation level hides what it must, or refuse it.

The probe child tries to reach a port the parent opened on loopback, read a canary file
planted beside the hidden suites, and find a canary in the parent's environment
(`/proc/*/environ`). What each level must hide:
  bwrap: all three;  user: the canary file and the environment;  local: nothing (untrusted).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from contextlib import contextmanager
from pathlib import Path

from . import sandbox

SUITES = Path(__file__).resolve().parent / "suites"
MUST_HIDE = {"bwrap": {"network", "canary", "environ"}, "user": {"canary", "environ"}, "local": set()}
ENV_KEY = "MINIGRAD_GRADER_CANARY"


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
        result = sandbox.run(isolation, workdir, "probe.py", json.dumps(request).encode(), timeout=10)
    try:
        seen = json.loads(result.stdout)
        return {key: seen[key] is not False for key in ("network", "canary", "environ")}
    except (ValueError, KeyError, TypeError):
        return {"network": True, "canary": True, "environ": True}


def passes(level: str, seen: dict[str, bool]) -> bool:
    return not any(seen[key] for key in MUST_HIDE[level])
