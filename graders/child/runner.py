"""The child: runs grading programs on the submission and prints one JSON line per program.

The files of graders/child/ (this one, the interpreter, the steps) are the only grader code
the child sees; it runs with `python -I -S`, next to a copy of the submission, and never sees
expected values.
Input (stdin): {"programs": [...], "start": first program to run, "seconds": [each program's
time from the first on], "hanging" and "exiting": [functions and modules to stop at once,
hangs.py]}. Output (stdout):
one line per program, {"i": index, "out": [...], "error": null | {"type", "message", "where"}}
(an error may also say "function", "file", "line" and "code": where in the submission it
starts, which graders/grading/protocol.py checks); and notes on the side (hangs.py): where a program
still running near its deadline is, and each import of a submission module begun and ended.
Argument (optional): the folder holding a NumPy this interpreter can import (numpy_only.py).
"""

import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "submission"), HERE]

import numpy_only  # noqa: E402

numpy_only.allow(sys.argv)  # the parent found a NumPy this interpreter can import
# Low enough that the deep-chain test (suites/test_backward.py) defeats a recursive order at a
# depth that costs little to build, high enough for any graph the other tests make.
sys.setrecursionlimit(5_000)
# Graphs of Values are full of reference cycles (each `_backward` closure holds its node), and
# collecting them costs more than building them: a 100,000-node chain took 0.3 s to build and
# 0.4 s to collect. A child lives for one grade, so it collects only when garbage piles up.
gc.disable()
COLLECT_AFTER_BLOCKS = 4_000_000  # about 400 MB of small objects, well under the 1 GiB limit

import hangs  # noqa: E402
from interpreter import run_program  # noqa: E402


def main() -> None:
    request = json.loads(sys.stdin.read())
    channel = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the submission prints is thrown away, never parsed
    sys.stdout = open(os.devnull, "w")
    folder = os.path.join(HERE, "submission")
    start, seconds = request.get("start", 0), request.get("seconds", [])
    hangs.start(channel.fileno(), request.get("hanging", []), request.get("exiting", []))
    for index, program in enumerate(request["programs"]):
        if index < start:
            continue
        hangs.watch(index, seconds[index - start] if index - start < len(seconds) else None, folder)
        out, error = run_program(program, folder)
        hangs.unwatch()
        channel.write(json.dumps({"i": index, "out": out, "error": error}, allow_nan=False) + "\n")
        channel.flush()
        if sys.getallocatedblocks() > COLLECT_AFTER_BLOCKS:
            gc.collect()
    os._exit(0)  # skip the interpreter's final collection: nothing is left to say


main()
