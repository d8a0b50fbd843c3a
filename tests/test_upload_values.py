"""The values an upload carries beside its code (file times, sizes, tar extended headers, gzip
names, zip dates), read under budgets the kit controls, each conversion guarded.

Each upload is built byte by byte as an attacker would hand it in. A time the student chose
costs at most that student's lateness; a header that would hold tarfile in one long call is
refused by the size it claims, before tarfile reads it, with the reason in words.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import shutil
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_intake_attacks import ADA, NIA, check_outputs, grade_class, package, tar_bytes, under

from graders.similarity import cli as similar
from graders.uploads import archives

from grading import needs_isolation

YEAR_11476 = 3.0e11  # seconds: a time tmpfs, btrfs and zfs keep and no datetime holds
YEAR_1811 = -5.0e9
DUE = "2026-11-21T00:00:00+00:00"
BEFORE_DUE = 1_795_132_800  # 2026-11-20T00:00:00Z
AFTER_DUE = 1_795_226_400  # 2026-11-21T02:00:00Z
PAX_REASON = (
    "a pax header of 120000 bytes, over the 8 KiB allowed; upload a zip, or a tar made without extended attributes"
)


def header(name: str, kind: bytes, size: int, mtime: int = 1_700_000_000) -> bytes:
    """A tar header block as an attacker writes it: GNU's format, so that a size or time too
    large for octal, or below zero, is written in base-256 as tarfile reads it."""
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = kind, size, mtime
    return info.tobuf(tarfile.GNU_FORMAT)


def block(data: bytes) -> bytes:
    return data + bytes(-len(data) % 512)


def pax_digits(count: int) -> bytes:
    """A tar whose pax header is `count` digits with no record in them, then an honest file:
    tarfile before 3.11.10 and 3.12.6 searches such a header in time quadratic in its length
    (CVE-2024-6232), 24 s for 120,000 digits on this kit's machine."""
    engine = b"x = 1\n"
    return (
        header("././@PaxHeader", tarfile.XHDTYPE, count)
        + block(b"1" * count)
        + header("minigrad/engine.py", tarfile.REGTYPE, len(engine))
        + block(engine)
        + bytes(1024)
    )


def pax_records(records: dict[str, str]) -> bytes:
    """A pax header's body: `LENGTH KEY=VALUE\\n` records, each LENGTH counting itself."""
    body = b""
    for key, value in records.items():
        record = f" {key}={value}\n".encode()
        length = len(record) + len(str(len(record)))
        length += len(str(length)) - len(str(len(record)))
        body += str(length).encode() + record
    return body


def with_pax(records: dict[str, str], kind: bytes = tarfile.XHDTYPE, name: str = "minigrad/engine.py") -> bytes:
    body, engine = pax_records(records), b"x = 1\n"
    return (
        header("././@PaxHeader", kind, len(body))
        + block(body)
        + header(name, tarfile.REGTYPE, len(engine))
        + block(engine)
        + bytes(1024)
    )


def globals_over_the_cap() -> bytes:
    """Nine global pax headers of 1 KiB each: none over the cap, over it together (tarfile
    keeps them all and applies every one to each later member)."""
    data = b""
    for n in range(9):
        body = pax_records({f"comment{n}": "c" * 1000})
        data += header("pax_global_header", tarfile.XGLTYPE, len(body)) + block(body)
    return data + header("minigrad/engine.py", tarfile.REGTYPE, 0) + bytes(1536)


def long_name(kind: bytes, size: int) -> bytes:
    return header("././@LongLink", kind, size) + block(b"a" * size) + header("x.py", tarfile.REGTYPE, 0) + bytes(1536)


def below_zero() -> bytes:
    """A regular member whose size field says -1024 (base-256, as GNU tar writes large sizes)."""
    return header("minigrad/engine.py", tarfile.REGTYPE, -1024) + bytes(2048)


def gzipped(data: bytes) -> bytes:
    stream = io.BytesIO()
    with gzip.GzipFile(fileobj=stream, mode="wb", mtime=0) as packed:
        packed.write(data)
    return stream.getvalue()


HEADERS = {  # name: (the archive, why it is refused)
    "pax.tar": (lambda: pax_digits(120_000), PAX_REASON),
    "pax.tar.gz": (lambda: gzipped(pax_digits(120_000)), PAX_REASON),
    "solaris.tar": (
        lambda: with_pax({"comment": "c" * 9000}, tarfile.SOLARIS_XHDTYPE),
        "a pax header of 9014 bytes, over the 8 KiB allowed; upload a zip, or a tar made without extended attributes",
    ),
    "global.tar": (
        globals_over_the_cap,
        "a global pax header of 1015 bytes, over the 8 KiB allowed; upload a zip, or a tar made without "
        "extended attributes",
    ),
    "longname.tar": (
        lambda: long_name(tarfile.GNUTYPE_LONGNAME, 10_000),
        "a GNU long name header of 10000 bytes, over the 8 KiB allowed; upload a zip, or a tar made without "
        "extended attributes",
    ),
    "longlink.tar": (
        lambda: long_name(tarfile.GNUTYPE_LONGLINK, 10_000),
        "a GNU long link header of 10000 bytes, over the 8 KiB allowed; upload a zip, or a tar made without "
        "extended attributes",
    ),
    "negative.tar": (below_zero, "minigrad/engine.py: a size below zero (-1024 bytes)"),
    "paxsize.tar": (lambda: with_pax({"size": "-5"}), "minigrad/engine.py: a size below zero (-5 bytes)"),
}


@pytest.mark.parametrize("name", HEADERS)
def test_an_extended_header_over_the_cap_is_refused_before_tarfile_reads_it(tmp_path: Path, name: str) -> None:
    build, reason = HEADERS[name]
    archive, folder = tmp_path / name, tmp_path / "staging"
    archive.write_bytes(build())
    folder.mkdir()
    with pytest.raises(archives.Refused) as refused:
        archives.unpack(archive, folder, archives.Budget())
    assert str(refused.value) == f"{name}: {reason}"
    assert list(folder.iterdir()) == []


def test_extended_headers_within_the_cap_are_read(tmp_path: Path) -> None:
    """An honest pax header (a long path, times with fractions, a Mac's attributes) and one
    just under the cap are read, and the member's pax path is the one unpacked."""
    deep = "minigrad/" + "d" * 200 + "/engine.py"
    honest = {
        "path": deep,
        "mtime": "1700000000.123456789",
        "LIBARCHIVE.xattr.com.apple.quarantine": "MDA4MztmZmZmZmZmZjtTYWZhcmk7",
    }
    under_cap = {"comment": "c" * (archives.MAX_HEADER - 20)}
    assert len(pax_records(under_cap)) <= archives.MAX_HEADER < len(pax_records({"comment": "c" * 8200}))
    for n, records in enumerate((honest, under_cap)):
        archive, folder = tmp_path / f"{n}.tar", tmp_path / f"staging-{n}"
        archive.write_bytes(with_pax(records))
        folder.mkdir()
        archives.unpack(archive, folder, archives.Budget())
        written = [str(p.relative_to(folder)) for p in folder.rglob("*.py")]
        assert written == [records.get("path", "minigrad/engine.py")]


def test_member_times_no_file_or_datetime_can_hold_are_left_and_the_files_kept(tmp_path: Path) -> None:
    """Times in base-256 (the year 11476, 1811, 2**80 s) and pax times that are not numbers a
    file can have (NaN, infinity, 1e400): every file is unpacked; a time os.utime takes is
    kept (ext4 clamps the year 11476 to 2446), any other leaves the file its own."""
    engine = b"x = 1\n"
    times = {"far.py": int(YEAR_11476), "old.py": int(YEAR_1811), "huge.py": 2**80, "minus.py": -1}
    data = b"".join(
        header(f"m/{name}", tarfile.REGTYPE, len(engine), when) + block(engine) for name, when in times.items()
    )
    for name, when in {"nan.py": "nan", "inf.py": "inf", "big.py": "1e400"}.items():
        data += with_pax({"mtime": when}, name=f"m/{name}")[:-1024]
    archive, folder = tmp_path / "times.tar", tmp_path / "staging"
    archive.write_bytes(data + bytes(1024))
    folder.mkdir()
    archives.unpack(archive, folder, archives.Budget())
    kept = {p.name: p.stat().st_mtime for p in (folder / "m").iterdir()}
    assert sorted(kept) == sorted([*times, "nan.py", "inf.py", "big.py"])
    assert kept["minus.py"] == -1


def test_zip_dates_out_of_every_range_unpack(tmp_path: Path) -> None:
    """A DOS date and time of all ones (month 15, day 31, hour 31, minute 63, second 62) and
    of all zeros (month 0, day 0): each field is the zip's own, and the files unpack."""
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as bundle:
        for name, when in {"ones.py": (2107, 15, 31, 31, 63, 62), "zeros.py": (1980, 0, 0, 0, 0, 0)}.items():
            bundle.writestr(zipfile.ZipInfo(f"m/{name}", when), b"x = 1\n")
    archive, folder = tmp_path / "dates.zip", tmp_path / "staging"
    archive.write_bytes(stream.getvalue())
    folder.mkdir()
    archives.unpack(archive, folder, archives.Budget())
    assert sorted(p.name for p in (folder / "m").iterdir()) == ["ones.py", "zeros.py"]


def bzip2_bomb() -> bytes:
    """A zip, built field by field, whose engine.py claims 100 bytes and holds bzip2 data that
    is 64 MiB of zeros: zipfile hands a bzip2 read all it makes, whatever the member claims."""
    packed, name, method = bz2.compress(bytes(64 * 1024 * 1024)), b"minigrad/engine.py", zipfile.ZIP_BZIP2
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 46, 0, method, 0, 0x21, 0, len(packed), 100, len(name), 0)
    entry = struct.pack(
        "<4s6H3L5H2L", b"PK\x01\x02", 46, 46, 0, method, 0, 0x21, 0, len(packed), 100, len(name), 0, 0, 0, 0, 0, 0
    )
    start, size = len(local) + len(name) + len(packed), len(entry) + len(name)
    return local + name + packed + entry + name + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, size, start, 0)


def test_a_zip_member_that_zipfile_would_inflate_whole_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """bzip2 and LZMA members are refused by their method, before a byte is read (deflate is
    inflated as far as each read asks, and every zip tool writes it by default)."""
    archive, folder = tmp_path / "bomb.zip", tmp_path / "staging"
    archive.write_bytes(bzip2_bomb())
    folder.mkdir()
    with pytest.raises(archives.Refused) as refused:
        archives.unpack(archive, folder, archives.Budget())
    reason = "bomb.zip: minigrad/engine.py is compressed with bzip2; zip it again with the usual compression (deflate)"
    assert str(refused.value) == reason
    assert list(folder.iterdir()) == []


def read_bytes_so_far() -> int:
    """Bytes this process has read from files, as Linux counts them (`rchar`)."""
    with open("/proc/self/io", encoding="ascii") as counts:
        return next(int(line.split()[1]) for line in counts if line.startswith("rchar:"))


def test_a_gzip_name_of_32_mib_is_read_under_the_clock(tmp_path: Path) -> None:
    """gzip reads a header's file name a byte at a time, to its NUL, in one read of its own
    (32 MiB: 5 s). With a budget whose time is up, the refusal comes before the name is read,
    not after: the clock is asked before every read of the compressed file."""
    archive, folder = tmp_path / "named.tar.gz", tmp_path / "staging"
    deflated = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflated.compress(bytes(1024)) + deflated.flush()
    name = b"n" * (32 * 1024 * 1024)
    trailer = struct.pack("<II", zlib.crc32(bytes(1024)), 1024)
    archive.write_bytes(b"\x1f\x8b\x08\x08" + bytes(6) + name + b"\0" + body + trailer)
    folder.mkdir()
    before = read_bytes_so_far()
    with pytest.raises(archives.Refused) as refused:
        archives.unpack(archive, folder, archives.Budget(deadline=0.0))
    assert str(refused.value) == "named.tar.gz: unpacking took over 8 s"
    assert read_bytes_so_far() - before < 1024 * 1024, "gzip read the whole name before the clock was asked"


# --- a class with such uploads: every student graded, --resume and minigrad-similar work ----------


@pytest.fixture
def on_tmpfs() -> Iterator[Path]:
    """A folder on tmpfs (/dev/shm), which keeps a file dated in the year 11476: ext4 clamps
    such a time to 2446, where the attack would not be made."""
    folder = Path(tempfile.mkdtemp(prefix="minigrad-times-", dir="/dev/shm"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def put(folder: Path, files: dict[str, bytes], when: float) -> None:
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
        os.utime(folder / name, (when, when))
        assert (folder / name).stat().st_mtime == when, f"{folder} does not keep the time {when}"


@needs_isolation
def test_a_class_with_files_dated_11476_and_1811_grades_everyone(
    tmp_path: Path, on_tmpfs: Path, capsys: pytest.CaptureFixture
) -> None:
    """far's files were extracted from a tar dated in the year 11476, old's from one dated
    1811; tia handed in a tar whose members carry both; pax handed in the 120,000-digit pax
    header. Everyone is graded but pax, whose upload is refused in words; far's hand-in time
    is unknown (no datetime holds it), so far is not priced late; --resume keeps every
    grade; minigrad-similar compares the same four students."""
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    classes = on_tmpfs / "class"
    put(classes / "ada" / "minigrad", ada, BEFORE_DUE)
    put(classes / "far" / "minigrad", nia, YEAR_11476)
    put(classes / "old" / "minigrad", ada, YEAR_1811)
    members = tar_bytes(under("minigrad", ada), "w")
    times = tarfile.open(fileobj=io.BytesIO(members))
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for n, member in enumerate(times):
            member.mtime = int(YEAR_11476) if n % 2 else int(YEAR_1811)
            tar.addfile(member, times.extractfile(member))
    put(classes / "tia", {"hw.tar": stream.getvalue()}, AFTER_DUE)
    put(classes / "pax", {"hw.tar": pax_digits(120_000)}, BEFORE_DUE)
    out = on_tmpfs / "out"  # staged members keep their times here too

    options = ("--parts", "checkpoint", "--jobs", "2", "--due", DUE, "--file-times")
    first, _ = grade_class(classes, out, *options)
    said_first = first.stdout + first.stderr
    assert "--file-times: no hand-in time for far (no file time names a date): not priced late" in said_first
    rows, errors = check_outputs(out, tmp_path)
    assert {s: (r["status"], r["total"], r["submitted_at"], r["hours_late"]) for s, r in rows.items()} == {
        "ada": ("graded", "12", "2026-11-20T00:00:00+00:00", "0"),
        "far": ("graded", "10", "", ""),
        "old": ("graded", "12", "1811-07-23T15:06:40+00:00", "0"),
        "tia": ("graded", "12", "2026-11-21T02:00:00+00:00", "2"),
        "pax": ("not graded: upload refused (see errors.csv)", "", "2026-11-20T00:00:00+00:00", "0"),
    }
    assert errors["pax"]["problem"] == f"upload refused: hw.tar: {PAX_REASON}"

    run, _ = grade_class(classes, out, *options, "--resume")
    assert "graded now: 0" in run.stdout
    assert {s: r["total"] for s, r in check_outputs(out, tmp_path)[0].items()} == {
        "ada": "12",
        "far": "10",
        "old": "12",
        "tia": "12",
        "pax": "",
    }

    assert similar.main([str(classes), "--out", str(tmp_path / "similar")]) == 0
    said = capsys.readouterr().out
    assert "students compared: 4, not compared: 1" in said
    assert f"pax: not compared: upload refused: hw.tar: {PAX_REASON}" in said
