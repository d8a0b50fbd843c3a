"""A self-signed certificate for 127.0.0.1 that is its own authority: what a one-machine Dask
cluster needs, since the class command reaches a scheduler only over TLS with certificates,
loopback included (a worker runs gradings as root). The tests and the bench start their
clusters with it, as docs/large-course.md starts a real one with a private authority."""

from __future__ import annotations

import subprocess
from pathlib import Path


def certificates(folder: Path) -> dict[str, str]:
    """Write the certificate and its key into `folder`; the class command's TLS flags for them."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return {"--tls-ca-file": str(cert), "--tls-cert": str(cert), "--tls-key": str(key)}
