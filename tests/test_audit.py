"""`make audit`'s parts: the mutants each operator makes, the report, the allow-list, and one
small run from mutants to report on a single function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graders.audit import allowed, report, run
from graders.audit.grading import PublicRun
from graders.audit.mutants import Mutant, capped, file_mutants, package_mutants
from graders.audit.run import Graded, Kill

from grading import ROOT, needs_isolation

TINY = """\
def given(a):
    return a + 1


def f(a, b):
    ### BEGIN SOLUTION
    total = 0
    total += a * b
    if a < b:
        return g(a, b)
    return total - 1
    ### END SOLUTION
"""


def made(source: str) -> dict[str, set[str]]:
    """operator -> the mutants' changed lines ('-old / +new')."""
    found: dict[str, set[str]] = {}
    for mutant in file_mutants("tiny.py", source):
        change = " / ".join(line[0] + line[1:].strip() for line in mutant.changed)
        found.setdefault(mutant.operator, set()).add(change)
    return found


def test_each_operator_makes_the_mutants_expected_and_only_inside_the_hole():
    assert made(TINY) == {
        "arithmetic": {"-total += a * b / +total += a / b", "-return total - 1 / +return total + 1"},
        "comparison": {"-if a < b: / +if a <= b:"},
        "constant": {"-total = 0 / +total = 1", "-return total - 1 / +return total - 2"},
        "augmented": {"-total += a * b / +total = a * b"},
        "statement": {"-total = 0 / +pass", "-total += a * b / +pass", "-if a < b: / -return g(a, b) / +pass"},
        "swap": {"-return g(a, b) / +return g(b, a)", "-return total - 1 / +return 1 - total"},
    }


def test_a_change_that_precedence_would_regroup_is_put_in_parentheses():
    source = "def f(a, b):\n    ### BEGIN SOLUTION\n    return -a / b**2\n    ### END SOLUTION\n"
    assert "-return -a / b**2 / +return -a / (b*2)" in made(source)["arithmetic"]


def test_swaps_of_equal_operands_and_unpackings_are_made_only_when_they_change_something():
    source = "def f(a):\n    ### BEGIN SOLUTION\n    x, y = a\n    return x - x, y\n    ### END SOLUTION\n"
    assert made(source)["swap"] == {"-x, y = a / +y, x = a", "-return x - x, y / +return y, x - x"}


def test_the_quiz_answers_are_holes_named_by_their_answer():
    source = '# Q1\n### BEGIN SOLUTION\nQ1 = 8\n### END SOLUTION\n### BEGIN SOLUTION\nQ2 = "B"\n### END SOLUTION\n'
    mutants = file_mutants("quiz.py", source)
    assert {(m.function, m.operator, m.changed[-1]) for m in mutants} == {
        ("Q1", "constant", "+Q1 = 9"),
        ("Q1", "statement", "+pass"),
        ("Q2", "constant", "+Q2 = 'C'"),
        ("Q2", "statement", "+pass"),
    }


def test_a_mutant_keeps_its_id_when_code_above_it_moves():
    before = {m.id for m in file_mutants("tiny.py", TINY)}
    after = {m.id for m in file_mutants("tiny.py", "import math\n\n\n" + TINY)}
    assert before == after and len(before) == 11


def test_the_cap_keeps_a_stable_sample_per_function_and_says_how_many_were_made():
    mutants = file_mutants("tiny.py", TINY)
    kept, dropped = capped(mutants, 5)
    assert len(kept) == 5 and dropped == {"f (tiny.py)": 11}
    assert kept == capped(list(reversed(mutants)), 5)[0][::-1]


def graded(mutant_id: str, public: bool, hidden: dict[int, float | None]) -> Graded:
    diff = f"--- a\n+++ b\n@@ -1 +1 @@\n-x = {mutant_id}\n+x = changed\n"
    mutant = Mutant(mutant_id, "engine.py", "Value.relu", "constant", 1, "", diff)
    kills = {seed: None if lost is None else Kill("value", lost, ("t",)) for seed, lost in hidden.items()}
    return Graded(mutant, PublicRun("value", False, "1 failed") if public else None, kills, 1.0)


def small_audit() -> report.Audit:
    runs = [
        graded("killed", True, {0: 1.0, 1: 1.0, 2: 1.0}),
        graded("alsokilled", False, {0: 2.0, 1: 2.0, 2: 2.0}),
        graded("survivor", False, {0: None, 1: None, 2: None}),
        graded("equivalent", False, {0: None, 1: None, 2: None}),
        graded("seedy", False, {0: 1.0, 1: None, 2: 1.0}),
    ]
    allow = {
        "equivalent": allowed.Equivalent("equivalent", "Value.relu", "same thing"),
        "gone": allowed.Equivalent("gone", "Value.exp", "no longer made"),
    }
    return report.Audit(runs, allow, report.Settings([0, 1, 2], 2, None, {}, 10.0, 20.0))


def test_the_report_lists_a_survivor_with_its_diff_and_leaves_equivalents_out_of_the_share():
    audit = small_audit()
    text = report.markdown(audit)
    survivors = text.split("## Survivors")[1].split("\n## ")[0]
    assert "-x = survivor\n+x = changed" in survivors and "equivalent" not in survivors
    assert "| 5 | 1 | 4 | 1 | 3 (75.0%) | 1 | 0 | 1 |" in text  # 3 of the 4 counted, not of 5
    assert "`gone`" in text.split("match no mutant")[1]
    assert audit.passes() is False
    assert "Value.relu,5,1,1,3,1,0,1,survivor" in report.function_csv(audit)


def test_a_mutant_killed_by_public_only_fails_the_audit_and_is_listed():
    audit = small_audit()
    audit.graded.append(graded("publiconly", True, {0: None, 1: None, 2: None}))
    audit = report.Audit(audit.graded, {}, audit.settings)
    assert [g.mutant.id for g in audit.public_only] == ["publiconly"]
    assert "-x = publiconly" in report.markdown(audit).split("must be empty")[1].split("\n## ")[0]


def test_the_seed_table_shows_a_mutant_that_escapes_at_one_seed():
    text = report.markdown(small_audit()).split("## Seed sensitivity")[1]
    assert "1 of them survive at some seed" in text
    assert "| `Value.relu` | `seedy` | `-x = seedy / +x = changed` | value -1 | survived | value -1 |" in text


def test_every_allow_list_entry_has_a_reason_and_names_a_mutant_made_today(tmp_path: Path):
    made_ids = {m.id for m in package_mutants(ROOT / "reference" / "minigrad")}
    entries = allowed.load()
    assert set(entries) <= made_ids
    bad = tmp_path / "equivalent.toml"
    bad.write_text('[[equivalent]]\nid = "abc"\nfunction = "f"\nreason = ""\n')
    with pytest.raises(ValueError, match="reason"):
        allowed.load(bad)


@needs_isolation
def test_an_audit_of_one_quiz_answer_end_to_end(tmp_path: Path):
    """Q1's two mutants: the answer dropped (both catch it) and changed (the public checks only
    see that it is filled in; the hidden grader knows it is wrong)."""
    out = tmp_path / "audit"
    run = subprocess.run(
        [sys.executable, "-m", "graders.audit", "--only", "Q1_DF_DA", "--out", str(out), "--seeds", "3,4,5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    text = (out / "report.md").read_text()
    assert "| 2 | 0 | 2 | 1 | 2 (100.0%) | 0 | 0 | 0 |" in text
    assert "| checkpoint.py | `Q1_DF_DA` | checkpoint | 2 | 0 | 1 | 2 (100.0%) | 0 | 0 | 0 |" in text
    assert (out / "report.csv").read_text().splitlines()[1].startswith("checkpoint.py,Q1_DF_DA,2,0,1,2,0,0,0")
    assert not (out / "work" / "b87a9c1745").exists()  # each mutant's folder is removed once graded


def test_a_mutant_whose_grading_fails_is_reported_and_the_others_are_graded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """A grader that crashes on one mutant costs that mutant, not the audit: it is listed with
    the reason, left out of the share, and the audit does not pass until it is graded."""
    mutants = [m for m in package_mutants(ROOT / "reference" / "minigrad") if m.function == "Q1_DF_DA"]

    def fake_grade(graded: Graded, submission: Path, seeds: list[int], baseline: object) -> None:
        if graded.mutant is mutants[0]:
            raise RuntimeError("minigrad-grade failed: Traceback ...")
        graded.hidden = {seed: Kill("checkpoint", 1.0, ("Q1",)) for seed in seeds}

    monkeypatch.setattr(run, "_grade", fake_grade)
    graded_ = [run.grade_one(m, [0, 1, 2], None, tmp_path) for m in mutants]
    audit = report.Audit(graded_, {}, report.Settings([0, 1, 2], 2, None, {}, 1.0, 1.0))
    assert graded_[0].error == "RuntimeError: minigrad-grade failed: Traceback ..."
    assert [g.error for g in graded_[1:]] == [None] * (len(mutants) - 1)
    assert audit.tally(audit.graded).counted == len(mutants) - 1 and audit.passes() is False
    assert f"`{mutants[0].id}` (`Q1_DF_DA`): `RuntimeError: minigrad-grade failed" in report.markdown(audit)
