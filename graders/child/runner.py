"""The child: runs grading programs on the submission and prints one JSON line per program.

This file and `interpreter.py` are the only grader code the child sees; it runs with
`python -I -S`, next to a copy of the submission, and never sees expected values.
Input (stdin): {"programs": [...]} . Output (stdout): one line per program,
{"i": index, "out": [...], "error": null | {"type", "message", "where"}}.
"""

import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "submission"), HERE]
sys.setrecursionlimit(10_000)
gc.set_threshold(100_000, 50, 100)  # as the parent's reference run: Value graphs are full of cycles

from interpreter import run_program  # noqa: E402


def main() -> None:
    request = json.loads(sys.stdin.read())
    channel = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the submission prints is thrown away, never parsed
    sys.stdout = open(os.devnull, "w")
    for index, program in enumerate(request["programs"]):
        if index < request.get("start", 0):
            continue
        out, error = run_program(program, os.path.join(HERE, "submission"))
        channel.write(json.dumps({"i": index, "out": out, "error": error}, allow_nan=False) + "\n")
        channel.flush()


main()
