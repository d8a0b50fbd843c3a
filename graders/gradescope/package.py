"""Build Gradescope's autograder.zip: the grader, the reference, the course secret, two scripts.

    python -m graders.gradescope.package --secret-file F [--visibility V] [--out build/gradescope/autograder.zip]

The zip holds exactly what grading needs: `graders/` (Python files and the suites' pytest.ini),
`reference/minigrad/` (the answers the submission is compared with), `requirements.txt` (the
`grader` extra of pyproject.toml, so setup.sh installs no more), `settings.json`, the course
secret as `course_secret` (official grades use the course's seed; the secret lives in the zip,
never in git) and, at the top as Gradescope requires, `setup.sh` and `run_autograder`.
The same inputs give the same bytes: entries are sorted and dated 1980-01-01.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from graders.course_facts import course_seed, kit
from graders.gradescope.requirements import requirements
from graders.gradescope.run import SECRET, SETTINGS
from graders.grading.grade import VISIBILITIES

ROOT = kit.ROOT
HERE = Path(__file__).resolve().parent
SCRIPTS = ("setup.sh", "run_autograder")
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def kit_files() -> list[Path]:
    """Every file a grade depends on (`kit.grade_inputs`) and the rest of the grader's
    modules (the Gradescope runner among them), relative to the repository."""
    grader = [p for p in kit.GRADERS.rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(p.relative_to(ROOT) for p in {*grader, *kit.grade_inputs()})


def check_secret(secret_file: Path) -> bytes:
    """The secret's bytes, refusing an empty one and one that git could commit."""
    if course_seed.read_secret(secret_file) is None:
        raise SystemExit(f"{secret_file}: the course secret is empty")
    where = secret_file.resolve()
    if (
        where.is_relative_to(ROOT)
        and subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(where)]).returncode
    ):
        raise SystemExit(
            f"{secret_file}: the course secret is inside the repository and git would commit it; "
            "keep it outside (e.g. ~/minigrad-course-secret) or in a git-ignored folder"
        )
    return secret_file.read_bytes()


def build(secret_file: Path, visibility: str) -> dict[str, tuple[bytes, int]]:
    """The zip's entries: name -> (bytes, Unix mode)."""
    entries = {str(rel): ((ROOT / rel).read_bytes(), 0o644) for rel in kit_files()}
    entries.update({name: ((HERE / name).read_bytes(), 0o755) for name in SCRIPTS})
    entries["requirements.txt"] = ("".join(f"{r}\n" for r in requirements("grader")).encode(), 0o644)
    entries[SETTINGS] = ((json.dumps({"visibility": visibility}, indent=2) + "\n").encode(), 0o644)
    entries[SECRET] = (check_secret(secret_file), 0o600)
    return entries


def write_zip(entries: dict[str, tuple[bytes, int]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(entries):
            data, mode = entries[name]
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.external_attr = (0o100000 | mode) << 16  # a regular file with these permissions
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secret-file", required=True, help="the course secret (kept out of git)")
    parser.add_argument(
        "--visibility", choices=VISIBILITIES, default="after_due_date", help="when students see the hidden tests"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "gradescope" / "autograder.zip")
    args = parser.parse_args(argv)
    if not args.secret_file or not Path(args.secret_file).is_file():
        parser.error(f"no secret file at {args.secret_file!r}: give SECRET_FILE=path (a file outside the repository)")
    entries = build(Path(args.secret_file), args.visibility)
    write_zip(entries, args.out)
    print(f"wrote {args.out} ({len(entries)} files; hidden tests visible: {args.visibility})")
    print("upload it on Gradescope: the assignment's Configure Autograder page, Zip file upload")
    return 0


if __name__ == "__main__":
    sys.exit(main())
