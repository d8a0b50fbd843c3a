"""Grade through a Dask distributed cluster: the same gradings, on other machines' cores.

The class command talks to a `concurrent.futures.Executor` either way; this module makes one
from a Dask client (`Client.get_executor`), so Dask schedules, retries and rebalances and the
kit writes no scheduler of its own. Each task is `jobs.grade(job)`, named by the student
and the archive hash (two students with equal files are never merged into one task), with
the student's last grading time as its priority, so the slowest start first.

Faults, as Dask handles them: a task that raises is retried (`RETRIES`); a worker that dies
mid-grading has its tasks rerun elsewhere, and a task whose gradings killed
`distributed.scheduler.allowed-failures` workers ends with `KilledWorker`, which the class
command records in errors.csv; a hung worker is dropped after the scheduler's `worker-ttl`.

Workers run gradings as root (bwrap and the grading uids need it), so a scheduler that is not
on this machine's loopback must be reached over TLS with certificates: anyone who can reach
an open scheduler could run code on every worker.
"""

from __future__ import annotations

import ipaddress
from concurrent.futures import Executor, Future

from distributed import Client
from distributed.security import Security

from . import jobs

RETRIES = 2  # a task that raised (not a grade: the grader never raises for a student) runs again
CONNECT_TIMEOUT = "30s"


def connect(address: str, ca_file: str | None, cert: str | None, key: str | None) -> tuple[Executor, int]:
    """An executor on the cluster at `address`, and how many gradings it runs at once."""
    try:
        client = Client(address, security=security(address, ca_file, cert, key), timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise SystemExit(f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT}: {exc}") from None
    return ClusterExecutor(client), max(1, sum(client.nthreads().values()))


def security(address: str, ca_file: str | None, cert: str | None, key: str | None) -> Security | None:
    """TLS settings for `address`; refuses a scheduler off the loopback without TLS."""
    scheme, _, rest = address.rpartition("://")
    host = rest.rsplit(":", 1)[0].strip("[]")
    if scheme != "tls":
        if not _loopback(host):
            raise SystemExit(
                f"{address}: a scheduler off this machine must use TLS (tls://{rest}, with --tls-ca-file, --tls-cert "
                "and --tls-key or Dask's distributed.comm.tls settings): workers run gradings as root"
            )
        return None
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def task_key(job: jobs.Job) -> str:
    return f"grade-{job.student}-{job.digest[:16]}"


class ClusterExecutor(Executor):
    """`Client.get_executor` with each task's name and priority taken from its job, and a
    shutdown that can cancel (Ctrl-C): every task is cancelled and its grading stopped."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.tasks = client.get_executor(pure=False, retries=RETRIES)

    def submit(self, fn, job: jobs.Job, /) -> Future:  # type: ignore[override]
        return self.tasks.submit(fn, job, key=task_key(job), priority=round(job.seconds * 1000))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self.client.status in ("closing", "closed"):
            return
        self.tasks.shutdown(wait=wait and not cancel_futures)  # wait=False cancels what is left
        self.client.close()
