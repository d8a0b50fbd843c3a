"""Root cause by evidence (graders/reporting/root_cause.py): each rule on the failures and passes
it weighs, and the parent's reading of what the API probes saw (graders/grading/notes.py).

The same cases graded whole, with their exact first group, are specimens in tests/submissions/
(bug-backward-misindented-order, bug-neg-endless-loop, bug-sgd-step-ignores-lr, ...).
"""

from __future__ import annotations

from graders.grading import notes
from graders.grading.cases import Program
from graders.grading.judge import cause_of_error
from graders.grading.protocol import Outcome
from graders.reporting import root_cause
from graders.reporting.cause import Cause
from graders.reporting.results import Verdict

ADD = [["apply", {"into": "c", "op": "+", "operands": ["a", "b"]}]]
MUL = [["apply", {"into": "c", "op": "*", "operands": ["a", "b"]}]]
SUB = [["apply", {"into": "c", "op": "-", "operands": ["a", "b"]}]]
GRAPH = [*ADD, ["apply", {"into": "d", "op": "*", "operands": ["c", "a"]}], ["backward", {"root": "d"}]]
SGD = [["mlp", {"into": "m"}], ["call", {}], ["backward", {"root": "y"}], ["sgd_step", {"model": "m", "lr": 0.1}]]
TRAIN = [["mlp", {"into": "m"}], ["train", {"into": "h", "model": "m", "loss": "mse_loss"}]]


def verdict(name: str, steps: list, passed: bool, cause: Cause | None = None) -> Verdict:
    """A test of `steps`: a passed one records what it used, as the plugin does."""
    used = Cause(uses=tuple(dict.fromkeys(root_cause.uses(steps))))
    return Verdict(name, name.split(":")[0], 1.0, passed, "" if passed else f"{name} failed", "", cause=cause or used)


def wrong(name: str, steps: list, gradient: bool = True) -> Verdict:
    return verdict(name, steps, False, root_cause.of_wrong_result(steps, gradient))


def titles(records: list[Verdict], evidence: root_cause.Evidence | None = None) -> list[tuple[str, list[str]]]:
    evidence = evidence or root_cause.Evidence()
    records = [
        r if r.cause is None else Verdict(**{**vars(r), "cause": root_cause.through(r.cause, evidence)})
        for r in records
    ]
    return [(g.title, g.tests) for g in root_cause.group(records, evidence.locations)]


def test_a_wrong_gradient_through_backward_is_backward_s_when_the_operators_pass_their_own_tests() -> None:
    """Before: the one program of `*` alone through backward() made `*` a group (its own tests pass)."""
    records = [
        verdict("value: a + b [add]", ADD, True),
        verdict("value: a * b [mul]", MUL, True),
        wrong("backward: a * b, backward() [mul-through-backward]", [*MUL, ["backward", {"root": "c"}]]),
        wrong("backward: graph [g]", GRAPH),
    ]
    evidence = root_cause.Evidence(locations={"Value.backward": ["engine.py", 281]})
    assert titles(records, evidence) == [
        (
            "`Value.backward` (engine.py:281)",
            ["backward: a * b, backward() [mul-through-backward]", "backward: graph [g]"],
        )
    ]


def test_an_operator_built_from_others_is_blamed_where_its_parts_fail() -> None:
    """`-` written as `+` and negation: a wrong gradient of `a - b` is `+`'s, whose own test fails."""
    records = [
        wrong("value: a + b [add]", ADD),
        verdict("value: a * b [mul]", MUL, True),
        wrong("value: a - b [sub]", SUB),
    ]
    built = root_cause.Evidence(
        calls={"Value.__sub__": ["Value.__neg__", "Value.__add__"], "Value.__neg__": ["Value.__mul__"]}
    )
    assert titles(records, built) == [("`Value.__add__`'s backward", ["value: a + b [add]", "value: a - b [sub]"])]
    # without the probe's word that `-` runs `+`, it stays a group of its own
    assert titles(records) == [
        ("`Value.__add__`'s backward", ["value: a + b [add]"]),
        ("`Value.__sub__`'s backward", ["value: a - b [sub]"]),
    ]


def test_a_function_used_by_failing_tests_alone_is_the_suspect_and_a_crash_where_it_led_joins_it() -> None:
    """One SGD.step bug: its test, a training trajectory and an overflow in a `**` (which passes
    its own tests) on the numbers the bad steps made are one group at SGD.step, with its line."""
    power = [["apply", {"into": "c", "op": "**", "operands": ["a", 2]}]]
    overflow = root_cause.of_function("Value.__pow__", "engine.py", 97, TRAIN)
    records = [
        verdict("value: a ** 2 [pow]", power, True),
        verdict("mlp: forward [f]", [["mlp", {"into": "m"}], ["call", {}]], True),
        verdict("mlp: gradients [g]", [["mlp", {"into": "m"}], ["call", {}], ["backward", {"root": "y"}]], True),
        wrong("mlp: SGD.step() [sgd-step]", SGD, False),
        wrong("mlp: trajectory [trajectory]", TRAIN, False),
        verdict("mlp: two moons [two-moons]", TRAIN, False, overflow),
    ]
    evidence = root_cause.Evidence(
        locations={"SGD.step": ["nn.py", 151]}, calls={"train": ["MLP.__call__", "SGD.step"]}
    )
    assert titles(records, evidence) == [
        (
            "`SGD.step` (nn.py:151)",
            ["mlp: SGD.step() [sgd-step]", "mlp: trajectory [trajectory]", "mlp: two moons [two-moons]"],
        )
    ]


def test_a_crash_in_a_function_that_fails_its_own_tests_stays_there() -> None:
    crash = root_cause.of_function("Value.backward.<locals>.go", "engine.py", 291, GRAPH)
    records = [verdict("backward: deep [deep]", GRAPH, False, crash), wrong("backward: graph [g]", GRAPH)]
    assert titles(records) == [("`Value.backward` (engine.py:291)", ["backward: deep [deep]", "backward: graph [g]"])]


def test_a_hang_is_one_cause_at_the_function_that_hung() -> None:
    hung = "took too long (over 5 s); look for an endless loop in Value.__neg__ (engine.py, line 109)"
    for steps in (SUB, MUL):
        cause = cause_of_error(Program(steps=steps), {"type": "ChildFailure", "message": hung, "where": None})
        assert (cause.title(), cause.uses) == ("`Value.__neg__` (engine.py:109)", tuple(root_cause.uses(steps)))
    other = {"type": "ChildFailure", "message": "took too long (over 5 s); look for an endless loop", "where": None}
    assert cause_of_error(Program(steps=SUB), other).name == ""  # nowhere named: grouped by what it uses
    forged = {"type": "ChildFailure", "message": hung.replace("engine.py", "../x.py"), "where": None}
    assert cause_of_error(Program(steps=SUB), forged).name == ""


def test_a_backward_that_takes_arguments_is_said_as_what_the_course_calls() -> None:
    message = "Value.__mul__.<locals>._backward() missing 2 required positional arguments: 'out' and 'self'"
    for frame in ({}, {"function": "Value.backward", "file": "engine.py", "line": 294}):
        error = {"type": "TypeError", "message": message, "where": None, **frame}
        cause = cause_of_error(Program(steps=MUL), error)
        assert cause.title({"Value.__mul__'s backward": ["engine.py", 80]}) == (
            "`Value.__mul__`'s backward takes arguments: the course calls `_backward()` with none (engine.py:80)"
        )


def probe(**reads: object) -> Outcome:
    """The Value probe's 11 reads (child/steps_api.py's `api`), all found right unless given."""
    found = {
        "names": ["_backward", "_prev", "backward", "data", "grad", "relu"],
        "holding": ["data"],
        "data_type": "float",
        "grad_set": "no error",
        "locations": {},
        "builds": {},
        "uses": {},
        "flags": [],
        "grads": [4.0, 2.0, 1.0],
        "refusals": {},
        "closures": {},
    }
    return Outcome(list({**found, **reads}.values()), None)


def test_the_probe_finds_the_student_s_name_by_what_it_does_and_by_spelling() -> None:
    names = ["_backward", "_grad_ops", "_prev", "backprop", "data", "grad", "reLU"]
    uses = {"_grad_ops": [], "backprop": ["_backward", "_prev", "topological_order"], "reLU": ["Value", "data"]}
    assert notes.api(probe(names=names, uses=uses)) == [
        "course API: `backward` is missing; you have `backprop`",
        "course API: `relu` is missing; you have `reLU`",
    ]
    # by its name alone, the first name holding a clue was taken
    assert notes.api(probe(names=names, uses={})) == [
        "course API: `backward` is missing; you have `_grad_ops`",
        "course API: `relu` is missing; you have `reLU`",
    ]


def test_a_flag_that_switches_gradients_off_is_named_only_when_the_gradients_stay_zero() -> None:
    flags = [["requires_grad", False], ["label_set", False]]
    said = notes.api(probe(flags=flags, grads=[0.0, 0.0, 1.0]))
    assert said == [
        "course API: a new `Value` has `requires_grad` False, and after `(a * b + a).backward()` the gradients "
        "of a and b are still 0: the course's `Value` passes gradients to every input, with no flag to switch them on"
    ]
    assert notes.api(probe(flags=flags)) == []  # the gradients flow: the flag is the student's own business
    evidence = root_cause.Evidence()
    notes.evidence("value", probe(flags=flags, grads=[0.0, 0.0, 1.0]), evidence)
    assert evidence.gradients == Cause("Value.__init__", "'s `requires_grad=False` default switches gradients off")


def test_the_probe_s_graph_tells_the_zero_gradient_causes_apart() -> None:
    def read(**reads: object) -> root_cause.Evidence:
        evidence = root_cause.Evidence()
        notes.evidence("value", probe(**reads), evidence)
        return evidence

    assert read(grads=[0.0, 0.0, 0.0]).backward.startswith(" leaves the root's grad at 0.0: set it to 1.0")
    closures = ["Value.backward", "Value.__mul__.<locals>._backward", "Value.__add__.<locals>._backward"]
    assert read(builds={"Value.backward": closures}, grads=[0.0, 0.0, 1.0]).backward == (
        " runs the `_backward`s inputs first: run them output first (reverse topological order)"
    )
    assert read(builds={"Value.backward": [closures[0], *closures[:0:-1]]}).backward == ""
    default = "Value.__init__.<locals>.<lambda>"
    made = {"Value": default, "Value.exp": default, "Value.__sub__": "Value.__add__.<locals>._backward"}
    assert read(closures=made).unattached == ("Value.exp",)
    refused = {
        "Value.__add__": ["AssertionError", "Value.__init__", "engine.py", 44],
        "Value.__mul__": ["X", "a b", "..", 0],
    }
    assert read(refusals=refused).refusals == {"Value.__add__": ["AssertionError", "Value.__init__", "engine.py", 44]}


def test_a_wrong_error_type_is_placed_where_the_probe_saw_it_raised() -> None:
    steps = [["value", {"into": "a", "x": 1.0}], ["error", {"op": "+", "operands": ["a", {"literal": "2"}]}]]
    cause = root_cause.of_wrong_result(steps, False)
    evidence = root_cause.Evidence(refusals={"Value.__add__": ["AssertionError", "Value.__init__", "engine.py", 44]})
    placed = root_cause.through(Cause(uses=cause.uses, detail="raised AssertionError"), evidence)
    assert placed.title() == "`Value.__init__` (engine.py:44)"
    assert root_cause.through(Cause(uses=cause.uses, detail="raised ValueError"), evidence).name == ""
