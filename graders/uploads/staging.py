"""A class's uploads, unpacked for as long as a command needs them and never longer.

Archives are unpacked into a private folder under `--out` (never into `--out` itself, whose
names are the class command's own), and that folder goes on every way out: a normal end, an
error, Ctrl-C, and SIGTERM, which ends the command as Ctrl-C does. Neither a second Ctrl-C nor
a SIGTERM can cut the clean-up short. `minigrad-class` and `minigrad-similar` both read the
class through here, so both see the same students, ids and refusals.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graders.reporting import output_files

from . import layouts


@contextmanager
def uploads(
    submissions: Path, out: Path, layout: str, prefix: str
) -> Iterator[tuple[str, list[layouts.Submission], list[str]]]:
    """The layout used, every student's submission and the warnings (see `layouts.collect`),
    with archives unpacked under `out` in a folder named `prefix...` until the block ends."""
    layouts.check_out(submissions, out)
    output_files.prepare_folder(out)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=out))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield layouts.collect(submissions, layout, staging, out)
    finally:
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        shutil.rmtree(staging, ignore_errors=True)
        signal.signal(signal.SIGINT, interrupt)
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the command as Ctrl-C does: what is finished is kept, staging removed."""
    raise KeyboardInterrupt
