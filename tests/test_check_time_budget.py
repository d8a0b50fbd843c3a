"""The public checks' time budget is CPU time: a check that computes but gets little of a busy
machine's CPU is given its budget, and called slow or endless by the CPU it used, never
"waiting" like a sleep.

The busy machine is made exactly: the test stops and continues the checks' process, letting it
run a tenth of the time, so its share of a core is about 10% whatever else the machine does.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from graders.audit.grading import check_command, check_env

from grading import ROOT


def looping_submission(tmp_path: Path) -> Path:
    """The reference, with an endless loop in `Value.__neg__`."""
    shutil.copytree(
        ROOT / "reference" / "minigrad", tmp_path / "minigrad", ignore=shutil.ignore_patterns("__pycache__")
    )
    engine = tmp_path / "minigrad" / "engine.py"
    engine.write_text(
        engine.read_text().replace("        return self * -1\n", "        while True:\n            pass\n", 1)
    )
    return tmp_path


def run_throttled(command: list[str], share: float, limit: float) -> str:
    """Run `command`, letting it compute only `share` of each tenth of a second; its output."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=check_env(),
    )
    deadline = time.monotonic() + limit
    try:
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1 * share)
            process.send_signal(signal.SIGSTOP)
            time.sleep(0.1 * (1 - share))
            process.send_signal(signal.SIGCONT)
    finally:
        process.send_signal(signal.SIGCONT)
    out, _ = process.communicate(timeout=limit)
    return out


def test_a_starved_loop_is_stopped_by_the_cpu_it_used_not_called_a_wait(tmp_path: Path) -> None:
    folder = looping_submission(tmp_path)
    command = check_command(
        "--submission", str(folder), "--part", "value", "--time-limit", "0.5", "-k", "test_unary_forward and -a"
    )
    # Half the time stopped, and on a busy machine (CI runs other work beside the tests) much
    # less than half of the rest: still computing far more than 1% of each wait, so its CPU
    # budget stops it, not the clock (at 10% it could fall to 3% and reach the last resort).
    out = run_throttled(command, share=0.5, limit=120)
    # The CPU alarm is checked at the kernel's tick, and the throttling's stops and starts make
    # the check's CPU time coarse: it says what it measured, 0.5 s or a tick or two more.
    took = re.search(
        r"took (\d+\.\d) s \(limit 0.5 s\): slow, or an endless loop in `Value.__neg__` \(minigrad/engine.py:", out
    )
    assert took and 0.5 <= float(took[1]) < 1.0, out
    assert "waited" not in out, out
