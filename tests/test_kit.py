"""The kit's paths and the files a grade depends on are said once (graders/kit.py), and every
user of that list (the version digest, the reference cache, Gradescope's zip) sees the same."""

from __future__ import annotations

from graders import kit
from graders.gradescope import package


def test_every_file_a_grade_reads_is_a_grade_input():
    inputs = kit.grade_inputs()
    assert kit.DIGITS in inputs and kit.REGISTRY in inputs and kit.SUITES / "pytest.ini" in inputs
    for folder in (kit.CHILD, kit.SUITES, kit.REFERENCE / "minigrad"):
        assert set(folder.glob("*.py")) <= set(inputs)
    assert set(kit.reference_inputs()) <= set(inputs)
    assert all(path.is_file() for path in inputs)


def test_gradescope_zip_holds_every_grade_input():
    assert {path.relative_to(kit.ROOT) for path in kit.grade_inputs()} <= set(package.kit_files())
