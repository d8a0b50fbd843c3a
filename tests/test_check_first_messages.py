"""`make check` as a new student meets it: each classic mistake, made on purpose in a copy of the
reference, and the first message it gets. Each names the function and line the value came
from, and a hint that leads to the fix (and agrees with the lessons): a zero gradient says
which of its three causes the student's graph shows.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from course.release import ROOT

from public_checks_run import check, first_failure, line_of, submission, table

SEED = "        self.grad = 1.0\n"
REVERSED = "        for node in reversed(order):\n"
EXP_ATTACHED = "            self.grad += out.data * out.grad\n\n        out._backward = _backward\n"
MUL_ADDS = "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n"
MUL_WRAPS = "        other = _as_value(other)\n        if other is NotImplemented:\n            return NotImplemented\n"
MUL_WRAPS += "        out = Value(self.data * other.data"
LOOP = ("        return self * -1\n", "        while True:\n            pass\n")


def test_a_root_never_seeded_is_told_to_seed_it(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", SEED, "")
    run = check(folder, "--part", "backward")
    backward = line_of(folder, "engine.py", "    def backward(self)")
    assert first_failure(run.stdout) == (
        "* test_lesson_worked_example\n"
        "f = s * s, s = a*b + c: df/da after f.backward()\n"
        "    inputs:   a = 2.0, b = -3.0, c = 10.0\n"
        "    expected: -24.0\n"
        "    got:      0.0\n"
        f"    where:    `Value.backward` (minigrad/engine.py:{backward})\n"
        "    hint:     after backward() the root's own grad is 0.0, not 1.0: set `self.grad = 1.0` before running "
        "the `_backward`s (d root / d root = 1); every other gradient starts from it, so without it they stay 0"
    )


def test_an_order_not_reversed_is_told_apart_from_a_missing_seed(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", REVERSED, "        for node in order:\n")
    run = check(folder, "--part", "backward")
    backward = line_of(folder, "engine.py", "    def backward(self)")
    assert first_failure(run.stdout).endswith(
        "    got:      0.0\n"
        f"    where:    `Value.backward` (minigrad/engine.py:{backward})\n"
        "    hint:     backward() ran the `_backward` of the node made by `+` before the `_backward` of the node "
        "made by `*` it feeds, so the gradient had not reached it yet: run them over `topological_order(self)` "
        "reversed, output first"
    )


def test_a_backward_never_attached_is_said_not_the_formula(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", EXP_ATTACHED, "            self.grad += out.data * out.grad\n\n")
    run = check(folder, "--part", "value")
    exp = line_of(folder, "engine.py", "    def exp(self)")
    assert first_failure(run.stdout) == (
        "* test_unary_local_backward_scales_by_upstream_grad[a.exp()]\n"
        "a.exp(): gradient of a\n"
        "    inputs:   a = 0.5, out.grad = 2.5\n"
        "    expected: 4.121803176750321\n"
        "    got:      0.0\n"
        f"    where:    `Value.exp` (minigrad/engine.py:{exp})\n"
        "    hint:     the node made by `exp` still holds the `_backward` every Value starts with, which does "
        "nothing: attach the operator's own with `out._backward = _backward` before `return out`"
    )


def test_a_wrong_formula_names_the_backward_closure_and_its_line(tmp_path: Path) -> None:
    folder = submission(
        tmp_path, "engine.py", "            self.grad += out.data * out.grad\n", "            self.grad += out.grad\n"
    )
    run = check(folder, "--part", "value")
    closure = line_of(folder, "engine.py", "def _backward", after="    def exp(self)")
    assert first_failure(run.stdout) == (
        "* test_unary_local_backward_scales_by_upstream_grad[a.exp()]\n"
        "a.exp(): gradient of a\n"
        "    inputs:   a = 0.5, out.grad = 2.5\n"
        "    expected: 4.121803176750321\n"
        "    got:      2.5\n"
        f"    where:    `Value.exp`'s `_backward` (minigrad/engine.py:{closure})\n"
        "    hint:     e**x is its own derivative: use out.data; do not forget the factor out.grad"
    )


def test_overwriting_in_mul_is_first_seen_at_mul_and_named_there(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", MUL_ADDS, MUL_ADDS.replace("+=", "="))
    run = check(folder, "--part", "value", "--all-failures")
    closure = line_of(folder, "engine.py", "            self.grad = other.data * out.grad") - 1
    assert first_failure(run.stdout) == (
        "* test_backward_adds_to_existing_grad_instead_of_overwriting[a * b]\n"
        "a * b: gradient of a when a.grad was already 1.0\n"
        "    inputs:   a = 2.0, b = -3.0, out.grad = 2.5\n"
        "    expected: -6.5\n"
        "    got:      -7.5\n"
        f"    where:    `Value.__mul__`'s `_backward` (minigrad/engine.py:{closure})\n"
        "    hint:     use += in _backward: a node can get gradient from several places"
    )
    add = line_of(folder, "engine.py", "            self.grad += out.grad") - 1
    sub = line_of(folder, "engine.py", "    def __sub__(self")
    built = (
        f"    where:    `Value.__sub__` (minigrad/engine.py:{sub}), built from `Value.__add__`'s `_backward` "
        f"(minigrad/engine.py:{add}) and `Value.__mul__`'s `_backward` (minigrad/engine.py:{closure})\n"
    )
    assert "* test_backward_adds_to_existing_grad_instead_of_overwriting[a - b]\n" in run.stdout
    assert built in run.stdout


def test_the_hint_for_an_unwrapped_operand_is_the_lessons_way(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", MUL_WRAPS, "        out = Value(self.data * other.data")
    run = check(folder, "--part", "value")
    mul = line_of(folder, "engine.py", "        out = Value(self.data * other.data")
    lesson = (ROOT / "reference" / "lessons" / "01-value.md").read_text()
    assert "other = _as_value(other)" in lesson and "don't wrap the operand before you check its type" in lesson
    assert first_failure(run.stdout) == (
        "* test_binary_forward[a * b-plain number]\n"
        f"crashed in `Value.__mul__` (minigrad/engine.py:{mul}): AttributeError: 'float' object has no attribute "
        "'data'\n"
        "hint: a plain number reached code that expects a Value: wrap it first, as lesson 1's `__add__` does: "
        "`other = _as_value(other)`, then `if other is NotImplemented: return NotImplemented`"
    )


def test_part_4_counts_the_operations_done_before_tensor_backward(tmp_path: Path) -> None:
    """With `unbroadcast`, `Add` and `Mul` written and `Tensor.backward` not yet, their checks
    pass: an operation's checks run its Function's backward with the checks' own walk."""
    folder = submission(tmp_path)
    shutil.copy(ROOT / "assignments" / "minigrad" / "layers.py", folder / "minigrad" / "layers.py")
    written = written_holes(ROOT / "reference" / "minigrad" / "tensor.py", {"unbroadcast", "Add", "Mul"})
    (folder / "minigrad" / "tensor.py").write_text(written)
    run = check(folder, "--part", "tensor")
    assert table(run.stdout) == {"tensor": "9 / 59"}, run.stdout
    assert "Nothing passes yet" not in run.stdout
    assert "* test_forward_and_backward[a - b, (2, 3) - (2, 3)]\n    not attempted yet: `Sub.forward`" in run.stdout


def written_holes(reference: Path, names: set[str]) -> str:
    """The reference's file with the holes of `names` (functions or classes) written and every
    other hole as the release leaves it (`raise NotImplementedError()`)."""
    lines, owner, hidden = [], "", False
    for line in reference.read_text().splitlines():
        if found := re.match(r"(?:class|def) (\w+)", line):
            owner = found[1]
        if "### BEGIN SOLUTION" in line:
            hidden = owner not in names
            lines += [line.replace("### BEGIN SOLUTION", "raise NotImplementedError()")] if hidden else []
        elif "### END SOLUTION" in line:
            hidden = False
        elif not hidden:
            lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_loop_hint_of_part_1_says_nothing_of_numpy(tmp_path: Path) -> None:
    folder = submission(tmp_path, "engine.py", *LOOP)
    run = check(folder, "--part", "value", "--time-limit", "0.5", "-k", "test_unary_forward and -a")
    hint = next(line for line in run.stdout.splitlines() if line.startswith("    hint: a loop"))
    assert "NumPy" not in hint and "visits a node again and again" in hint, run.stdout
    tensor = submission(tmp_path / "tensor", "tensor.py", "        return -x\n", LOOP[1])
    run = check(tensor, "--part", "tensor", "--time-limit", "0.5", "-k", "forward_and_backward and -a")
    assert "a Python loop over entries where one NumPy call would do" in run.stdout, run.stdout


def test_the_lessons_say_what_the_checks_do() -> None:
    lesson_1 = (ROOT / "reference" / "lessons" / "01-value.md").read_text()
    assert "pip install graphviz" not in lesson_1  # make check installs it
    lesson_2 = (ROOT / "reference" / "lessons" / "02-backward.md").read_text()
    promised = {int(n.replace(",", "")) for n in re.findall(r"Graphs ([\d,]+) nodes deep must work", lesson_2)}
    checked = re.search(r"depth = ([\d_]+)", (ROOT / "reference" / "checks" / "test_backward.py").read_text())
    hidden = re.search(r"CHAIN = ([\d_]+)", (ROOT / "graders" / "suites" / "test_backward.py").read_text())
    assert promised == {int(checked[1])} == {int(hidden[1])}


def test_a_backward_that_runs_only_the_roots_closure_is_told_to_run_every_node(tmp_path: Path) -> None:
    every = REVERSED + "            node._backward()\n"
    folder = submission(tmp_path, "engine.py", every, "        self._backward()\n")
    run = check(folder, "--part", "backward")
    assert first_failure(run.stdout).endswith(
        "    hint:     backward() ran the `_backward` of only 1 of the graph's 3 computed nodes: "
        "run it once for every node of `topological_order(self)`"
    ), run.stdout


def test_written_code_that_passes_nothing_is_not_told_to_begin(tmp_path: Path) -> None:
    """ "Nothing passes yet, which is where everyone starts" is for holes not filled: a student
    whose `Add`, `Mul` and `unbroadcast` are written, and wrong (a transpose for a sum), is told to
    fix the first failure."""
    folder = submission(tmp_path)
    shutil.copy(ROOT / "assignments" / "minigrad" / "layers.py", folder / "minigrad" / "layers.py")
    written = written_holes(ROOT / "reference" / "minigrad" / "tensor.py", {"unbroadcast", "Add", "Mul"})
    unbroadcast = written.index("    extra = grad.ndim - len(shape)")
    transposed = written[:unbroadcast] + "    return grad.T\n" + written[unbroadcast:]
    (folder / "minigrad" / "tensor.py").write_text(transposed)
    run = check(folder, "--part", "tensor")
    assert table(run.stdout) == {"tensor": "0 / 59"}, run.stdout
    assert "Nothing passes yet" not in run.stdout
    assert "Fix the first failure of the earliest part first; later parts build on it." in run.stdout
    assert first_failure(run.stdout).startswith("* test_forward_and_backward[a + b, (3, 1) + (1, 4)]\n"), run.stdout
