"""minigrad-class on a real Dask cluster: a `dask scheduler` and two `dask worker` processes
on loopback, over TLS with throwaway certificates, started by Dask's own commands.

The cluster must give the grades of the local `--jobs 1` run, byte for byte (only `graded_at`
and `execution_time`, when and how long, may differ), also when a worker is killed mid-batch, and
Ctrl-C on the class command must stop every grading on every worker.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_class_grading import grade_class, read_csv

from course import loopback_tls
from course.submissions import materialize
from graders.class_grading import cluster, jobs
from graders.course_facts import kit_version
from graders.uploads import packing

from grading import ROOT, ctrl_c_reaches_it, leftover_processes, needs_isolation

pytestmark = needs_isolation
DASK = Path(sys.executable).with_name("dask")
WORKER_SETTINGS = {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}  # as the README starts its workers
EXAMPLES = ROOT / "examples" / "submissions"
CLASS_COMMAND = [sys.executable, "-m", "graders.class_grading.cli"]


def without(rows: list[dict[str, str]], *columns: str) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if k not in columns} for row in rows]


# Eight of the sample class: correct, partial, buggy, broken, a flat upload and a wrong quiz,
# enough for a worker to be caught mid-grading with grades already in. What a cluster must
# keep is its own (placing, losing and redoing gradings), not each student's grade, which
# tests/test_class_grading.py asserts for the whole class; the slowest students (an endless
# loop, the attacks) would only make each run here longer.
STUDENTS = (
    "ada-correct",
    "ben-partial",
    "cleo-buggy",
    "dev-broken",
    "fay-tanh-derivative",
    "hal-reversed-order",
    "kim-flat-upload",
    "nia-quiz-wrong",
)


@pytest.fixture(scope="module")
def sample_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sample") / "class"
    for student in STUDENTS:
        materialize(EXAMPLES / f"{student}.json", folder / student)
    return folder


@pytest.fixture(scope="module")
def local_grades(sample_class: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """The sample class graded on this machine, one at a time: what the cluster must give."""
    out = tmp_path_factory.mktemp("local") / "out"
    grade_class(sample_class, out, "--jobs", "1", "--seed", "5")
    return read_csv(out / "grades.csv")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A self-signed certificate for 127.0.0.1 that is its own authority."""
    return loopback_tls.certificates(tmp_path_factory.mktemp("tls"))


class Cluster:
    def __init__(self, address: str, workers: dict[str, subprocess.Popen], folders: dict[str, Path]) -> None:
        self.address, self.workers, self.folders = address, workers, folders


@pytest.fixture
def dask_cluster(request: pytest.FixtureRequest, tmp_path: Path, certificates: dict[str, str]) -> Iterator[Cluster]:
    """A scheduler and two single-thread workers (no nanny, so a killed worker stays dead),
    each worker with a local directory of its own; the scheduler's Dask settings may be
    changed through the environment (`request.param`)."""
    settings = getattr(request, "param", {})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tls://127.0.0.1:{port}"
    tls = [arg for pair in certificates.items() for arg in pair]
    logs = tmp_path / "logs"
    logs.mkdir()
    scheduler = [
        str(DASK),
        "scheduler",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--protocol",
        "tls",
        "--no-dashboard",
        *tls,
    ]
    started = [
        subprocess.Popen(
            scheduler, stdout=subprocess.DEVNULL, stderr=(logs / "scheduler").open("w"), env={**os.environ, **settings}
        )
    ]
    workers, folders = {}, {}
    for name in ("w1", "w2"):
        folders[name] = tmp_path / name
        workers[name] = subprocess.Popen(
            [
                str(DASK),
                "worker",
                address,
                "--name",
                name,
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
                "--local-directory",
                str(folders[name]),
                *tls,
            ],
            stdout=subprocess.DEVNULL,
            stderr=(logs / name).open("w"),
            cwd=ROOT,
            env={**os.environ, **WORKER_SETTINGS},
        )
        started.append(workers[name])
    try:
        _wait_for_workers(address, certificates, 2)
        yield Cluster(address, workers, folders)
    finally:  # workers first, while the scheduler still answers their goodbye
        for process in reversed(started):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_workers(address: str, certificates: dict[str, str], count: int) -> None:
    from distributed import Client

    security = cluster.security(address, *certificates.values())
    deadline = time.monotonic() + 120
    while True:
        try:
            with Client(address, security=security, timeout="5s") as client:
                client.wait_for_workers(count, timeout=120)
                return
        except OSError:
            assert time.monotonic() < deadline, "the scheduler never answered"
            time.sleep(0.5)


def gradings_under(folder: Path) -> dict[int, str]:
    """Live gradings of a submission unpacked under `folder`: for each, the student. A grading
    is a fork of the worker's forkserver whose stderr is `STUDENT.grader-stderr.txt` in its task
    folder, `minigrad-task-*` (jobs.py)."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stderr = Path(os.readlink(entry / "fd" / "2"))
        except OSError:
            continue
        if (
            stderr.name.endswith(jobs.STDERR)
            and stderr.is_relative_to(folder)
            and stderr.parent.name.startswith(jobs.TASK)
        ):
            found[int(entry.name)] = stderr.name.removesuffix(jobs.STDERR)
    return found


def wait_until(condition, seconds: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < seconds, f"waited {seconds} s for {what}"
        time.sleep(0.05)
    return time.monotonic() - start


def class_on_cluster(
    dask_cluster: Cluster, certificates: dict[str, str], sample_class: Path, out: Path, **popen: object
) -> subprocess.Popen:
    """minigrad-class grading the sample class on the cluster, started and left running."""
    command = [*CLASS_COMMAND, str(sample_class), "--out", str(out), "--seed", "5", "--scheduler", dask_cluster.address]
    command += [arg for pair in certificates.items() for arg in pair]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def students_on_w1(dask_cluster: Cluster, out: Path) -> set[str]:
    """The students worker w1 is grading, once a few grades are in (so the class is well under
    way) and w1 has a grading running."""
    students: set[str] = set()

    def under_way() -> bool:  # the students seen in the same look that saw them running
        students.clear()
        students.update(gradings_under(dask_cluster.folders["w1"]).values())
        return len(list(out.glob("*/grading.json"))) >= 3 and bool(students)

    wait_until(under_way, 300, "a grading on w1")
    return students


def test_the_cluster_gives_the_local_grades(
    dask_cluster: Cluster,
    certificates: dict[str, str],
    sample_class: Path,
    local_grades: list[dict[str, str]],
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    run = grade_class(
        sample_class,
        out,
        "--seed",
        "5",
        "--scheduler",
        dask_cluster.address,
        *(arg for pair in certificates.items() for arg in pair),
    )
    assert f"graded now: {len(STUDENTS)}" in run.stdout
    assert without(read_csv(out / "grades.csv"), "graded_at") == without(local_grades, "graded_at")
    assert read_csv(out / "errors.csv") == []
    for name in dask_cluster.folders:  # each worker graded some of the class from its own folder
        assert list(dask_cluster.folders[name].glob("dask-scratch-space/worker-*/minigrad-reference-cache/*.json"))


def start_and_kill_w1(
    dask_cluster: Cluster, certificates: dict[str, str], sample_class: Path, out: Path
) -> tuple[subprocess.Popen, set[str], float]:
    """Grade the sample class on the cluster and kill worker w1 (SIGKILL, by its pid) while it
    grades, once a few grades are in; the students it was grading, and when it was killed."""
    process = class_on_cluster(dask_cluster, certificates, sample_class, out)
    students = students_on_w1(dask_cluster, out)
    dask_cluster.workers["w1"].kill()
    killed_at = time.monotonic()
    wait_until(lambda: not gradings_under(dask_cluster.folders["w1"]), 10, "w1's gradings to stop")
    return process, students, killed_at


def test_a_killed_worker_s_gradings_finish_on_the_other(
    dask_cluster: Cluster,
    certificates: dict[str, str],
    sample_class: Path,
    local_grades: list[dict[str, str]],
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    process, students, killed_at = start_and_kill_w1(dask_cluster, certificates, sample_class, out)
    took = wait_until(lambda: all((out / s / "grading.json").exists() for s in students), 120, "w1's students")
    print(f"w1 killed while grading {sorted(students)}: graded on w2 {took:.1f} s later")
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-3000:]
    assert without(read_csv(out / "grades.csv"), "graded_at") == without(local_grades, "graded_at")
    assert read_csv(out / "errors.csv") == []
    assert leftover_processes() == []


@pytest.mark.parametrize("dask_cluster", [{"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}], indirect=True)
def test_a_grading_that_kills_its_workers_is_an_error_and_the_batch_goes_on(
    dask_cluster: Cluster,
    certificates: dict[str, str],
    sample_class: Path,
    local_grades: list[dict[str, str]],
    tmp_path: Path,
) -> None:
    """With no failure allowed, the task w1 was running when it died ends with Dask's
    KilledWorker: that student is in errors.csv (with the tasks Dask had already sent to w1, which
    the same death fails: at most the class command's window of 4 tasks less w2's one), and
    everyone else is graded as locally."""
    out = tmp_path / "out"
    process, students, _ = start_and_kill_w1(dask_cluster, certificates, sample_class, out)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 1, stderr[-3000:]  # students without a grade: never a quiet success
    assert stderr.strip().splitlines()[-1].startswith("the grader itself failed, not the code: ")
    errors = read_csv(out / "errors.csv")
    assert students <= {row["student"] for row in errors} and len(errors) <= 3
    assert all(row["problem"].startswith("the grading failed: KilledWorker: ") for row in errors), errors
    failed = {row["student"] for row in errors}
    graded = [row for row in without(read_csv(out / "grades.csv"), "graded_at") if row["student"] not in failed]
    assert graded == [row for row in without(local_grades, "graded_at") if row["student"] not in failed]
    assert leftover_processes() == []


@pytest.mark.parametrize("dask_cluster", [{"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "5s"}], indirect=True)
def test_a_hung_worker_is_dropped_after_worker_ttl(
    dask_cluster: Cluster,
    certificates: dict[str, str],
    sample_class: Path,
    local_grades: list[dict[str, str]],
    tmp_path: Path,
) -> None:
    """w1 frozen (SIGSTOP) mid-grading stops answering the scheduler's heartbeats; after the
    scheduler's worker-ttl (5 s here) it is dropped and its gradings are rerun on w2."""
    out, w1 = tmp_path / "out", dask_cluster.folders["w1"]
    process = class_on_cluster(dask_cluster, certificates, sample_class, out)
    students = students_on_w1(dask_cluster, out)
    dask_cluster.workers["w1"].send_signal(signal.SIGSTOP)
    try:
        took = wait_until(lambda: all((out / s / "grading.json").exists() for s in students), 120, "w1's students")
        print(f"w1 frozen while grading {sorted(students)}: graded on w2 {took:.1f} s later")
        stdout, stderr = process.communicate(timeout=600)
    finally:
        dask_cluster.workers["w1"].kill()
    assert process.returncode == 0, stderr[-3000:]
    assert without(read_csv(out / "grades.csv"), "graded_at") == without(local_grades, "graded_at")
    wait_until(lambda: not gradings_under(w1), 30, "the frozen worker's gradings to end")


def test_ctrl_c_stops_every_grading_on_every_worker(
    dask_cluster: Cluster,
    certificates: dict[str, str],
    sample_class: Path,
    local_grades: list[dict[str, str]],
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    process = class_on_cluster(dask_cluster, certificates, sample_class, out, preexec_fn=ctrl_c_reaches_it)
    running = lambda: [pid for folder in dask_cluster.folders.values() for pid in gradings_under(folder)]  # noqa: E731
    wait_until(lambda: len(list(out.glob("*/grading.json"))) >= 2 and len(running()) == 2, 300, "two gradings")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    wait_until(lambda: not running(), 10, "every grading on the workers to stop")
    assert leftover_processes() == []
    finished = {
        row["student"]: row for row in without(read_csv(out / "grades.csv"), "graded_at") if row["status"] == "graded"
    }
    assert 2 <= len(finished) < len(STUDENTS)
    expected = {row["student"]: row for row in without(local_grades, "graded_at")}
    assert finished == {student: expected[student] for student in finished}


def test_a_worker_with_another_kit_refuses_the_job(tmp_path: Path) -> None:
    packed = packing.pack(materialize(EXAMPLES / "ada-correct.json", tmp_path / "ada"))
    job = jobs.Job("ada", packed.archive, packed.digest, ("--seed", "0"), "0" * 64, str(tmp_path / "cache"))
    graded = jobs.grade(job)
    assert graded.results is None
    assert graded.problem == (
        f"kit version mismatch: this worker runs {kit_version.digest()[:12]}, the class command 000000000000; "
        "install the same kit on both"
    )


@pytest.mark.parametrize(
    "address",
    ["tcp://127.0.0.1:8786", "tcp://localhost:8786", "127.0.0.1:8786", "tcp://10.0.0.7:8786", "ws://10.0.0.7:8786"],
)
def test_a_scheduler_without_tls_is_refused(address: str, certificates: dict[str, str]) -> None:
    """Loopback too: a user-level child on a machine that cannot give it a network of its own
    shares the loopback, and a plain-TCP scheduler there runs what it is sent, as root."""
    rest = address.rpartition("://")[2]
    with pytest.raises(SystemExit) as refused:
        cluster.security(address, *certificates.values())
    assert str(refused.value) == (
        f"{address}: a scheduler must be reached over TLS with certificates: tls://{rest} with --tls-ca-file, "
        "--tls-cert and --tls-key, or Dask's distributed.comm.tls settings. Workers run gradings as root: whoever "
        "reaches an open scheduler (a sandboxed child on its loopback too) runs code as root on them"
    )


def test_tls_without_certificates_is_refused() -> None:
    import dask

    unset = {"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}  # nor Dask's settings
    with dask.config.set(unset), pytest.raises(SystemExit) as refused:
        cluster.security("tls://127.0.0.1:8786", None, None, None)
    assert str(refused.value).startswith("tls://127.0.0.1:8786: TLS needs the cluster's certificates: --tls-ca-file")


def test_the_local_pool_never_imports_dask(tmp_path: Path) -> None:
    materialize(EXAMPLES / "nia-quiz-wrong.json", tmp_path / "class" / "nia")
    argv = [str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--parts", "checkpoint"]
    probe = (
        f"import sys; from graders.class_grading import cli; status = cli.main({argv!r}); "
        "print(status, 'distributed' in sys.modules, 'dask' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"},
    )
    assert run.stdout.strip().splitlines()[-1] == "0 False False", run.stderr[-2000:]


def test_an_unreachable_scheduler_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, certificates: dict[str, str]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "2s")
    with pytest.raises(SystemExit, match=f"cannot reach the Dask scheduler at tls://127.0.0.1:{port} within 2s"):
        cluster.connect(f"tls://127.0.0.1:{port}", *certificates.values())
