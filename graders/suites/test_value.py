"""Hidden suite, part 1: every operator's forward value and local derivative, one node at a time."""

import math

from graders.grading.cases import Case, Program, cases
from graders.grading.comparison import close
from graders.grading.judge import plain

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
REVERSED = {"+": "__radd__", "-": "__rsub__", "*": "__rmul__", "/": "__rtruediv__"}
UNARY = ["exp", "log", "tanh", "relu", "sigmoid", "neg"]
POWERS = [3, 2.5, -1.5, 0]
HINTS = {
    "+": "both local derivatives of + are 1, times out.grad",
    "-": "a - b sends out.grad to a and -out.grad to b",
    "*": "d(a*b)/da = b and d(a*b)/db = a, times out.grad",
    "/": "d(a/b)/da = 1/b and d(a/b)/db = -a/b**2, times out.grad",
    "**": "d(x**n)/dx = n * x**(n-1), times out.grad",
    "exp": "e**x is its own derivative: out.data * out.grad",
    "log": "d(ln x)/dx = 1/x, times out.grad",
    "tanh": "d(tanh x)/dx = 1 - tanh(x)**2, times out.grad",
    "relu": "relu passes out.grad through where x > 0 and nothing elsewhere (0 at x = 0)",
    "sigmoid": "d(sigmoid x)/dx = s * (1 - s), times out.grad; for x < 0 compute e**x / (1 + e**x), "
    "which cannot overflow",
    "neg": "-a is a * -1",
}


def upstream(rng) -> float:
    return round(rng.uniform(0.5, 3.0), 3)


SIDES = {"values": ("a", "b"), "number-left": ("b",), "number-right": ("a",)}  # the Values of each side


def binary_program(rng, op: str, side: str = "values", preset: float = 0.0) -> Program:
    """`a op b` on two Values, `x op b` with a plain number x on the left (the reflected
    operator runs), or `a op y` with a plain number y on the right (wrapped by the operator)."""
    p = Program()
    x, y = round(rng.uniform(-3, 3), 4), rng.choice([-1, 1]) * round(rng.uniform(0.5, 3), 4)
    if side == "number-left":
        p.inputs["x"] = x  # inputs are listed in the order the expression reads
        out = p.apply(op, x, p.value(y, "b"))
        p.shown = f"x {op} b  (x a plain number, so Value.{REVERSED[op]} runs)"
    elif side == "number-right":
        out = p.apply(op, p.value(x, "a"), y)
        p.inputs["y"] = y
        p.shown = f"a {op} y  (y a plain number: wrap it in a Value)"
    else:
        out = p.apply(op, p.value(x, "a"), p.value(y, "b"))
        p.shown = f"a {op} b"
    g = upstream(rng)
    p.inputs["out.grad"] = g
    if preset:
        for name in SIDES[side]:
            p.add("set_grad", ref=name, grad=preset)
        p.inputs["grad before"] = preset
    p.add("set_grad", ref=out, grad=g)
    p.add("local_backward", root=out)
    p.read("data", out, "forward value")
    for name in SIDES[side]:
        p.read("grad", name, f"gradient of {name}")
    remembers_inputs(p, out)
    return p


def remembers_inputs(p: Program, out: str) -> None:
    """Read which Values out reaches through `_prev`: the grader's own walk calls every
    `_backward` it finds there, so an input left out of `_prev` whose grad the closure still
    sets passes every gradient here, and only backward() on a larger graph would miss it."""
    p.read("reachable", out, "the Values out reaches through out._prev (make it with Value(x, (self, other), op))")


def binary_cases(rng) -> list[Case]:
    """Each operator on two Values (then once with a plain number on the right, as a network's
    `x * 2.0` meets it), and with a plain number on the left."""
    return [
        Case(
            f"{BINARY[op]}-{side}",
            "value",
            f"{'number' if side == 'number-left' else 'Value'} {op} Value",
            HINTS[op],
            [binary_program(rng, op, side) for _ in range(3)]
            + ([binary_program(rng, op, "number-right")] if side == "values" else []),
            points=1.0,
        )
        for op in BINARY
        for side in ("values", "number-left")
    ]


def one_input_program(rng, op: str, *args, low: float = -2.5, preset: float = 0.0) -> Program:
    """`a op args` (or `a.op()`) with a random a >= low and a random upstream gradient; with
    `preset`, a.grad already holds that much, which the operator's backward must add to."""
    p = Program()
    a = p.value(round(rng.uniform(low, 2.5), 4), "a")
    out = p.apply(op, a, *args)
    p.shown = f"a {op} {args[0]}" if args else "-a" if op == "neg" else f"a.{op}()"
    g = upstream(rng)
    p.inputs["out.grad"] = g
    if preset:
        p.add("set_grad", ref=a, grad=preset)
        p.inputs["grad before"] = preset
    p.add("set_grad", ref=out, grad=g)
    p.add("local_backward", root=out)
    p.read("data", out, "forward value")
    p.read("grad", "a", "gradient of a")
    remembers_inputs(p, out)
    return p


def unary_program(rng, op: str, preset: float = 0.0) -> Program:
    return one_input_program(rng, op, low=0.2 if op == "log" else -2.5, preset=preset)


def unary_cases(rng) -> list[Case]:
    """Each operator at three random points and its extremes, then once more with a.grad
    already 1.5 (drawn last, so the other programs' inputs stay what they were): a backward
    that sets the gradient with `=` instead of adding to it fails here."""
    made = [
        Case(op, "value", p_what(op), HINTS[op], [unary_program(rng, op) for _ in range(3)] + EXTREMES.get(op, []))
        for op in UNARY
    ]
    for case in made:
        case.programs.append(unary_program(rng, case.id, preset=1.5))
    return made


def saturated_sigmoid(x: float) -> Program:
    """sigmoid far from 0, where the textbook 1 / (1 + e**-x) overflows for x < 0 (lesson 1)."""
    p = Program(inputs={"out.grad": 1.0})
    a = p.value(x, "a")
    out = p.apply("sigmoid", a)
    p.shown = "a.sigmoid()  (far from 0: e**-a overflows for the textbook formula when a < 0)"
    p.add("set_grad", ref=out, grad=1.0)
    p.add("local_backward", root=out)
    p.read("data", out, "forward value")
    p.read("grad", "a", "gradient of a")
    return p


# Fixed inputs a random draw would never reach, added after the random programs.
EXTREMES = {"sigmoid": [saturated_sigmoid(-1000.0), saturated_sigmoid(1000.0)]}


def p_what(op: str) -> str:
    return "-Value" if op == "neg" else f"Value.{op}()"


def power_cases(rng) -> list[Case]:
    return [
        Case(
            f"pow-{n}", "value", f"Value ** {n}", HINTS["**"], [one_input_program(rng, "**", n, low=0.3) for _ in "ab"]
        )
        for n in POWERS
    ]


def accumulation_cases(rng) -> list[Case]:
    hint = "use += in _backward: a node can get gradient from several places"
    made = [
        Case(
            f"accumulates-{BINARY[op]}",
            "value",
            f"a {op} b when a.grad and b.grad are already 1.5",
            hint,
            [binary_program(rng, op, preset=1.5)],
        )
        for op in BINARY
    ]
    for op in ("+", "*"):
        p = Program()
        a = p.value(round(rng.uniform(0.5, 2), 4), "a")
        out = p.apply(op, a, a)
        p.shown = f"a {op} a"
        p.add("set_grad", ref=out, grad=2.0)
        p.inputs["out.grad"] = 2.0
        p.add("local_backward", root=out)
        p.read("grad", "a", "gradient of a")
        made.append(Case(f"same-node-{BINARY[op]}", "value", f"a {op} a", hint, [p]))
    return made


ERRORS = [
    ("Value + str", "TypeError", "+", {"literal": "2"}, "return NotImplemented for operands that are not numbers"),
    ("Value * list", "TypeError", "*", {"literal": [1]}, "return NotImplemented for operands that are not numbers"),
    ("log of 0", "ValueError", "log", None, "log is defined for data > 0 only: raise ValueError"),
    ("(-8) ** 0.5", "ValueError", "**", 0.5, "a negative base has no real fractional power: raise ValueError"),
    ("1 / 0", "ZeroDivisionError", "/", 0, "dividing by zero raises ZeroDivisionError"),
    ("0 ** -2", "ZeroDivisionError", "**", -2, "zero to a negative power is a division by zero"),
]
A, B = 2.0, 3.0  # Value ** Value: a ** b, d/da = b * a**(b-1), d/db = a**b * ln(a)
POWER_OF_VALUES = [A**B, B * A ** (B - 1), A**B * math.log(A)]


def error_cases(rng) -> list[Case]:
    made = []
    for name, error, op, other, hint in ERRORS:
        p = Program()
        base = {"log of 0": 0.0, "(-8) ** 0.5": -8.0, "0 ** -2": 0.0}.get(name, 1.0)
        p.add("error", op=op, operands=[p.value(base, "a"), *([] if other is None else [other])])
        p.labels.append(f"the error raised (expected {error})")
        p.shown = name
        made.append(Case(f"error-{name}", "value", f"{name} must raise {error}", hint, [p], points=0.5))
    return [*made, power_of_values()]


def power_of_values() -> Case:
    """`Value ** Value` is outside the API: a TypeError is right, and so is an extension that
    gets the value and both gradients right. Bad input must get a clear error; doing more
    than asked is not bad input."""
    p = Program(shown="a ** b")
    p.add("error_or_gradients", op="**", operands=[p.value(A, "a"), p.value(B, "b")])

    def check(got: list, want: list) -> str | None:
        if got == want:
            return None
        answer = got[0] if len(got) == 1 else got
        if isinstance(answer, list) and close(answer, POWER_OF_VALUES, 1e-6, 1e-9):
            return None
        if isinstance(answer, list):
            return (
                f"computed [a ** b, gradient of a, gradient of b] = {plain(answer)}, "
                f"but the right values are {POWER_OF_VALUES} (or raise TypeError)"
            )
        raised = answer if isinstance(answer, str) else plain(answer)
        return f"raised {raised}, expected TypeError (or, as an extension, the right value and gradients)"

    hint = "** takes an int or float exponent only: return NotImplemented for a Value exponent"
    what = "Value ** Value must raise TypeError (or compute the right value and gradients)"
    return Case("error-Value ** Value", "value", what, hint, [p], points=0.5, check=check)


def relu_at_zero(rng) -> list[Case]:
    p = Program()
    out = p.apply("relu", p.value(0.0, "a"))
    p.shown = "a.relu() at a = 0"
    p.add("set_grad", ref=out, grad=2.0)
    p.add("local_backward", root=out)
    p.read("grad", "a", "gradient of a")
    return [Case("relu-at-zero", "value", "Value.relu() at 0", HINTS["relu"], [p], points=0.5)]


@cases(binary_cases)
def test_binary_operator(case, grade):
    grade(case)


@cases(unary_cases)
def test_unary_operator(case, grade):
    grade(case)


@cases(power_cases)
def test_power(case, grade):
    grade(case)


@cases(accumulation_cases)
def test_gradients_accumulate(case, grade):
    grade(case)


@cases(error_cases)
def test_bad_input_raises(case, grade):
    grade(case)


@cases(relu_at_zero)
def test_relu_derivative_at_zero(case, grade):
    grade(case)


EXTENSIONS = {
    "sin": "d(sin x)/dx = cos x, times out.grad",
    "cos": "d(cos x)/dx = -sin x, times out.grad",
    "sqrt": "d(sqrt x)/dx = 1 / (2 * sqrt x), times out.grad; a negative input raises ValueError",
}


def extension_cases(rng) -> list[Case]:
    """sin, cos and sqrt: an optional extension, worth bonus points only. sqrt is taken at
    0.2 or more (its slope is infinite at 0); its last program asks for the error a negative
    input must raise, last so that an engine without sqrt hears that it is not attempted."""
    made = []
    for op, hint in EXTENSIONS.items():
        programs = [one_input_program(rng, op, low=0.2 if op == "sqrt" else -2.5) for _ in range(3)]
        if op == "sqrt":
            p = Program(shown="a.sqrt() at a = -4.0")
            p.add("error", op="sqrt", operands=[p.value(-4.0, "a")])
            p.labels.append("the error raised (expected ValueError)")
            programs.append(p)
        made.append(Case(op, "value", f"{p_what(op)} (bonus)", hint, programs, bonus=True))
    return made


@cases(extension_cases)
def test_extension_operator(case, grade):
    grade(case)
