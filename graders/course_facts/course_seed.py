"""The course's official seed: one for the whole class, derived from a secret nobody commits.

One seed for everyone means two students with the same bug get the same score, and the
reference's answers can be computed once for the class. Deriving it from a secret (rather
than publishing it) means nobody can replay the hidden inputs before the deadline; whoever
holds the secret can replay any grade exactly.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

SECRET_VARIABLE = "MINIGRAD_COURSE_SECRET"
NO_SECRET = (
    f"official grading needs the course secret: set {SECRET_VARIABLE} or pass --secret-file "
    "(a file kept out of the repository)"
)


def read_secret(secret_file: Path | None) -> str | None:
    """The secret from `secret_file` when given, else from the environment; None if neither."""
    if secret_file is not None:
        return secret_file.read_text().strip() or None
    return os.environ.get(SECRET_VARIABLE) or None


def official_seed(secret: str, assignment: str = "minigrad") -> int:
    """A seed that only the secret's holder can compute, the same on every machine."""
    digest = hmac.new(secret.encode(), assignment.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


def resolve(seed: int | None, official: bool, secret_file: Path | None) -> int | None:
    """The seed a grading uses: the one asked for; else with `official` the course's (None
    when there is no secret to derive it from); else 0."""
    if seed is not None or not official:
        return seed or 0
    secret = read_secret(secret_file)
    return None if secret is None else official_seed(secret)
