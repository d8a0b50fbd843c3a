"""Self-test probe: report what this child can see that it must not. Run by the parent only."""

import json
import os
import socket
import sys

request = json.loads(sys.stdin.read())
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
print(json.dumps(seen))
