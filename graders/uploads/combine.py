"""One student's files, as an LMS hands them over, combined into one `minigrad/`.

Canvas and Moodle keep every file a student attached to their latest submission: `engine.py`
and `nn.py` uploaded one by one, a zip of the rest, a tar with a nested `hw1/minigrad/`. They
are one submission: when the package's modules lie in more than one place (the files uploaded
loose, and every folder that holds the package: named `minigrad`, or holding an `engine.py`),
they are gathered into one `minigrad/` beside the upload, and said. Only when no module name
comes twice: two copies of a file are the intake's to choose between (by content, and said),
never a silent merge. A package in one place is graded where it is, so `found_in` still says
where the student put it.
"""

from __future__ import annotations

import os
from pathlib import Path

from graders.uploads import intake

PACKAGE = "minigrad"


def gather(folder: Path) -> tuple[Path, list[str]]:
    """The folder to grade: `folder` itself when its package is in one place (or its modules
    come twice), else `{folder}-combined/minigrad/` holding every module moved there; and what
    was said of it."""
    sources: dict[str, list[Path]] = {}
    for place, files in intake.walk(folder):
        modules = [f for f in files if intake.MODULE_NAME.fullmatch(f.name) and f.is_file(follow_symlinks=False)]
        holds_package = place == folder or place.name == PACKAGE or any(f.name == "engine.py" for f in modules)
        for entry in modules if holds_package else []:
            sources.setdefault(entry.name, []).append(Path(entry.path))
    places = sorted({str(path.parent.relative_to(folder)) for paths in sources.values() for path in paths})
    if len(places) < 2 or any(len(paths) > 1 for paths in sources.values()):
        return folder, []  # one place, or two copies: the intake chooses one and says so
    combined = folder.with_name(f"{folder.name}-combined")
    (combined / PACKAGE).mkdir(parents=True)
    for name, (path,) in sorted(sources.items()):
        os.rename(path, combined / PACKAGE / name)
    shown = ", ".join("the loose files" if place == "." else place for place in places)
    return combined, [f"one submission in several uploads; combined into minigrad/: {shown}"]
