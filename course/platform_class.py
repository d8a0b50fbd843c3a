"""One class, delivered as each platform delivers it: Canvas, Gradescope, Moodle and nbgrader.

Every student hands in the same files on every platform (files one by one, a zip, a tar with
nested folders, loose files beside a zip of the rest, a file uploaded twice, a group, two
students with one name, a name with `_`, late and on-time ones); each platform then names,
packs and times them by its own rules, read from its source or documentation:

    Canvas      "Download Submissions": `{sortable name}[_LATE]_{user id}_{attachment id}_{file}`,
                the name lower-cased with every non-word character removed, only the latest
                submission (canvas-lms lib/content_zipper.rb); a file uploaded again is renamed
                `engine-1.py` (Attachment.make_unique_filename); the gradebook export as roster
                (lib/gradebook_exporter.rb); hand-in times from the API's Submission objects
                (canvas.instructure.com/doc/api/submissions.html)
    Gradescope  "Export Submissions": `assignment_{id}_export/submission_metadata.yml` (Ruby
                symbol keys, `:submitters:` with `:name:`, `:sid:`, `:email:`, `:created_at:`) and
                `submission_{id}/` with the files; one submission for a group
    Moodle      "Download all submissions" in folders: `{full name}_{participant id}_
                assignsubmission_file/{file}`, `_` in names made spaces (mod/assign/classes/
                downloader.php); the grading worksheet with `Identifier` "Participant {id}" and
                `Last modified (submission)` (mod/assign/gradingtable.php, userdate's default
                "%A, %d %B %Y, %I:%M %p")
    nbgrader    `submitted/{student id}/{assignment}/` with `timestamp.txt` as nbgrader's
                exchange writes it ("%Y-%m-%d %H:%M:%S.%f %Z", nbgrader/exchange/abc/exchange.py)

`build(folder, count)` writes the four deliveries and the rosters; the grades of the four must
be the same for every student (examples/platform_class.py runs and compares them).
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from graders.course_facts.kit import ROOT

from .submissions import materialize

EXAMPLES = ROOT / "examples" / "submissions"
SPECS = ("ada-correct.json", "nia-quiz-wrong.json", "ben-partial.json", "cleo-buggy.json", "fay-tanh-derivative.json")
SHAPES = ("loose", "zipped", "nested", "combined", "resubmitted")
DUE = datetime.datetime(2026, 11, 20, 17, 0, tzinfo=datetime.timezone.utc)
ASSIGNMENT = "minigrad"
FIRST = ("Jane", "Omar", "Li", "Sofia", "Kwame", "Ana", "Yuki", "Ravi", "Chloé", "Mateo", "Ines", "Tariq")
LAST = ("Smith", "Okafor", "Chen", "García", "Mensah", "Kowalski", "Tanaka", "Iyer", "Dubois", "O_Brien")


@dataclass(frozen=True)
class Student:
    """One student, as every platform knows them."""

    n: int
    first: str
    last: str
    spec: str  # the sample submission their files are
    shape: str  # how they handed the files in
    hours_late: float  # their hand-in time after the due (negative: before)
    partner_of: int | None = None  # a Gradescope group member: the submitter's number

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def sortable(self) -> str:
        return f"{self.last}, {self.first}"

    @property
    def email(self) -> str:
        return f"s{self.n:03d}@example.edu"

    @property
    def sid(self) -> str:
        return f"s{self.n:03d}"

    @property
    def canvas_id(self) -> str:
        return str(1000 + self.n)

    @property
    def participant(self) -> str:
        return str(7000 + self.n)

    @property
    def handed_in(self) -> datetime.datetime:
        return DUE + datetime.timedelta(hours=self.hours_late)


def students(count: int) -> list[Student]:
    """A class of `count`: shapes and specs in turn, every seventh late, two pairs sharing a
    name, and every tenth a Gradescope group partner of the student before (with the same
    files and the same hand-in time on every platform)."""
    made = []
    for n in range(1, count + 1):
        first, last = FIRST[n % len(FIRST)], LAST[(n * 7) % len(LAST)]
        if n in (4, 5) or n in (count - 1, count):
            first, last = "Jane", "Smith"  # two pairs of students with one name
        late = (n % 7 == 0) * (n % 3 * 20 + 5.5) - 30 * (n % 7 != 0)
        partner = n - 1 if n % 10 == 0 else None
        late = made[-1].hours_late if partner else late  # a group hands in once, at the submitter's time
        made.append(Student(n, first, last, SPECS[n % len(SPECS)], SHAPES[n % len(SHAPES)], late, partner))
    return made


def files_of(student: Student, work: Path) -> dict[str, bytes]:
    """The package's files of the student's spec (for a group partner, the submitter's)."""
    built = work / f"spec-{student.spec}"
    if not built.exists():
        materialize(EXAMPLES / student.spec, built)
    return {path.name: path.read_bytes() for path in sorted((built / "minigrad").glob("*.py"))}


def uploads(student: Student, files: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """What the student uploads, in order: (file name, bytes)."""
    if student.shape in ("loose", "resubmitted"):
        return sorted(files.items())
    if student.shape == "zipped":
        return [("hw1.zip", _zip({f"minigrad/{name}": data for name, data in files.items()}))]
    if student.shape == "nested":
        return [("hw1.tar.gz", _tar({f"hw1/src/minigrad/{name}": data for name, data in files.items()}))]
    rest = {f"minigrad/{name}": data for name, data in files.items() if name != "engine.py"}
    return [("engine.py", files["engine.py"]), ("rest.zip", _zip(rest))]


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in sorted(members.items()):
            bundle.writestr(name, data)
    return buffer.getvalue()


def _tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_763_000_000
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _handed(student: Student, everyone: dict[int, Student], work: Path) -> list[tuple[str, bytes]]:
    source = everyone[student.partner_of] if student.partner_of else student
    return uploads(student, files_of(source, work))


def canvas(folder: Path, class_: list[Student], work: Path) -> None:
    """Canvas's download zip, its gradebook export (the roster) and the API's times."""
    everyone, attachment = {s.n: s for s in class_}, 50_000
    with zipfile.ZipFile(folder / "submissions.zip", "w") as bundle:
        for student in class_:
            name = re.sub(r"[^\w]", "", re.sub(r"_(\d+)_", r"\1", student.sortable.lower()))
            prefix = "_".join(filter(None, (name, "LATE" if student.hours_late > 0 else "", student.canvas_id)))
            for file, data in _handed(student, everyone, work):
                attachment += 1
                again = student.shape == "resubmitted" and file == "checkpoint.py"
                shown = "checkpoint-1.py" if again else file  # the first upload is in the student's files already
                bundle.writestr(f"{prefix}_{attachment}_{shown}", data)
    with (folder / "gradebook.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{ASSIGNMENT} (4242)"])
        writer.writerow(["    Points Possible", "", "", "", "", "122.00"])
        for student in class_:
            writer.writerow([student.sortable, student.canvas_id, student.sid.upper(), student.sid, "Section 1", ""])
    times = [
        {
            "user_id": int(s.canvas_id),
            "submitted_at": s.handed_in.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "late": s.hours_late > 0,
        }
        for s in class_
    ]
    (folder / "submissions.json").write_text(json.dumps(times, indent=1) + "\n")


def gradescope(folder: Path, class_: list[Student], work: Path) -> None:
    """Gradescope's export as downloaded (a zip of `assignment_4242_export/`) and its roster."""
    everyone = {s.n: s for s in class_}
    partners = {s.partner_of: s for s in class_ if s.partner_of}
    top, metadata = "assignment_4242_export", []
    with zipfile.ZipFile(folder / "assignment_4242_export.zip", "w") as bundle:
        for student in class_:
            if student.partner_of:
                continue  # the group's submission is the submitter's
            number = 900_000 + student.n
            for file, data in _handed(student, everyone, work):
                bundle.writestr(f"{top}/submission_{number}/{file}", data)
            members = [student, *([partners[student.n]] if student.n in partners else [])]
            stamp = student.handed_in.astimezone(datetime.timezone(datetime.timedelta(hours=-8)))
            metadata.append(f"submission_{number}:\n  :submitters:\n")
            metadata += [f"  - :name: {m.name}\n    :sid: '{m.sid}'\n    :email: {m.email}\n" for m in members]
            metadata.append(f"  :created_at: {stamp.strftime('%Y-%m-%d %H:%M:%S.%f')}000 -08:00\n  :score: 0.0\n")
        bundle.writestr(f"{top}/submission_metadata.yml", "".join(metadata))
    with (folder / "roster.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["First Name", "Last Name", "SID", "Email", "Role", "Sections"])
        writer.writerows([s.first, s.last, s.sid, s.email, "Student", ""] for s in class_)


def moodle(folder: Path, class_: list[Student], work: Path) -> None:
    """Moodle's download (in folders, Moodle 4.1+) and its grading worksheet (times in UTC)."""
    everyone = {s.n: s for s in class_}
    with zipfile.ZipFile(folder / "CS101-minigrad-42.zip", "w") as bundle:
        for student in class_:
            prefix = f"{student.name.replace('_', ' ')}_{student.participant}_assignsubmission_file"
            for file, data in _handed(student, everyone, work):
                bundle.writestr(f"{prefix}/{file}", data)
    with (folder / "worksheet.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(
            ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed"]
            + ["Last modified (submission)", "Last modified (grade)", "Feedback comments"]
        )
        for s in class_:
            when = s.handed_in.strftime("%A, %d %B %Y, %I:%M %p")
            row = [f"Participant {s.participant}", s.name, s.email, "Submitted for grading", "", "122.00", "Yes"]
            writer.writerow([*row, when, "-", ""])


def nbgrader(folder: Path, class_: list[Student], work: Path) -> None:
    """nbgrader's `submitted/` with timestamp.txt, and the student CSV `nbgrader db student
    import` reads (id, first_name, last_name, email)."""
    everyone = {s.n: s for s in class_}
    for student in class_:
        place = folder / "submitted" / student.sid / ASSIGNMENT
        place.mkdir(parents=True)
        for file, data in _handed(student, everyone, work):
            (place / file).write_bytes(data)
        (place / "timestamp.txt").write_text(student.handed_in.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    with (folder / "students.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["id", "first_name", "last_name", "email"])
        writer.writerows([s.sid, s.first, s.last, s.email] for s in class_)


PLATFORMS = {"canvas": canvas, "gradescope": gradescope, "moodle": moodle, "nbgrader": nbgrader}


def build(folder: Path, count: int) -> list[Student]:
    """The class of `count` as the four platforms deliver it, under `folder/{platform}/`."""
    class_ = students(count)
    for platform, deliver in PLATFORMS.items():
        (folder / platform).mkdir(parents=True)
        deliver(folder / platform, class_, folder / ".specs")
    return class_
