"""Self-test probe, run by the parent only, in a child run exactly as a grading's.

Asked to (`hide`), it reports what it can see that it must not: the parent's loopback port,
a canary file beside the hidden suites, the canary in any process's environment. Asked to
(`imports`), it reports whether it can import what the course promises students: the standard
library and NumPy (from the folder the parent passes, as the runner gets it), and use NumPy's
compiled core; and that it runs the parent's own Python (`version`, the parent's sys.version):
a copied interpreter whose libpython was found elsewhere would be another build. Output: one
JSON line, {"network", "canary", "environ"} and/or {"imports": null or what failed}.
"""

import json
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy_only  # noqa: E402

numpy_only.allow(sys.argv)
STDLIB = ("collections", "functools", "itertools", "json", "math", "random", "statistics")


def hidden(request: dict) -> dict:
    seen = {"network": False, "canary": False, "environ": False}
    try:
        with socket.create_connection(("127.0.0.1", request["port"]), timeout=1):
            seen["network"] = True
    except OSError:
        pass
    try:
        with open(request["canary"]) as f:
            seen["canary"] = request["token"] in f.read()
    except OSError:
        pass
    token = request["token"].encode()
    seen["environ"] = request["token"] in "".join(os.environ.values())
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                seen["environ"] = seen["environ"] or token in f.read()
        except OSError:
            continue
    return seen


def imports(version: str | None) -> str | None:
    """None when every promised import works on the parent's Python; else the first failure."""
    if version is not None and sys.version != version:
        return f"the child runs another Python: {sys.version}, not the kit's {version}"
    try:
        for name in (*STDLIB, "numpy"):
            __import__(name)
        import numpy

        if float(numpy.ones(3) @ numpy.arange(3.0)) != 3.0:
            return "NumPy computes ones(3) @ arange(3) wrongly"
    except Exception as exc:  # noqa: BLE001 - any failure to import is the answer
        return f"{type(exc).__name__}: {exc}"[:500]
    return None


request = json.loads(sys.stdin.read())
answer = hidden(request["hide"]) if "hide" in request else {}
if request.get("imports"):
    answer["imports"] = imports(request.get("version"))
print(json.dumps(answer))
