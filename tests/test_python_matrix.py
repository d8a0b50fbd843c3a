"""CI's Python matrix must fail where it should: a Python it needs that is not installed, a grade
that differs in any cell but the times."""

from __future__ import annotations

from pathlib import Path

import pytest

from course import python_matrix

HEADER = "student,total,max_score,bonus,seed,isolation,graded_at,status\n"


def test_a_missing_python_fails_ci_with_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_matrix, "PYENV", tmp_path)
    (tmp_path / "3.12.1" / "bin").mkdir(parents=True)
    (tmp_path / "3.12.1" / "bin" / "python3.12").touch()
    with pytest.raises(SystemExit) as failed:
        python_matrix.pyenv_python("3.10")
    assert str(failed.value) == f"python_matrix: no Python 3.10 under {tmp_path} (pyenv install 3.10): CI needs it"


def test_the_newest_patch_release_is_taken_not_a_free_threaded_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(python_matrix, "PYENV", tmp_path)
    for version in ("3.10.9", "3.10.13", "3.1.0", "3.10.14t"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / f"python{'.'.join(version.split('.')[:2])}").touch()
    assert python_matrix.pyenv_python("3.10") == tmp_path / "3.10.13" / "bin" / "python3.10"


def test_grades_leave_out_the_times_and_nothing_else(tmp_path: Path) -> None:
    one, other, wrong = tmp_path / "one.csv", tmp_path / "other.csv", tmp_path / "wrong.csv"
    one.write_text(HEADER + "ada,122,122,5,0,bwrap,2026-11-28T21:47:28+00:00,graded\n")
    other.write_text(HEADER + "ada,122,122,5,0,bwrap,2026-11-28T22:01:02+00:00,graded\n")
    wrong.write_text(HEADER + "ada,121.5,122,5,0,bwrap,2026-11-28T21:47:28+00:00,graded\n")
    assert python_matrix.grades(one) == python_matrix.grades(other)
    assert python_matrix.grades(one) != python_matrix.grades(wrong)
    assert "graded_at" not in python_matrix.grades(one)[0] and python_matrix.grades(one)[0]["total"] == "122"


RELEASE_CHECK = """FFFF [100%]

minigrad public checks (the hidden tests grade more cases than these)
part            passed
value           0 / 71
backward        0 / 13
mlp             0 / 19
tensor          0 / 59
checkpoint     12 / 12   all pass
174 failed in 1.73s
"""


@pytest.mark.parametrize(
    "said, crashed",
    [
        (RELEASE_CHECK, False),
        (RELEASE_CHECK.replace("mlp             0 / 19\n", ""), True),  # a part not reported
        (RELEASE_CHECK.replace("174 failed in", "173 failed, 1 error in"), True),  # a check in error
        (RELEASE_CHECK.replace("174 failed in 1.73s\n", "INTERNALERROR> KeyError\n"), True),  # no closing count
    ],
    ids=["release", "part missing", "error", "internal error"],
)
def test_public_checks_must_reach_their_table_for_every_part(
    said: str, crashed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = []
    monkeypatch.setattr(python_matrix, "run", lambda command, what, exits: commands.append((command, exits)) or said)
    if crashed:
        with pytest.raises(SystemExit, match="make check on assignments under venv-3.10 crashed"):
            python_matrix.public_checks(Path("/m/venv-3.10"), "assignments")
    else:
        rows = python_matrix.public_checks(Path("/m/venv-3.10"), "assignments")
        assert rows == {
            "value": (0, 71),
            "backward": (0, 13),
            "mlp": (0, 19),
            "tensor": (0, 59),
            "checkpoint": (12, 12),
        }
    check = ["make", "--no-print-directory", "check", "VENV=/m/venv-3.10", "SUBMISSION=assignments"]
    assert commands == [(check, (0, 2))]
