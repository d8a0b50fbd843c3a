"""The peers bench refuses, with the install that fixes it, when Dolos cannot be installed or run:
it must never print a table without Dolos. Nothing here installs Dolos (that takes minutes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import dolos_setup  # noqa: E402 - bench/ is a folder of scripts, not a package


def test_without_node_the_bench_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(dolos_setup.DolosMissing) as refused:
        dolos_setup.installed()
    assert str(refused.value) == (
        "Dolos needs node, not found on PATH: `apt-get install nodejs` (Debian's names), then run the bench again"
    )


def test_without_a_compiler_nothing_is_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "node").symlink_to(sys.executable)  # any program: only its presence on PATH is asked
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setattr(dolos_setup, "TARGET", tmp_path / "dolos")
    monkeypatch.setattr(dolos_setup, "STAMP", tmp_path / "dolos" / ".installed")
    with pytest.raises(dolos_setup.DolosMissing) as refused:
        dolos_setup.installed()
    assert str(refused.value) == (
        "Dolos needs npm, make, cc, g++, python3, not found on PATH: "
        "`apt-get install build-essential npm python3` (Debian's names), then run the bench again"
    )
    assert not (tmp_path / "dolos").exists()
