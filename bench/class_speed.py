"""How fast a class is graded: N generated submissions (a mix like the sample class, with 2
endless loops per 100 students), through `minigrad-class` with `--jobs 1` and `--jobs 2`, on a
2-worker Dask cluster on loopback (`--scheduler`), side by side in one run; and the same class
through the real `nbgrader autograde` (bench/nbgrader_class.py). Each figure is the median of
several runs (bench/repeat.py), with its spread and the CPU time of the processes it ran.

    python bench/class_speed.py [--students N]

Targets on a 2-core machine: `--jobs 2` at least 1.8x faster than `--jobs 1`;
100 students in under 60 s; at least 5x faster than nbgrader autograde; the cluster within
1.15x of `--jobs 2`, with under 20 ms of scheduling overhead per grading. A shared or loaded
machine makes every figure slower and the ratios smaller: the bench says so when it starts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from repeat import RUNS, Figure, measure, warn_if_busy

from course import loopback_tls
from course.submissions import ROOT, materialize

EXAMPLES = ROOT / "examples" / "submissions"
ENDLESS = "jay-endless-loop"
ENDLESS_PER_100 = 2
TARGET_RATIO, TARGET_SECONDS, TARGET_VS_NBGRADER = 1.8, 60.0, 5.0
TARGET_CLUSTER_RATIO, TARGET_OVERHEAD = 1.15, 0.020
CLUSTER_WORKERS = 2


def generate(count: int, folder: Path) -> list[Path]:
    """`count` submissions: the sample class's students in turn, except that exactly
    2 in 100 (at least one) are the endless loop."""
    specs = sorted(spec for spec in EXAMPLES.glob("*.json") if spec.stem != ENDLESS)
    endless = max(1, round(count * ENDLESS_PER_100 / 100))
    every = count // endless
    made = []
    for i in range(count):
        spec = (
            EXAMPLES / f"{ENDLESS}.json" if i % every == every // 2 and i // every < endless else specs[i % len(specs)]
        )
        made.append(materialize(spec, folder / f"student{i:03d}-{spec.stem}"))
    return made


def seconds_to_grade(folder: Path, out: Path, *options: str) -> float:
    """One fresh grading of the class (its own --out: no grade is reused, no reference cached)."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "graders.class_grading.cli", str(folder), "--out", str(out), "--seed", "0", *options],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def cluster_seconds(folder: Path, out: Path) -> tuple[float, float]:
    """The class on Dask's own LocalCluster (a scheduler and 2 single-thread worker processes),
    and the scheduling overhead per grading: on each worker, the mean gap between one grading's
    end and the next one's start, from the scheduler's own task stream. The workers run without
    Dask's profiler, as docs/large-course.md starts them."""
    import dask
    from distributed import Client, LocalCluster, get_task_stream
    from distributed.security import Security

    tls_folder = Path(tempfile.mkdtemp(prefix="minigrad-bench-tls-"))
    tls = loopback_tls.certificates(tls_folder)
    cert, key = tls["--tls-cert"], tls["--tls-key"]
    files = {
        f"tls_{who}_{part}": path
        for who in ("scheduler", "worker", "client")
        for part, path in (("cert", cert), ("key", key))
    }
    security = Security(tls_ca_file=tls["--tls-ca-file"], require_encryption=True, **files)
    workers = {"n_workers": CLUSTER_WORKERS, "threads_per_worker": 1, "dashboard_address": None}
    with (
        dask.config.set({"distributed.worker.profile.enabled": False}),
        LocalCluster(host="127.0.0.1", protocol="tls", security=security, **workers) as cluster,
        Client(cluster.scheduler_address, security=security) as client,
        get_task_stream(client) as stream,
    ):
        options = [arg for pair in tls.items() for arg in pair]
        seconds = seconds_to_grade(folder, out, "--scheduler", cluster.scheduler_address, *options)
    shutil.rmtree(tls_folder)
    runs: dict[str, list[tuple[float, float]]] = {}
    for task in stream.data:
        for span in task["startstops"]:
            if span["action"] == "compute":
                runs.setdefault(task["worker"], []).append((span["start"], span["stop"]))
    gaps = [later[0] - earlier[1] for spans in map(sorted, runs.values()) for earlier, later in zip(spans, spans[1:])]
    return seconds, sum(gaps) / max(1, len(gaps))


def nbgrader_seconds(submissions: list[Path]) -> float:
    """Seconds for the same class through the real `nbgrader autograde` (bench/nbgrader_class.py)."""
    import nbgrader_class

    return nbgrader_class.seconds_per_submission({folder.name: folder for folder in submissions}) * len(submissions)


def timed(seconds: list[float]) -> Figure:
    """A figure from runs that time themselves (part of each run, such as building nbgrader's
    course or starting a cluster, is not the grading); their CPU time is not known apart."""
    return Figure(seconds, [])


def ceiling(one_at_a_time: Figure) -> str:
    """How much faster any number of jobs can be than `--jobs 1` on this machine. A grading
    already runs its child beside its own judging, and the class command writes one student's
    records while the next is graded, so `--jobs 1` keeps more than one core busy; the same
    work on all the cores takes at least (busy cores of `--jobs 1` / cores) of its time."""
    cores = os.cpu_count() or 1
    busy = one_at_a_time.cores
    fastest = cores / busy
    return f"--jobs 1 keeps {busy:.2f} cores busy: on {cores} cores no --jobs does its work over {fastest:.2f}x faster"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--runs", type=int, default=RUNS, help="runs of each figure (the median is shown)")
    args = parser.parse_args()
    warn_if_busy()
    with tempfile.TemporaryDirectory(prefix="class-bench-") as tmp:
        folder = Path(tmp) / "class"
        submissions = generate(args.students, folder)
        rows = {
            f"minigrad-class --jobs {jobs}": measure(
                lambda jobs=jobs: seconds_to_grade(folder, Path(tmp) / "out", "--jobs", str(jobs)), args.runs
            )
            for jobs in (1, 2)
        }
        clusters = [cluster_seconds(folder, Path(tmp) / "cluster") for _ in range(args.runs)]
        rows["minigrad-class, 2-worker Dask"] = cluster = timed([seconds for seconds, _ in clusters])
        rows["nbgrader autograde"] = nbgrader = timed([nbgrader_seconds(submissions) for _ in range(args.runs)])
    overhead = statistics.median(gap for _, gap in clusters)
    n = args.students
    print(f"{n} students ({max(1, round(n * ENDLESS_PER_100 / 100))} endless loops), median of {args.runs} runs")
    print(f"{'how':<30}{'seconds (lowest-highest)':>34}{'per student':>14}")
    for how, figure in rows.items():
        print(f"{how:<30}{str(figure):>34}{figure.median / n:>13.2f}s")
    one, two = rows["minigrad-class --jobs 1"].median, rows["minigrad-class --jobs 2"].median
    print(f"\n--jobs 2 vs --jobs 1: {one / two:.2f}x (target {TARGET_RATIO}x)")
    print(f"  {ceiling(rows['minigrad-class --jobs 1'])}")
    print(f"whole class with --jobs 2: {two:.1f} s (target under {TARGET_SECONDS:.0f} s for 100)")
    print(f"vs nbgrader autograde: {nbgrader.median / two:.2f}x faster (target {TARGET_VS_NBGRADER}x)")
    print(
        f"2-worker Dask cluster vs --jobs 2: {cluster.median / two:.2f}x the time (target within "
        f"{TARGET_CLUSTER_RATIO}x); scheduling overhead {overhead * 1000:.0f} ms per grading "
        f"(target under {TARGET_OVERHEAD * 1000:.0f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
