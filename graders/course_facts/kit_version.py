"""The kit's version as a grade depends on it: a hash of every file a grade depends on.

grading.json records it, so a fixed suite, reference or data file makes `--resume` regrade
everyone while a change to the class command does not; every grading task carries it, so a
cluster worker that runs another kit refuses the task instead of grading with other suites.
"""

from __future__ import annotations

import functools

from graders.course_facts import kit


@functools.cache
def digest() -> str:
    """sha256 of every file in `kit.grade_inputs`, by its place in the kit and its bytes."""
    return kit.hash_files(kit.grade_inputs())
