"""Build one class as Canvas, Gradescope, Moodle and nbgrader each deliver it, grade it through
each, and compare: identical files must give identical grades whatever the platform.

    python examples/platform_class.py build FOLDER [--students 86]
    python examples/platform_class.py grade FOLDER [--parts checkpoint] [--jobs 2]
    python examples/platform_class.py compare FOLDER

`build` writes FOLDER/{canvas,gradescope,moodle,nbgrader}/ (course/platform_class.py says what
each platform's delivery is and where its rules come from); `grade` runs minigrad-class on each
with that platform's roster and hand-in times, a due and a late policy, into FOLDER/out-{platform}/
(its output in FOLDER/{platform}.log);
`compare` lines the four grades.csv up by student (each platform's key: Canvas user id,
Gradescope SID, Moodle participant id, nbgrader id) and prints every row that differs between
platforms, then each student's lateness. It lives in examples/, not bench/: it measures no
speed, it shows a course's round trip on every platform.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import platform_class  # noqa: E402

DUE = platform_class.DUE.isoformat()
POLICY = ("--due", DUE, "--late-policy", "per-day:10", "--late-cap", "50")
SOURCES = {  # the delivery, and the platform's roster and times beside it
    "canvas": ("submissions.zip", "--roster", "gradebook.csv", "--times", "submissions.json"),
    "gradescope": ("assignment_4242_export.zip", "--roster", "roster.csv"),
    "moodle": ("CS101-minigrad-42.zip", "--roster", "worksheet.csv", "--times", "worksheet.csv"),
    "nbgrader": (".", "--roster", "students.csv"),
}
COMPARED = ("status", "total", "max_score", "bonus_points", "late", "hours_late", "penalty", "total_after_late")


def grade(folder: Path, parts: str, jobs: int) -> int:
    worst = 0
    for platform, (delivery, *flags) in SOURCES.items():
        here = folder / platform
        options = [flag if flag.startswith("--") else str(here / flag) for flag in flags]
        command = [sys.executable, "-m", "graders.class_grading.cli", str(here / delivery), "--out"]
        command += [str(folder / f"out-{platform}"), "--parts", parts, "--jobs", str(jobs), *POLICY, *options]
        print("$", " ".join(command), flush=True)
        with (folder / f"{platform}.log").open("w") as log:  # its summary and progress, beside the grades
            status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode
        print(f"  exit {status}; the run's output: {folder / f'{platform}.log'}", flush=True)
        worst = max(worst, status)
    return worst


def person(platform: str, row: dict[str, str]) -> str:
    """The student's number, from the platform's own key."""
    if platform == "canvas":
        return str(int(row["canvas_user_id"]) - 1000)
    if platform == "moodle":
        return str(int(row["moodle_participant_id"]) - 7000)
    key = row.get("sid") if platform == "gradescope" else row.get("nbgrader_id")
    return str(int(key.lstrip("s")))


def compare(folder: Path) -> int:
    tables = {}
    for platform in SOURCES:
        with (folder / f"out-{platform}" / "grades.csv").open(newline="", encoding="utf-8") as file:
            tables[platform] = {person(platform, row): row for row in csv.DictReader(file)}
    people = sorted(set().union(*tables.values()), key=int)
    differ = 0
    for n in people:
        seen = {p: tuple(t.get(n, {}).get(c, "(absent)") for c in COMPARED) for p, t in tables.items()}
        if len(set(seen.values())) > 1:
            differ += 1
            print(f"student {n} differs:", "; ".join(f"{p}: {dict(zip(COMPARED, v))}" for p, v in seen.items()))
    print(f"{len(people)} students, {differ} rows differ between Canvas, Gradescope, Moodle and nbgrader")
    print("\nlateness (the same on every platform unless said above):")
    for n in people:
        row = tables["gradescope"].get(n, {})
        if row.get("late"):
            ids = ", ".join(f"{p}: {t[n]['student']}" for p, t in tables.items() if n in t)
            print(f"  student {n} ({ids}): {row['hours_late']} h late, penalty {row['penalty']},", end=" ")
            print(f"total {row['total']} -> {row['total_after_late']}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("build", "grade", "compare"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--students", type=int, default=86)
    parser.add_argument("--parts", default="checkpoint,value,backward,mlp,tensor")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.step == "build":
        class_ = platform_class.build(args.folder, args.students)
        print(f"{len(class_)} students under {args.folder}: {', '.join(platform_class.PLATFORMS)}")
        return 0
    if args.step == "grade":
        return grade(args.folder, args.parts, args.jobs)
    return compare(args.folder)


if __name__ == "__main__":
    sys.exit(main())
