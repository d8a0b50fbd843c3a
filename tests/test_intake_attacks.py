"""minigrad-class against hostile and awkward uploads: each case is a real upload (zips and
tars built byte by byte), graded by the real command in a fresh process.

The class command runs as root, so what it unpacks must land only in its own staging folder
under --out, within budgets checked before reading, and one student's bad upload must cost
that student only: every student has a row, honest neighbours keep their exact scores, and
the gradebook says what grades.csv says. Grading is the quiz only (`--parts checkpoint`),
which keeps the runs fast while the totals stay exact: Ada's answers score 12, Nia's 10.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from course.submissions import materialize
from graders.class_grading import dispatch, jobs
from graders.uploads import archives, intake, layouts, packing

from grading import ROOT, grader_tmp, needs_isolation
from nbgrader_export import nbgrader_export

EXAMPLES = ROOT / "examples" / "submissions"
ADA, NIA, JAY = EXAMPLES / "ada-correct.json", EXAMPLES / "nia-quiz-wrong.json", EXAMPLES / "jay-endless-loop.json"
MiB = 1024 * 1024
REFUSED = "not graded: upload refused (see errors.csv)"
WINDOWS = "a Windows path (backslash or drive letter)"


# --- building uploads ---------------------------------------------------------------------------


def package(spec: Path, tmp_path: Path) -> dict[str, bytes]:
    """The spec's minigrad/ files by name."""
    built = materialize(spec, tmp_path / f".build-{spec.stem}-{time.monotonic_ns()}")
    files = {path.name: path.read_bytes() for path in sorted((built / "minigrad").glob("*.py"))}
    shutil.rmtree(built)
    return files


def zip_bytes(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED, reverse: bool = False) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", method) as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)
        if reverse:
            bundle.filelist.reverse()  # the central directory lists the members back to front
    return data.getvalue()


def tar_bytes(members: dict[str, bytes], mode: str = "w:gz", links: dict[str, str] | None = None) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode=mode) as tar:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(content), 1_700_000_000
            tar.addfile(info, io.BytesIO(content))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return data.getvalue()


def under(folder: str, files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"{folder}/{name}": data for name, data in files.items()}


def encrypted_zip(files: dict[str, bytes]) -> bytes:
    """A zip whose members say they are password-protected (bit 0 of the flags, set in every
    local header and central directory entry: zipfile itself writes no encrypted zips)."""
    data = bytearray(zip_bytes(files))
    bundle = zipfile.ZipFile(io.BytesIO(bytes(data)))
    places = [info.header_offset + 6 for info in bundle.infolist()]
    entry = bundle.start_dir
    while data[entry : entry + 4] == b"PK\x01\x02":
        places.append(entry + 8)
        entry += (
            46
            + int.from_bytes(data[entry + 28 : entry + 30], "little")
            + int.from_bytes(data[entry + 30 : entry + 32], "little")
            + int.from_bytes(data[entry + 32 : entry + 34], "little")
        )
    for place in places:
        data[place] |= 0x1
    return bytes(data)


def corrupt_zip(files: dict[str, bytes]) -> bytes:
    """A zip whose deflate stream is damaged in the middle of its first member."""
    data = bytearray(zip_bytes(files))
    start = 30 + len(next(iter(files)).encode())  # after the first local header and its name
    for i in range(start + 20, start + 60):
        data[i] ^= 0x5A
    return bytes(data)


MARK = "\u00e9" * 4  # in a member's name: made bytes that are not UTF-8 by `badly_named`


def badly_named(data: bytes) -> bytes:
    """`data` (a zip) with the name holding MARK flagged UTF-8 but made 0xff bytes, not UTF-8."""
    assert data.count(MARK.encode()) == 2  # the local header and the central directory
    return data.replace(MARK.encode(), b"\xff" * 8)


def damaged(data: bytes, name: str) -> bytes:
    """`data` (a zip) with bytes of member `name` changed: its CRC no longer matches."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    start = info.header_offset + 30 + len(name) + len(info.extra) + info.compress_size // 2
    return data[:start] + bytes(b ^ 0x5A for b in data[start : start + 16]) + data[start + 16 :]


def nested(levels: int, files: dict[str, bytes]) -> bytes:
    """`files` in a zip in a zip ... `levels` deep."""
    data = zip_bytes(files)
    for level in range(levels - 1):
        data = zip_bytes({f"level{level}.zip": data})
    return data


BOMB = zip_bytes({"zeros.zip": bytes(30 * MiB)})  # 30 MiB of zeros, compressed a thousand to one
BOMB_RATIO = 30 * MiB // zipfile.ZipFile(io.BytesIO(BOMB)).getinfo("zeros.zip").compress_size


def zip_bomb() -> bytes:
    """A zip holding a zip bomb."""
    return zip_bytes({"hw1/bomb.zip": BOMB, "hw1/README.py": b"# hi\n"})


def seek_bomb() -> bytes:
    """20,000 members listed back to front: each read would seek back through the stream."""
    return zip_bytes({f"m/{i:05}.py": b"" for i in range(20_000)}, reverse=True)


def abyss(top: Path, depth: int, data: bytes) -> None:
    """`data` as engine.py `depth` folders down: deeper than os.walk (or Path.mkdir) recurses."""
    top.mkdir(parents=True)
    folder = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=folder)
        deeper = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = deeper
    with open(os.open("engine.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder), "wb") as file:
        file.write(data)
    os.close(folder)


def fill_in(top: Path, depth: int) -> None:
    """Remove what `abyss` made, bottom up without recursion: pytest removes its old temporary
    folders with a recursive `shutil.rmtree`, which a tree this deep stops with a RecursionError."""
    folders = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    for _ in range(depth):
        folders.append(os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folders[-1]))
    os.unlink("engine.py", dir_fd=folders[-1])
    os.close(folders.pop())
    while folders:
        os.rmdir("a", dir_fd=folders[-1])
        os.close(folders.pop())


# --- running the class command ------------------------------------------------------------------


def grade_class(submissions: Path, out: Path, *options: str) -> tuple[subprocess.CompletedProcess, int]:
    """minigrad-class in a fresh process under a wrapper that reports the peak memory (KiB) of
    the command and everything it started; its temporary folder must end up empty."""
    command = [sys.executable, "-m", "graders.class_grading.cli", str(submissions), "--out", str(out), *options]
    wrapper = (
        "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(code)"
    )
    with grader_tmp() as work:
        run = subprocess.run(
            [sys.executable, "-c", wrapper, *command],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "TMPDIR": str(work)},
        )
    assert run.returncode == 0, run.stderr[-3000:]
    peak = int(run.stderr.strip().splitlines()[-1])
    return run, peak


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    return {row["student"]: row for row in csv.DictReader(path.open(newline="", encoding="utf-8"))}


def check_outputs(out: Path, tmp_path: Path) -> tuple[dict, dict]:
    """grades.csv and errors.csv; the gradebook agrees with grades.csv, staging is gone, and
    no student text starts a formula or carries markup into a CSV."""
    rows, errors = read_csv(out / "grades.csv"), read_csv(out / "errors.csv")
    assert not [p for p in out.iterdir() if p.name.startswith(".staging")]
    exported = nbgrader_export(f"sqlite:///{out / 'gradebook.db'}", tmp_path)
    graded = {s: float(r["total_with_bonus"]) for s, r in rows.items() if r["status"].startswith("graded")}
    assert {s: float(r["raw_score"]) for s, r in exported.items() if s in graded} == graded  # before any late penalty
    for name in ("grades.csv", "errors.csv"):
        for row in csv.reader((out / name).open(newline="", encoding="utf-8")):
            assert not [cell for cell in row if cell[:1] in ("=", "+", "-", "@") or "<" in cell or "\x1b" in cell]
    return rows, errors


# --- an LMS download full of attacks, with honest students among them -------------------------


@needs_isolation
def test_an_lms_download_of_attacks_costs_only_the_attackers(tmp_path: Path) -> None:
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    slip = tmp_path.name + "-slip"  # what a zip slip would create: /tmp/{slip}/... or beside --out
    members = {
        # honest: Alice's files one by one, late, her checkpoint resubmitted (the first had Nia's answers)
        **{f"alice_LATE_101_9001_{name}": data for name, data in ada.items() if name != "checkpoint.py"},
        "alice_LATE_101_9001_checkpoint.py": nia["checkpoint.py"],
        "alice_LATE_101_9001_checkpoint-2.py": ada["checkpoint.py"],
        "alice_LATE_101_9001_checkpoint-1.py": nia["checkpoint.py"],
        "bob_102_9002_hw1.zip": zip_bytes(under("hw1/minigrad", nia)),
        "tia_103_9003_hw1.tar.gz": tar_bytes(under("hw1/minigrad", ada)),
        # two students with one name, told apart by their user ids
        "sam_104_9004_minigrad.zip": zip_bytes(under("minigrad", ada)),
        "sam_105_9005_minigrad.zip": zip_bytes(under("minigrad", nia)),
        # ids that would take an output's name or start a formula
        "gradebook.db_106_9006_minigrad.zip": zip_bytes(under("minigrad", ada)),
        "-2-3_107_9007_minigrad.zip": zip_bytes(under("minigrad", nia)),
        # attacks
        "mallory_201_9101_hw1.zip": zip_bytes(
            {**under("minigrad", ada), f"//tmp/{slip}/y.py": b"pwned\n", f"../../{slip}/z.py": b"pwned\n"}
        ),
        "bomber_202_9102_hw1.zip": zip_bomb(),
        "seeker_203_9103_hw1.zip": seek_bomb(),
        "locked_204_9104_hw1.zip": encrypted_zip(under("minigrad", ada)),
        "broken_205_9105_hw1.zip": corrupt_zip(under("minigrad", ada)),
        "badname_206_9106_hw1.zip": badly_named(zip_bytes({**under("minigrad", ada), f"minigrad/{MARK}.py": b""})),
        "deep_207_9107_hw1.zip": nested(5, under("minigrad", ada)),
        "linker_208_9108_hw1.tar": tar_bytes(under("minigrad", ada), "w", links={"minigrad/nn.py": "/etc/shadow"}),
        "abs_209_9109_hw1.tar.gz": tar_bytes({"/tmp/abs.py": b"pwned\n", **under("minigrad", ada)}),
        f"huge_{'9' * 4400}_9110_engine-{'1' * 4400}.py": b"x = 1\n",
        "crc_211_9112_hw1.zip": zip_bytes(under("minigrad", ada)),  # damaged in the download itself, below
    }
    archive = tmp_path / "download.zip"
    members[f"outer_210_9111_{MARK}.py"] = b"x = 1\n"
    archive.write_bytes(badly_named(damaged(zip_bytes(members), "crc_211_9112_hw1.zip")))
    out = tmp_path / "out"
    started = time.monotonic()
    run, peak = grade_class(archive, out, "--parts", "checkpoint", "--jobs", "2")
    assert peak < 512 * 1024, f"peak memory {peak} KiB"

    assert sorted(p.name for p in tmp_path.iterdir()) == ["download.zip", "out"]  # nothing beside --out
    rows, errors = check_outputs(out, tmp_path)
    totals = {s: float(r["total"]) for s, r in rows.items() if r["status"] == "graded"}
    assert totals == {
        "alice": 12.0,
        "bob": 10.0,
        "tia": 12.0,
        "sam-104": 12.0,
        "sam-105": 10.0,
        "gradebook-db": 12.0,
        "2-3": 10.0,
        "linker": 12.0,
        "huge": 0.0,
    }
    assert rows["alice"]["late"] == "late" and rows["alice"]["canvas_user_id"] == "101" and rows["bob"]["late"] == ""
    assert rows["tia"]["found_in"] == "hw1.tar.gz/hw1/minigrad"
    for older in ("checkpoint.py", "checkpoint-1.py"):
        assert f"alice_LATE_101_9001_{older}: resubmitted as alice_LATE_101_9001_checkpoint-2.py; superseded" in (
            run.stdout
        )
    refused = {s for s, r in rows.items() if r["status"] == REFUSED}
    assert refused == {"mallory", "bomber", "seeker", "locked", "broken", "badname", "deep", "abs", "outer", "crc"}
    problem = {s: errors[s]["problem"] for s in refused}
    assert problem["mallory"] == "upload refused: hw1.zip: a member has an absolute path: '//tmp/" + slip + "/y.py'"
    assert problem["bomber"] == f"upload refused: bomb.zip: zeros.zip: compressed {BOMB_RATIO} to 1 (a zip bomb?)"
    assert problem["seeker"] == "upload refused: hw1.zip: 20000 files, over the 2000 allowed"
    assert problem["locked"] == (
        "upload refused: hw1.zip: minigrad/__init__.py is password-protected; upload it without a password"
    )
    assert problem["broken"].startswith(
        "upload refused: hw1.zip: minigrad/__init__.py: cannot be read (error: Error -3 "
    )
    assert problem["crc"].startswith("upload refused: hw1.zip: cannot be read (")
    assert problem["badname"].startswith("upload refused: hw1.zip: a member's name is marked UTF-8 but is not: ")
    assert (
        problem["outer"]
        == "upload refused: outer_210_9111_\xa0\xa0\xa0\xa0\xa0\xa0\xa0\xa0.py: a file name marked UTF-8 that is not"
    )
    assert problem["deep"] == "upload refused: level1.zip: archives nested more than 3 deep"
    assert problem["abs"] == "upload refused: hw1.tar.gz: a member has an absolute path: '/tmp/abs.py'"
    assert rows["linker"]["status"] == "graded" and "minigrad/nn.py: not a regular file" in run.stdout
    assert rows["huge"]["found_in"] == "." and rows["huge"]["canvas_user_id"] == "9" * 4400
    for student in refused:
        assert f"- warning: `{student}: upload refused" in run.stdout.replace("\\", "")  # summary.md says it too
    assert not Path("/tmp", slip).exists() and not (tmp_path / slip).exists() and not Path("/tmp/abs.py").exists()
    assert time.monotonic() - started < 300


# --- archives.py on its own: each bomb refused fast ---------------------------------------------


def claim(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> bytes:
    """A gzipped tar whose one header claims `size` bytes, followed by zeros (64 MiB at most):
    what a reader does with the claim, before reading, is what is tested."""
    header = tarfile.TarInfo(name)
    header.type, header.size = kind, size
    stream = io.BytesIO()
    with gzip.GzipFile(fileobj=stream, mode="wb") as packed:
        packed.write(header.tobuf(tarfile.USTAR_FORMAT))
        for _ in range(min(size, 64 * MiB) // (2 * MiB)):
            packed.write(bytes(2 * MiB))
    return stream.getvalue()


BOMBS = {  # name: (how to build it, why it is refused); built when its test runs
    "bomb.zip": (zip_bomb, f"bomb.zip: zeros.zip: compressed {BOMB_RATIO} to 1 (a zip bomb?)"),
    "seek.zip": (seek_bomb, "seek.zip: 20000 files, over the 2000 allowed"),
    "deep.zip": (lambda: nested(5, {"a.py": b""}), "level1.zip: archives nested more than 3 deep"),
    "big.tar.gz": (lambda: claim("zeros.bin", 60 * MiB), "big.tar.gz: compressed over 100 to 1 (a tar bomb?)"),
    "huge.tar.gz": (
        lambda: claim("zeros.bin", 200 * MiB),
        "huge.tar.gz: zeros.bin: 209715200 bytes, over what is left of the budget",
    ),
    # a pax header 1 GiB long: tarfile reads a header whole, into memory; refused by its claim
    "pax.tar.gz": (
        lambda: claim("././@PaxHeader", 1 << 30, tarfile.XHDTYPE),
        "pax.tar.gz: a pax header of 1073741824 bytes, over the 8 KiB allowed; "
        "upload a zip, or a tar made without extended attributes",
    ),
    "many.tar": (
        lambda: tar_bytes({f"{i}.txt": b"" for i in range(3000)}, "w"),
        "many.tar: more than 2000 files in the archive (at 2000.txt)",
    ),
    "slip.zip": (
        lambda: zip_bytes({"a\\..\\..\\b.py": b""}),
        f"slip.zip: a member has {WINDOWS}: 'a\\\\..\\\\..\\\\b.py'",
    ),
    "drive.zip": (lambda: zip_bytes({"C:/x.py": b""}), f"drive.zip: a member has {WINDOWS}: 'C:/x.py'"),
    "big.zip": (
        lambda: zip_bytes({"huge.zip": bytes(40 * MiB)}),
        "big.zip: huge.zip: 41943040 bytes unpacked, over the 32 MiB allowed",
    ),
    "tower.zip": (
        lambda: zip_bytes({"a/" * 40 + "x.py": b""}),
        f"tower.zip: a member has a path over 32 folders deep: '{'a/' * 40}x.py'",
    ),
    "lies.zip": (
        lambda: b"PK\x03\x04 not a zip at all",
        "lies.zip: not a readable archive (BadZipFile: File is not a zip file)",
    ),
}


@pytest.mark.parametrize("name", BOMBS)
def test_each_bomb_is_refused_fast_and_writes_nothing_out_of_its_folder(tmp_path: Path, name: str) -> None:
    build, reason = BOMBS[name]
    data = build()
    archive, folder = tmp_path / name, tmp_path / "staging"
    archive.write_bytes(data)
    folder.mkdir()
    started = time.monotonic()
    with pytest.raises(archives.Refused) as refused:
        archives.unpack(archive, folder, archives.Budget())
    assert time.monotonic() - started < 10
    assert str(refused.value) == reason
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "staging"])


def test_what_grading_cannot_use_is_left_out_and_said(tmp_path: Path) -> None:
    """A .py file too large to grade, a link, a file of another kind: left out, the rest unpacked."""
    archive, folder = tmp_path / "hw.tar.gz", tmp_path / "staging"
    archive.write_bytes(
        tar_bytes(
            {"hw/minigrad/engine.py": b"x = 1\n", "hw/minigrad/big.py": bytes(600 * 1024), "hw/data.csv": b"1,2\n"},
            links={"hw/minigrad/nn.py": "/etc/shadow"},
        )
    )
    folder.mkdir()
    budget = archives.Budget()
    archives.unpack(archive, folder, budget)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == ["hw/minigrad/engine.py"]
    assert budget.notes == [
        "hw/minigrad/big.py: over 512 KiB, the most the grader reads; left out",
        "hw/minigrad/nn.py: not a regular file (a link or a device); left out",
    ]


def test_the_packed_archive_is_unpacked_without_tarfile_filters(tmp_path: Path, monkeypatch) -> None:
    """Debian 12's Python (3.11.2) has no extraction filters: unpacking must not need them."""
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    upload = tmp_path / "upload" / "hw" / "minigrad"
    upload.mkdir(parents=True)
    (upload / "engine.py").write_text("x = 1\n")
    packed = packing.pack(tmp_path / "upload")
    packing.unpack(packed.archive, tmp_path)
    assert (tmp_path / "minigrad" / "engine.py").read_text() == "x = 1\n"  # packed as minigrad/, wherever it was
    assert packed.location == "hw/minigrad"
    evil = tar_bytes({"../evil.py": b"x"}, "w")
    with pytest.raises(archives.Refused, match="a path out of its folder"):
        packing.unpack(evil, tmp_path / "hw")
    assert not (tmp_path / "evil.py").exists()


# --- folders: honest uploads found wherever they are; ids; --out among the submissions ------------


@needs_isolation
def test_folders_of_awkward_uploads_are_all_found_and_named(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    classes = tmp_path / "class"

    def put(where: str, files: dict[str, bytes], mtime: int = 1_700_000_000) -> None:
        folder = classes / where
        folder.mkdir(parents=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
            os.utime(folder / name, (mtime, mtime))

    put("deep/Downloads/hw/src/minigrad", ada)
    put("copies/old/minigrad", nia, mtime=1_600_000_000)
    put("copies/new/minigrad", ada)
    (classes / "tarball").mkdir(parents=True)
    (classes / "tarball" / "minigrad.tar.gz").write_bytes(tar_bytes(under("minigrad", nia)))
    put("gradebook.db/minigrad", ada)
    put("-2-3/minigrad", nia)
    put("s80 a b/minigrad", ada)
    put("s80_a_b/minigrad", nia)
    put("José García/minigrad", ada)
    put("weird/\udcff\x1b[2J/minigrad", ada)  # a folder name that is not UTF-8 and clears the screen
    put("notes/my code", {"engine_v2.py": ada["engine.py"]})
    put("bomb", {"README.md": b"hi"})
    (classes / "bomb" / "hw1.zip").write_bytes(zip_bomb())
    abyss(classes / "abyss", 1200, ada["engine.py"])
    request.addfinalizer(lambda: fill_in(classes / "abyss", 1200))
    put("fifo/minigrad", ada)  # a FIFO and a link where archives would be: never opened for reading
    os.mkfifo(classes / "fifo" / "hw.zip")
    (classes / "fifo" / "other.tar").symlink_to("/dev/zero")
    put("extra/minigrad", ada)  # an honest package, and an archive that cannot be unpacked beside it
    (classes / "extra" / "data.tar.gz").write_bytes(b"\x1f\x8b not gzip")
    out = classes / "grades"  # --out inside the submissions: never a student
    run, peak = grade_class(classes, out, "--parts", "checkpoint", "--jobs", "2")
    assert peak < 512 * 1024

    rows, errors = check_outputs(out, tmp_path)
    totals = {s: float(r["total"]) for s, r in rows.items() if r["status"] == "graded"}
    assert totals == {
        "deep": 12.0,
        "copies": 12.0,
        "tarball": 10.0,
        "gradebook-db": 12.0,
        "2-3": 10.0,
        "s80-a-b": 12.0,
        "s80-a-b-2": 10.0,
        "José-García": 12.0,
        "extra": 12.0,
        "fifo": 12.0,
        "weird": 12.0,
    }
    assert "fifo: hw.zip: not a regular file with one link; left out" in run.stdout
    assert errors["abyss"]["problem"].startswith("no minigrad code found (graded 0); the upload holds: ")
    assert "extra: not unpacked: data.tar.gz: not a readable archive (BadGzipFile: " in run.stdout
    assert sorted(rows) == sorted([*totals, "notes", "bomb", "abyss"])  # every student has a row; not "grades"
    assert rows["deep"]["found_in"] == "Downloads/hw/src/minigrad"
    assert rows["weird"]["found_in"] == "\ufffd\\x1b[2J/minigrad"
    assert rows["copies"]["found_in"] == "new/minigrad" and rows["tarball"]["found_in"] == "minigrad.tar.gz/minigrad"
    assert "copies: several copies of the package; graded new/minigrad, not old/minigrad" in run.stdout
    assert "its id s80-a-b is taken by another student; graded as s80-a-b-2" in run.stdout
    assert "--out grades lies inside the submissions: not graded as a student" in run.stdout
    assert rows["s80-a-b-2"]["folder"] == "s80_a_b" and rows["gradebook-db"]["folder"] == "gradebook.db"
    assert rows["bomb"]["status"] == REFUSED
    assert (
        errors["bomb"]["problem"] == f"upload refused: bomb.zip: zeros.zip: compressed {BOMB_RATIO} to 1 (a zip bomb?)"
    )
    flag = errors["notes"]["problem"]
    assert (
        flag.startswith("code found but not graded (graded 0): ")
        and rows["notes"]["status"] == "graded (see errors.csv)"
    )
    regrade = flag.split("to grade it from the folder you choose: ")[1]
    assert regrade.startswith(f"minigrad-grade '{classes / 'notes' / 'my code'}' --out ")
    assert "code found but not graded" in (out / "summary.md").read_text()


# --- Gradescope: a group graded once, a row for every member; lateness ---------------------------


@needs_isolation
def test_a_gradescope_group_is_graded_once_with_a_row_for_each_member(tmp_path: Path) -> None:
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    root = tmp_path / "export"
    for folder, files in (("submission_1", ada), ("submission_2", nia)):
        (root / folder / "minigrad").mkdir(parents=True)
        for name, data in files.items():
            (root / folder / "minigrad" / name).write_bytes(data)
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Ann\n    :sid: '=1+2'\n    :email: ann@x.edu\n"
        "  - :name: Ben\n    :sid: b2\n  :created_at: 2026-11-20 10:00:00.000000000 -08:00\n"
        "submission_2:\n  :submitters:\n  - :name: Cy\n    :email: cy@x.edu\n"
        "  :created_at: 2026-11-22 20:30:00.000000000 -08:00\n"
    )
    due = "2026-11-21T00:00:00-08:00"
    run, _ = grade_class(root, tmp_path / "out", "--parts", "checkpoint", "--due", due, "--late-policy", "per-day:10")
    rows, _ = check_outputs(tmp_path / "out", tmp_path)
    assert {s: (r["total"], r["hours_late"], r["total_after_late"]) for s, r in rows.items()} == {
        "1-2": ("12", "0", "12"),
        "b2": ("12", "0", "12"),
        "cy-x-edu": ("10", "44.5", "7.6"),
    }
    assert rows["1-2"]["submitters"] == rows["b2"]["submitters"] == "'=1+2; b2"  # the CSV neutralises the formula
    assert rows["b2"]["gradescope_submission_id"] == "1" and rows["cy-x-edu"]["email"] == "cy@x.edu"
    assert "graded now: 2" in run.stdout  # two gradings for three students


# --- staging is removed however the command ends ------------------------------------------------


@needs_isolation
def test_sigterm_removes_staging_and_keeps_finished_grades(tmp_path: Path) -> None:
    """SIGTERM while d's endless loop is being graded (one at a time, a to d), so a, b and c
    are finished: it ends the command as Ctrl-C does, the staged uploads are removed, and the
    finished grades are in grades.csv beside d's row. Sent once c's grade is complete, never
    after a fixed wait, which a loaded machine can make land before the grading starts."""
    for student, spec in (("a", ADA), ("b", ADA), ("c", NIA), ("d", JAY)):
        (tmp_path / "class" / student).mkdir(parents=True)
        (tmp_path / "class" / student / "hw.zip").write_bytes(zip_bytes(under("minigrad", package(spec, tmp_path))))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "graders.class_grading.cli", str(tmp_path / "class"), "--out", str(out)]
    with grader_tmp() as work:
        process = subprocess.Popen(
            [*command, "--jobs", "1", "--parts", "checkpoint,mlp"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(work)},
        )
        deadline = time.monotonic() + 300
        while not (out / "c" / "grading.json").exists():  # a, b and c are complete: d's loop runs
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        assert list(out.glob(".staging-*/folder-*")), "the uploads must still be staged while d is graded"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert list(out.glob(".staging-*")) == []
    status = {student: row["status"] for student, row in read_csv(out / "grades.csv").items()}
    left = "not graded (interrupted: run again with --resume)"
    assert status == {"a": "graded", "b": "graded", "c": "graded", "d": left}


def test_an_out_that_holds_the_submissions_is_refused(tmp_path: Path) -> None:
    (tmp_path / "class" / "alice").mkdir(parents=True)
    for out in (tmp_path / "class", tmp_path):
        with pytest.raises(SystemExit, match="holds the submissions: give a folder of its own"):
            layouts.check_out(tmp_path / "class", out)
    layouts.check_out(tmp_path / "class", tmp_path / "class" / "grades")  # inside: fine, it is no student


def test_intake_notes_other_copies_in_its_own_words(tmp_path: Path) -> None:
    """minigrad-grade uses the same search: a deep package is found and its place said."""
    (tmp_path / "up" / "a" / "b" / "c" / "minigrad").mkdir(parents=True)
    (tmp_path / "up" / "a" / "b" / "c" / "minigrad" / "engine.py").write_text("x = 1\n")
    (tmp_path / "copy").mkdir()
    taken = intake.copy_package(tmp_path / "up", tmp_path / "copy")
    assert taken.found and taken.location == "a/b/c/minigrad" and taken.copied == ["engine.py"]
    assert taken.refused == [] and taken.others == []


def test_a_wide_tree_is_searched_within_bounds(tmp_path: Path) -> None:
    """8,000 folders: the search looks into at most intake.SEARCH_FOLDERS of them and queues no more."""
    for a in range(20):
        for b in range(20):
            for c in range(20):
                (tmp_path / "up" / f"{a}" / f"{b}" / f"{c}").mkdir(parents=True)
    (tmp_path / "copy").mkdir()
    started = time.monotonic()
    taken = intake.copy_package(tmp_path / "up", tmp_path / "copy")
    assert not taken.found and time.monotonic() - started < 5


def test_an_upload_that_cannot_be_packed_or_written_costs_only_its_student(tmp_path: Path, monkeypatch) -> None:
    """Packing and writing run in the class command itself, on student text: whatever they
    raise is that student's row in errors.csv, and the other students are still graded."""

    def make_job(task: dispatch.Task) -> jobs.Job:
        if task.student == "packs-badly":
            raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")
        return jobs.Job(task.student, b"", "digest", (), "kit", None, 0.0)

    def finish(job: jobs.Job, graded: jobs.Graded) -> str | None:
        if job.student == "writes-badly":
            raise OSError(28, "No space left on device")
        return None

    monkeypatch.setattr(jobs, "grade", lambda job: jobs.Graded(job.student, "{}", "{}", None))
    tasks = [dispatch.Task(name, tmp_path, 0.0) for name in ("honest", "packs-badly", "writes-badly", "later")]
    failed, interrupted = dispatch.run(tasks, ThreadPoolExecutor(1), 2, make_job, finish)
    assert not interrupted
    assert failed == {
        "packs-badly": "the upload could not be packed: UnicodeEncodeError: "
        "'utf-8' codec can't encode character '\\udcff' in position 0: surrogates not allowed",
        "writes-badly": "the grade could not be written: OSError: [Errno 28] No space left on device",
    }


@needs_isolation
def test_a_file_an_archive_left_out_is_said_refused_to_the_student(tmp_path: Path) -> None:
    """A student's archive whose nn.py is over the size cap: unpacking leaves the file out, and
    the grading is told (--refused), so the tests that need it, their root cause and the extra
    data say it was refused and why, not that it is missing."""
    reference = ROOT / "reference" / "minigrad"
    members = {f"hw1/minigrad/{path.name}": path.read_bytes() for path in reference.glob("*.py")}
    members["hw1/minigrad/nn.py"] = b"# padding\n" * 60_000  # 586 KiB
    (tmp_path / "class" / "s1").mkdir(parents=True)
    (tmp_path / "class" / "s1" / "hw1.tar.gz").write_bytes(tar_bytes(members))
    grade_class(tmp_path / "class", tmp_path / "out", "--parts", "mlp")
    results = json.loads((tmp_path / "out" / "s1" / "results.json").read_text())
    reason = "over 512 KiB, the most the grader reads; left out"
    assert results["extra_data"]["refused"] == [f"hw1/minigrad/nn.py: {reason}"]
    assert results["extra_data"]["root_causes"][0]["title"] == f"`hw1/minigrad/nn.py` was refused: {reason}"
    assert not any("is missing" in test["output"] for test in results["tests"])
