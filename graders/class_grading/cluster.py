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

Workers run gradings as root (bwrap and the grading uids need it), so every scheduler, one on
this machine's loopback too, is reached over TLS with certificates (the README's recipe, where
the scheduler demands the client's certificate from the same authority): anyone who can reach
an open scheduler runs code as root on every worker, and a user-level child on a machine that
cannot give it a network of its own shares that machine's loopback.
"""

from __future__ import annotations

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


def security(address: str, ca_file: str | None, cert: str | None, key: str | None) -> Security:
    """TLS settings for `address`, with this side's certificate and the cluster's authority;
    refuses any other scheme (plain TCP, loopback included) and TLS without certificates."""
    scheme, _, rest = address.rpartition("://")
    needed = (
        "--tls-ca-file, --tls-cert and --tls-key, or Dask's distributed.comm.tls settings. Workers run gradings as "
        "root: whoever reaches an open scheduler (a sandboxed child on its loopback too) runs code as root on them"
    )
    if scheme != "tls":
        raise SystemExit(
            f"{address}: a scheduler must be reached over TLS with certificates: tls://{rest} with {needed}"
        )
    settings = Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)
    try:
        context = settings.get_connection_args("client").get("ssl_context")  # None: no CA file or no certificate
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise SystemExit(f"{address}: the TLS files cannot be used: {exc}") from None
    if context is None:
        raise SystemExit(f"{address}: TLS needs the cluster's certificates: {needed}")
    return settings


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
