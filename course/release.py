"""Generate the student release (`assignments/`) from the solutions (`reference/`).

A pipeline of small steps, each testable alone:
    list_sources -> (for .py) find_regions -> strip_regions -> write
`strip_regions` runs nbgrader's own ClearSolutions and ClearHiddenTests on the file wrapped
as one code cell, so a stub is byte for byte what `nbgrader generate_assignment` writes.

    python -m course.release            # rewrite assignments/
    python -m course.release --check    # exit 1 if assignments/ is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

from graders.course_facts.kit import ROOT

from .markers import find_regions

SKIPPED_PARTS = {"__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}


def list_sources(reference: Path) -> list[Path]:
    """Every file to release, relative to `reference`, skipping caches."""
    return sorted(
        p.relative_to(reference)
        for p in reference.rglob("*")
        if p.is_file() and not SKIPPED_PARTS & set(p.relative_to(reference).parts)
    )


def strip_regions(source: str) -> str:
    """Replace solution regions with nbgrader's stub and delete hidden-test regions."""
    cell = nbformat.v4.new_code_cell(source)
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python"}
    resources: dict = {}
    for preprocessor in (ClearSolutions(enforce_metadata=False), ClearHiddenTests(enforce_metadata=False)):
        notebook, resources = preprocessor.preprocess(notebook, resources)
    return notebook.cells[0].source


def release_text(path: Path, text: str) -> str:
    """What the student gets for one file: stripped if it is Python, unchanged otherwise."""
    if path.suffix != ".py":
        return text
    find_regions(text, str(path))
    return strip_regions(text)


def build(reference: Path) -> dict[Path, bytes]:
    """The whole release in memory, path -> content."""
    release = {}
    for rel in list_sources(reference):
        raw = (reference / rel).read_bytes()
        if rel.suffix == ".py":
            raw = release_text(rel, raw.decode("utf-8")).encode("utf-8")
        release[rel] = raw
    return release


def differences(release: dict[Path, bytes], target: Path) -> list[str]:
    """Paths where `target` differs from `release`: changed, missing or extra."""
    existing = set(list_sources(target)) if target.exists() else set()
    changed = [str(p) for p, data in release.items() if p not in existing or (target / p).read_bytes() != data]
    extra = [f"{p} (not in reference/)" for p in existing - release.keys()]
    return sorted(changed + extra)


def write(release: dict[Path, bytes], target: Path) -> None:
    """Make `target` hold exactly `release`: files written, stale files removed."""
    for stale in set(list_sources(target) if target.exists() else []) - release.keys():
        (target / stale).unlink()
    for rel, data in release.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=ROOT / "reference")
    parser.add_argument("--target", type=Path, default=ROOT / "assignments")
    parser.add_argument("--check", action="store_true", help="only report whether the target is up to date")
    args = parser.parse_args(argv)
    release = build(args.reference)
    stale = differences(release, args.target)
    if args.check:
        for path in stale:
            print(f"out of date: {args.target.name}/{path}")
        if stale:
            print("run `make release` and commit assignments/")
        return 1 if stale else 0
    write(release, args.target)
    print(f"released {len(release)} files to {args.target} ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
