"""Gradescope's "Export Submissions", as downloaded: one zip holding the export's folder.

The export is a folder (`assignment_{id}_export/` as Gradescope names it) with
`submission_metadata.yml` and one `submission_{id}/` folder per submission (the format the
Gradescope layout in layouts.py reads). Given as its zip, it is unpacked into staging:
the metadata whole (under a size cap), and each submission's files by archives.py's rules
under a budget of its own, so one student's bomb is that student's refusal and never the
class's, and combined as every LMS upload is (combine.py). A zip with no
`submission_metadata.yml` in its top two levels is no Gradescope export (None: the caller tries
the LMS downloads).
"""

from __future__ import annotations

import shutil
import zipfile
import zlib
from collections import defaultdict
from pathlib import Path, PurePosixPath

from . import archives, combine, gradescope_metadata

METADATA = "submission_metadata.yml"
MAX_ENTRIES = 200_000  # files in one export


def metadata_in(bundle: zipfile.ZipFile) -> zipfile.ZipInfo | None:
    """The export's metadata member: at the top or one folder down."""
    found = [info for info in bundle.infolist() if PurePosixPath(info.filename).name == METADATA]
    found = [info for info in found if len(PurePosixPath(info.filename).parts) <= 2]
    return min(found, key=lambda info: len(info.filename)) if found else None


def unpack(archive: Path, staging: Path) -> tuple[Path, dict[str, str]] | None:
    """The export unpacked under `staging/export/`, and why each submission folder that could
    not be unpacked was refused; None when the zip holds no Gradescope export."""
    with archives.open_zip(archive, MAX_ENTRIES) as (bundle, bad):
        metadata = metadata_in(bundle)
        if metadata is None:
            return None
        if metadata.file_size > gradescope_metadata.MAX_BYTES:
            raise SystemExit(f"{archive}: {METADATA} is over {gradescope_metadata.MAX_BYTES // 1024**2} MiB")
        if metadata.compress_type not in archives.READ_IN_STEPS:  # bzip2, LZMA: inflated whole, whatever it claims
            raise SystemExit(f"{archive}: {METADATA} is compressed in a way Gradescope never writes")
        root = staging / "export"
        root.mkdir(parents=True)
        try:
            with bundle.open(metadata) as file:
                (root / METADATA).write_bytes(file.read(gradescope_metadata.MAX_BYTES))
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
            raise SystemExit(f"{archive}: {METADATA} cannot be read ({type(exc).__name__}: {exc})") from None
        top = PurePosixPath(metadata.filename).parent
        by_folder: dict[str, list[zipfile.ZipInfo]] = defaultdict(list)
        for info in bundle.infolist():
            path = PurePosixPath(info.filename)
            if info is metadata or info.is_dir() or top not in path.parents or len(path.relative_to(top).parts) < 2:
                continue
            by_folder[path.relative_to(top).parts[0]].append(info)
        refused = {}
        for folder, members in sorted(by_folder.items()):
            try:
                _unpack_submission(bundle, members, top, root, bad)
            except (archives.Refused, OSError) as exc:
                refused[folder] = str(exc)
                shutil.rmtree(root / folder, ignore_errors=True)
                continue
            combined, _ = combine.gather(root / folder)
            if combined != root / folder:  # one submission in several uploads: graded as one package
                shutil.rmtree(root / folder)
                combined.rename(root / folder)
        return root, refused


def _unpack_submission(
    bundle: zipfile.ZipFile, members: list[zipfile.ZipInfo], top: PurePosixPath, root: Path, bad: set[str]
) -> None:
    budget = archives.Budget()
    written = []
    for info in members:
        if info.filename in bad:
            raise archives.Refused(f"{info.filename}: a file name marked UTF-8 that is not")
        budget.member(info.filename)
        path = archives.safe_path(str(PurePosixPath(info.filename).relative_to(top)))
        if (target := archives.copy_member(bundle, info, root, path, budget)) is not None:
            written.append(target)
    archives.unpack_inner(written, budget, 1)
