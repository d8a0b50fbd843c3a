"""Hidden suite, part 4: the Tensor engine on NumPy, its layers, losses, optimizer and training.

Inputs are seeded arrays of random shapes, the binary operators' shapes chosen so that NumPy
broadcasts; every gradient is read as an array and compared entry by entry with the
reference's. Where the release gives code (input checks, error types), a case's first program
needs the student's own work, so the untouched release earns nothing here.

Every behaviour a public check of part 4 tests is tested here too, with other inputs: the
edges (`edges()`) add a program to their operation's case. Where a case has its own `check`, the
child sends raw observations (arrays, the parameters training left) and the check decides,
here, after checking their shape and types: the digits' test images and labels never leave
this process, and the milestone's time is the parent's own count (cases.measured).
"""

import operator

from graders.course_facts.kit import TRAINING_DIGITS, digit_rows
from graders.grading.cases import Case, Program, cases
from graders.grading.comparison import close, is_array, is_number

BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
SYMBOLS = {**BINARY, "matmul": "@", "pow": "**"}
BROADCAST_SHAPES = [((2, 3), (2, 3)), ((3, 1), (1, 4)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((2, 2), ())]
MATMUL_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 4))]
UNARY = ["neg", "exp", "log", "tanh", "relu", "sigmoid"]
HINTS = {
    "add": "each input gets out.grad, summed back to its own shape (unbroadcast)",
    "sub": "a - b sends out.grad to a and -out.grad to b, each summed back to its own shape",
    "mul": "a * b sends out.grad * b to a and out.grad * a to b, each summed back to its own shape",
    "div": "a / b sends out.grad / b to a and -out.grad * a / b**2 to b, each summed back to its own shape",
    "matmul": "for 2-D a @ b: a gets out.grad @ b.T and b gets a.T @ out.grad; a 1-D operand is a row or "
    "column that is dropped again, and batch axes are summed back",
    "pow": "d(x**n)/dx = n * x**(n-1), times out.grad, entry by entry",
    "neg": "-a sends -out.grad to a",
    "exp": "e**x is its own derivative: out.data * out.grad",
    "log": "d(ln x)/dx = 1/x, times out.grad",
    "tanh": "d(tanh x)/dx = 1 - tanh(x)**2, times out.grad",
    "relu": "relu passes out.grad where x > 0 and nothing elsewhere (0 at x = 0)",
    "sigmoid": "s * (1 - s) times out.grad; compute s stably: e**x / (1 + e**x) where x < 0",
    "sum": "every summed entry gets the gradient of its sum: expand out.grad back over the summed axes",
    "mean": "like sum, divided by how many entries each mean took",
    "reshape": "the gradient is out.grad reshaped back to the input's shape",
    "transpose": "the gradient is out.grad transposed back (the inverse permutation of the axes)",
}
BACKWARD_HINT = "walk the graph in reverse topological order; leaves that require grad add to .grad"
# Backpropagation is exact to rounding: fair engines' gradients agree within 1e-15 (tanh's
# derivative as 1 - t**2 or as 1/cosh(x)**2, a mean's as grad / n or grad * (1 / n)). Central
# differences are not: 3e-11 to 3e-10 off in float64 with h = 1e-6. So every case that reads a
# gradient compares at these tolerances, and a gradient made by differentiating the forward pass
# numerically, in place of backward(), fails.
EXACT_RTOL, EXACT_ATOL = 1e-10, 1e-13
EXACT = {"rtol": EXACT_RTOL, "atol": EXACT_ATOL}


def array(rng, shape: tuple, low: float = -2.0, high: float = 2.0) -> dict:
    """A seeded array literal for a program, four decimals per entry."""
    if not shape:
        return {"array": round(rng.uniform(low, high), 4)}
    return {"array": [array(rng, shape[1:], low, high)["array"] for _ in range(shape[0])]}


def leaf(p: Program, rng, name: str, shape: tuple, low: float = -2.0, high: float = 2.0) -> str:
    data = array(rng, shape, low, high)
    p.add("tensor", into=name, data=data, requires_grad=True)
    p.inputs[name] = data["array"]
    return name


def broadcast(a: tuple, b: tuple) -> tuple:
    """NumPy's broadcast shape of two shapes that broadcast (the suite only draws such pairs)."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


def out_shape(op: str, shapes: list[tuple], options: dict) -> tuple:
    """The shape of the operation's output, for the gradient sent into backward(). Worked out
    here rather than with NumPy, which the grading process has no other reason to import."""
    first = shapes[0]
    if op in BINARY:
        return broadcast(*shapes)
    if op == "matmul":
        a, b = shapes
        if len(b) == 1:
            return a[:-1]
        if len(a) == 1:
            return b[:-2] + b[-1:]
        return broadcast(a[:-2], b[:-2]) + (a[-2], b[-1])
    if op in ("sum", "mean"):
        axis = options.get("axis")
        summed = range(len(first)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
        summed = {a % len(first) for a in summed}
        kept = 1 if options.get("keepdims") else None
        return tuple(kept if a in summed else n for a, n in enumerate(first) if a not in summed or kept)
    if op == "reshape":
        return tuple(options["shape"])
    if op == "transpose":
        return tuple(first[a] for a in options["axes"]) if "axes" in options else first[::-1]
    return first


def op_program(rng, op: str, shapes: list[tuple], options: dict, with_grad: bool, edge: dict | None = None) -> Program:
    """`op` on seeded leaves of the given shapes; with_grad: then backward() with a seeded
    gradient of the output's shape (a non-scalar backward), reading each leaf's gradient.
    An edge (see `edges()`) may fix some entries of `a` and watch NumPy's RuntimeWarnings."""
    options = dict(options)
    exponent = options.pop("exponent", None)
    edge = edge or {}
    p = Program(hint=edge.get("hint", ""))
    names = [leaf(p, rng, n, s, low=0.2 if op in ("log", "pow") else -2.0) for n, s in zip("ab", shapes)]
    if "entries" in edge:  # a's data, in place of the seeded draw
        p.steps[0][1]["data"] = {"array": edge["entries"]}
        p.inputs["a"] = edge["entries"]
    if op == "pow":
        args, shown = [names[0], exponent], f"a ** {exponent}"
    elif op in SYMBOLS:
        args, shown = names, f"a {SYMBOLS[op]} b"
    else:
        args, shown = names, "-a" if op == "neg" else f"a.{op}({_options(options)})"
    action = [
        "tensor_op",
        {"into": "out", "op": "neg" if op == "neg" else SYMBOLS.get(op, op), "args": args, "options": options},
    ]
    p.shown = f"{shown}  with " + ", ".join(f"{n}: shape {s}" for n, s in zip(names, shapes))
    if edge.get("warnings"):
        p.add("runtime_warnings", action=action)
        p.labels.append("RuntimeWarnings NumPy gave")
    else:
        p.steps.append(action)
    p.read("tensor_data", "out", "forward value")
    if with_grad:
        grad = array(rng, out_shape(op, shapes, options), 0.5, 2.0)
        p.inputs["out.grad"] = grad["array"]
        p.shown += ", then out.backward(grad)"
        p.add("tensor_backward", of="out", grad=grad)
        for name in names:
            p.read("tensor_grad", name, f"gradient of {name}")
    return p


def _options(options: dict) -> str:
    if "shape" in options:
        return ", ".join(map(str, options["shape"]))
    if "axes" in options:
        return ", ".join(map(str, options["axes"]))
    return ", ".join(f"{k}={v!r}" for k, v in options.items())


def op_variants(rng, op: str) -> list[tuple[list[tuple], dict]]:
    """Two (shapes, options) draws per operation, from the seeded choices."""
    made = []
    for _ in range(2):
        if op in BINARY:
            made.append((list(rng.choice(BROADCAST_SHAPES)), {}))
        elif op == "matmul":
            made.append((list(rng.choice(MATMUL_SHAPES)), {}))
        elif op in ("sum", "mean"):
            made.append(([(2, 3, 4)], rng.choice([{}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": -1}])))
        elif op == "reshape":
            made.append(([(2, 6)], {"shape": rng.choice([[3, 4], [12], [2, 3, 2]])}))
        elif op == "transpose":
            made.append(([rng.choice([(2, 3), (2, 3, 4)])], {}))
        elif op == "pow":
            made.append(([(3, 2)], {"exponent": rng.choice([2, 3, 0.5, -1.5])}))
        else:
            made.append(([rng.choice([(3,), (2, 3)])], {}))
    return made


OPS = [*BINARY, "matmul", "pow", *UNARY, "sum", "mean", "reshape", "transpose"]


def what(op: str) -> str:
    if op == "neg":
        return "-Tensor"
    if op == "pow":
        return "Tensor ** number"
    return f"Tensor {SYMBOLS[op]} Tensor" if op in SYMBOLS else f"Tensor.{op}()"


REDUCTIONS = [{}, {"axis": 0}, {"axis": 1, "keepdims": True}]  # what the public checks reduce over, every seed


def edges(rng) -> dict[str, list[dict]]:
    """The edges a public check of part 4 tests, each with other inputs than the check's:
    op -> [{"shapes", "options", and optionally "entries" (a's data), "warnings" (watch
    NumPy's RuntimeWarnings), "hint", "forward": False (the gradient alone has the edge)}]."""
    zeros = [[round(rng.uniform(0.5, 2.0), 4), 0.0, round(-rng.uniform(0.5, 2.0), 4), 0.0] for _ in range(2)]
    far = round(rng.uniform(745.5, 800.0), 4)  # e**745.5 overflows a float, as e**1000 does
    return {
        "matmul": [
            {
                "shapes": [(3, 2, 4), (4, 2)],
                "hint": "b was used once per batch entry: its gradient is a.T @ out.grad summed over the batch axis",
            },
            {
                "shapes": [(2, 4), (3, 4, 2)],
                "hint": "a was used once per batch entry: its gradient is out.grad @ b.T summed over the batch axis",
            },
            {"shapes": [(4,), (4, 3)], "hint": "a 1-D left operand acts as a (1, 4) row, added and taken away again"},
            {
                "shapes": [(3, 4), (4,)],
                "hint": "a 1-D right operand acts as a (4, 1) column, added and taken away again",
            },
        ],
        "relu": [
            {
                "shapes": [(2, 4)],
                "entries": zeros,
                "forward": False,
                "hint": "the gradient passes only where x > 0: at exactly 0 it is 0, as in PyTorch",
            }
        ],
        "sigmoid": [
            {
                "shapes": [(2, 3)],
                "entries": [[-1000.0, -far, 0.0], [1000.0, far, round(rng.uniform(-2, 2), 4)]],
                "warnings": True,
                "hint": "e**1000 overflows: for x < 0 compute e**x / (1 + e**x), or use np.logaddexp",
            }
        ],
        "transpose": [
            {
                "shapes": [(2, 3, 4)],
                "options": {"axes": rng.choice([(1, 2, 0), (2, 0, 1)])},
                "hint": "axes put the input's axes in that order: undo the permutation with its inverse "
                "(np.argsort(axes)), which reversing the axes is not",
            }
        ],
        **{
            op: [
                {
                    "shapes": [(2, 3, 4)],
                    "options": rng.choice([{"axis": (0, 2)}, {"axis": (0, 1), "keepdims": True}]),
                    "hint": f"axis may be a tuple, as in NumPy: {op} over each of its axes "
                    "(np.expand_dims takes the tuple too)",
                },
                *({"shapes": [(3, 4)], "options": options} for options in REDUCTIONS),
            ]
            for op in ("sum", "mean")
        },
    }


def op_cases(rng, with_grad: bool) -> list[Case]:
    """One case per operation: its forward value alone (0.25 points), or with its gradients (0.5).
    The edges' programs come last, drawn after the others."""
    kind, points = ("gradient", 0.5) if with_grad else ("forward", 0.25)
    made = {
        op: Case(
            f"{kind}-{op}",
            "tensor",
            f"{what(op)} {'gradients' if with_grad else 'forward'}",
            HINTS[op],
            [op_program(rng, op, s, o, with_grad) for s, o in op_variants(rng, op)],
            points=points,
            **(EXACT if with_grad else {}),
        )
        for op in OPS
    }
    for op, found in edges(rng).items():
        for edge in found:
            if with_grad or edge.get("forward", True):
                made[op].programs.append(op_program(rng, op, edge["shapes"], edge.get("options", {}), with_grad, edge))
    return list(made.values())


def forward_cases(rng) -> list[Case]:
    return op_cases(rng, with_grad=False)


def gradient_cases(rng) -> list[Case]:
    return op_cases(rng, with_grad=True)


def unbroadcast_cases(rng) -> list[Case]:
    programs = []
    for grad_shape, shape in [((4, 3), (3,)), ((4, 3), (4, 1)), ((2, 3, 4), (3, 1)), ((2, 3), ()), ((2, 3), (2, 3))]:
        p = Program(shown=f"unbroadcast(grad of shape {grad_shape}, {shape})")
        grad = array(rng, grad_shape)
        p.inputs["grad"] = grad["array"]
        p.add("unbroadcast", into="g", grad=grad, shape=list(shape))
        p.read("tensor_data", "g", "the gradient summed back")
        programs.append(p)
    hint = "sum over the leading axes the input did not have, then (keepdims) over its axes of size 1"
    return [Case("unbroadcast", "tensor", "unbroadcast(grad, shape)", hint, programs, points=1.5)]


def composite(rng, p: Program) -> str:
    """((a * b + c).tanh() @ w).mean() on broadcasting shapes: five operations in one graph."""
    a, b, c, w = (leaf(p, rng, n, s) for n, s in zip("abcw", [(3, 4), (4,), (3, 1), (4, 2)]))
    p.add("tensor_op", into="ab", op="*", args=[a, b])
    p.add("tensor_op", into="abc", op="+", args=["ab", c])
    p.add("tensor_op", into="t", op="tanh", args=["abc"])
    p.add("tensor_op", into="tw", op="@", args=["t", w])
    p.add("tensor_op", into="loss", op="mean", args=["tw"])
    p.shown = "((a * b + c).tanh() @ w).mean()  with a: (3, 4), b: (4,), c: (3, 1), w: (4, 2)"
    return "loss"


def backward_cases(rng) -> list[Case]:
    made = []
    for _ in range(2):
        p = Program()
        loss = composite(rng, p)
        p.add("tensor_backward", of=loss)
        for name in "abcw":
            p.read("tensor_grad", name, f"gradient of {name}")
        made.append(p)
    title = "backward() through a graph of five operations"
    graph = Case("graph", "tensor", title, BACKWARD_HINT, made, points=2.0, **EXACT)

    p = Program()
    loss = composite(rng, p)
    p.add("tensor_backward", of=loss)
    p.add("tensor_backward", of=loss)
    p.shown += ", backward() called twice"
    for name in "abcw":
        p.read("tensor_grad", name, f"gradient of {name} after two backward() calls")
    p.read("tensor_grad", "abc", "grad of the intermediate a * b + c (PyTorch keeps none)")
    hint = "leaf gradients add up across calls (grad = grad + g, starting from None); intermediates keep none"
    twice = Case("backward-twice", "tensor", "backward() twice accumulates in the leaves", hint, [p], 1.5, **EXACT)

    p = Program()
    loss = composite(rng, p)
    p.add("tensor_backward", of=loss)
    p.add("zero_grad_of", of="a")
    p.add("tensor_backward", of=loss)
    p.shown += ", backward(), a.zero_grad(), backward()"
    for name in "aw":
        p.read("tensor_grad", name, f"gradient of {name}")
    checks = Program(
        shown="out = a * b with a: (2, 3), b: (2, 3); out.backward() and out.backward(grad of shape (3, 2))"
    )
    leaf(checks, rng, "a", (2, 3))
    leaf(checks, rng, "b", (2, 3))
    checks.add("tensor_op", into="out", op="*", args=["a", "b"])
    checks.add("raises", action=["tensor_backward", {"of": "out"}])
    checks.add("raises", action=["tensor_backward", {"of": "out", "grad": array(rng, (3, 2))}])
    checks.labels += ["backward() without a grad on a (2, 3) tensor", "backward(grad) with a grad of the wrong shape"]
    hint = "zero_grad() sets grad back to None; backward() needs a grad unless the tensor has one element"
    rules = Case("backward-rules", "tensor", "zero_grad() and backward()'s own checks", hint, [p, checks], **EXACT)
    graph.programs.append(shared(rng))
    return [graph, twice, rules]


def shared(rng) -> Program:
    """A graph where a leaf and an interior tensor each feed two operations: each must have all
    its gradients before backward() passes them on (drawn last, so the others' inputs stay)."""
    p = Program(
        shown="h = a * b; out = (h * h.tanh() + a).sum()  with a: shape (2, 3), b: shape (3,)",
        hint="a and h each reach the output along two paths: add up the gradients arriving at a tensor, and "
        "pass a tensor's gradient on only once all of them have arrived (reverse topological order)",
    )
    leaf(p, rng, "a", (2, 3))
    leaf(p, rng, "b", (3,))
    for into, op, args in [
        ("h", "*", ["a", "b"]),
        ("t", "tanh", ["h"]),
        ("u", "*", ["h", "t"]),
        ("v", "+", ["u", "a"]),
    ]:
        p.add("tensor_op", into=into, op=op, args=args)
    p.add("tensor_op", into="out", op="sum", args=["v"])
    p.add("tensor_backward", of="out")
    for name in "ab":
        p.read("tensor_grad", name, f"gradient of {name}")
    return p


def central_difference_cases(rng) -> list[Case]:
    """backward()'s gradients and the central differences of the student's own forward pass,
    each compared here with the reference's, never with each other (two numbers the child sends
    prove nothing about each other): differences that match the reference's say the forward is
    right, so gradients that do not match are backward()'s fault, and the gradients must be the
    exact ones, which no difference quotient is."""
    made = []
    for _ in range(2):
        p = Program()
        loss = composite(rng, p)
        p.add("central_differences", into="numeric", inputs=["a", "b", "c", "w"], output=loss, steps=p.steps[4:])
        p.add("tensor_backward", of=loss)
        p.read("numeric_gradients", "numeric", "central differences of the loss for a, b, c and w")
        for name in "abcw":
            p.read("tensor_grad", name, f"gradient of {name}")
        made.append(p)

    def exact(got: list, want: list) -> str | None:
        shapes = [answer["shape"] for answer in want[0]]
        numeric = got[0] if got else None
        if not (isinstance(numeric, list) and len(numeric) == 4 and all(map(well_formed, numeric, shapes))):
            came = described(numeric)
            return f"central differences of your forward pass came back as {came}, not 4 arrays of finite numbers"
        if not close(numeric, want[0], 1e-4, 1e-6):
            return (
                "central differences of your forward pass differ from the reference's: the forward "
                "computes another function (the forward tests say which operation)"
            )
        for name, grad, reference, shape in zip("abcw", got[1:] + [None] * 4, want[1:], shapes):
            if not well_formed(grad, shape):
                return f"{name}.grad after backward() is {described(grad)}, not an array of shape {tuple(shape)}"
            if not close(grad, reference, EXACT_RTOL, EXACT_ATOL):
                gap = max(abs(g - w) for g, w in zip(entries(grad), entries(reference)))
                return (
                    f"backward()'s gradient of {name} is off the exact one by {gap:.3g}, though your forward pass "
                    "is right (its central differences match the reference's)"
                )
        return None

    hint = "a forward and backward that disagree: check each Function's backward against its forward"
    return [Case("gradcheck", "tensor", "gradients against central differences", hint, made, points=1.0, check=exact)]


def well_formed(answer: object, shape: list[int]) -> bool:
    """An array answer of exactly `shape` whose every entry is a finite number."""
    return is_array(answer) and answer["shape"] == list(shape) and _filled(answer["values"], list(shape))


def _filled(values: object, shape: list[int]) -> bool:
    if not shape:
        return is_number(values)
    return isinstance(values, list) and len(values) == shape[0] and all(_filled(v, shape[1:]) for v in values)


def entries(answer: dict) -> list[float]:
    """A well-formed array answer's numbers, in row-major order."""
    flat, pending = [], [answer["values"]]
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(reversed(item))
        else:
            flat.append(item)
    return flat


def described(answer: object) -> str:
    """What the child sent, in a few words: an array by its shape, anything else by its start."""
    if is_array(answer):
        return f"an array of shape {tuple(answer['shape'])}"
    if isinstance(answer, list) and all(is_array(a) for a in answer):
        return "[" + ", ".join(described(a) for a in answer) + "]"
    return repr(answer)[:80]


LINEAR = (16, 32)  # 512 weights and 32 biases
BOUND = LINEAR[0] ** -0.5


def linear_cases(rng) -> list[Case]:
    """Linear's draws against the reference's after the same numpy.random.seed: the numbers
    NumPy's global random state gives next, uniform in +-1/sqrt(nin), as the course API draws
    them (weight, then bias). A fair engine may draw the bias first, lay the weight's draws out
    as PyTorch's (nout, nin) block transposed, or scale np.random.rand instead of calling
    np.random.uniform: the draws are then the same numbers in another place. So the entries of
    weight and bias together must be the reference's entries, in any order, each within rounding;
    shapes, bounds or a seeded generator of the child's own (what a program alone gives away)
    earn nothing."""
    p = Program(shown=f"numpy.random.seed(s); Linear{LINEAR}")
    p.add("numpy_seed", seed=rng.randrange(2**31))
    p.add("layer", into="m", kind="Linear", args=list(LINEAR))
    p.read("parameter_arrays", "m", "parameters() (weight, then bias)")
    p.read("requires_grad", "m", "requires_grad of each parameter")

    def drawn(got: list, want: list) -> str | None:
        shapes = [answer["shape"] for answer in want[0]]
        arrays = got[0] if got else None
        if not (isinstance(arrays, list) and len(arrays) == 2 and all(map(well_formed, arrays, shapes))):
            expected = f"weight of shape {LINEAR}, then bias of shape {LINEAR[1:]}"
            return f"parameters() are {described(arrays)}, expected {expected}"
        if got[1:] != want[1:]:
            return f"requires_grad of weight and bias is {described(got[1:])[:80]}, expected {want[1:]}"
        largest = max(abs(x) for answer in arrays for x in entries(answer))
        if largest > BOUND:
            return (
                f"entries must be uniform in +-1/sqrt({LINEAR[0]}) = +-{BOUND:g}; the largest |entry| is {largest:.4g}"
            )
        mine = sorted(x for answer in arrays for x in entries(answer))
        if not close(mine, sorted(x for answer in want[0] for x in entries(answer)), 1e-6, 1e-9):
            return (
                "weight and bias are not the numbers NumPy's global random state gives after numpy.random.seed(s): "
                "draw them with np.random.uniform(-bound, bound, shape), weight then bias, not a generator of "
                "your own"
            )
        return None

    hint = "weight (nin, nout) and bias (nout,), both requiring grad, uniform in +-1/sqrt(nin)"
    made = [Case("linear-init", "tensor", "Linear(nin, nout)'s parameters", hint, [p], check=drawn)]

    p = Program(shown="Sequential(Linear(4, 3), ReLU(), Linear(3, 2), Tanh())(x), then out.backward(grad)")
    for name, kind, args in [("l1", "Linear", [4, 3]), ("r", "ReLU", []), ("l2", "Linear", [3, 2]), ("t", "Tanh", [])]:
        p.add("layer", into=name, kind=kind, args=args)
    p.add("sequential", into="m", modules=["l1", "r", "l2", "t"])
    values = [array(rng, s)["array"] for s in [(4, 3), (3,), (3, 2), (2,)]]
    p.add("set_parameters", model="m", values=values)
    x, grad = array(rng, (5, 4)), array(rng, (5, 2), 0.5, 2.0)
    p.inputs.update(parameters="seeded, set in parameters() order", x=x["array"], grad=grad["array"])
    p.add("forward", into="out", model="m", x=x)
    p.read("tensor_data", "out", "forward value")
    p.add("tensor_backward", of="out", grad=grad)
    for i, label in enumerate(["l1.weight", "l1.bias", "l2.weight", "l2.bias"]):
        p.add("parameter", into=f"p{i}", model="m", index=i)
        p.read("tensor_grad", f"p{i}", f"gradient of {label}")
    hint = "Linear computes x @ weight + bias; Sequential feeds each module's output to the next"
    title = "a Sequential network, forward and gradients"
    made.append(Case("sequential", "tensor", title, hint, [p], points=2.0, **EXACT))
    return made


def loss_cases(rng) -> list[Case]:
    p = Program(shown="mse_loss(pred, target) with pred: (4, 2)")
    leaf(p, rng, "pred", (4, 2))
    target = array(rng, (4, 2))
    p.inputs["target"] = target["array"]
    p.add("tensor_loss", into="loss", loss="mse_loss", pred="pred", target=target)
    p.read("tensor_data", "loss", "loss")
    p.add("tensor_backward", of="loss")
    p.read("tensor_grad", "pred", "gradient of pred")
    bad = Program(shown="mse_loss(pred of shape (4, 1), target of shape (4,))")
    leaf(bad, rng, "pred", (4, 1))
    bad.add(
        "raises",
        action=["tensor_loss", {"into": "loss", "loss": "mse_loss", "pred": "pred", "target": array(rng, (4,))}],
    )
    bad.labels.append("the error")
    made = [Case("mse", "tensor", "mse_loss", "the mean of (pred - target)**2 over every entry", [p, bad], **EXACT)]

    programs = []
    for scale in (1.0, 1000.0):
        p = Program(shown=f"cross_entropy(logits, labels) with logits: (5, 4){' near 1000' if scale > 1 else ''}")
        logits = array(rng, (5, 4), -2.0 * scale, 2.0 * scale)
        p.add("tensor", into="logits", data=logits, requires_grad=True)
        labels = [rng.randrange(4) for _ in range(5)]
        p.inputs.update(logits=logits["array"], labels=labels)
        p.add("tensor_loss", into="loss", loss="cross_entropy", pred="logits", target={"array": labels})
        p.read("tensor_data", "loss", "loss")
        p.add("tensor_backward", of="loss")
        p.read("tensor_grad", "logits", "gradient of logits")
        programs.append(p)
    # Small logits cannot overflow: a failure there is in the maths or in a Function's backward.
    programs[0].hint = (
        "log-sum-exp minus the label's logit, mean over N; its gradient is softmax minus one-hot, "
        "over N: check the backward of each Function it uses (a sum's gradient reaches every entry)"
    )
    hint = "subtract each row's max before exp (it cancels), then log-sum-exp minus the label's logit; mean over N"
    made.append(Case("cross-entropy", "tensor", "cross_entropy", hint, programs, points=2.0, **EXACT))
    return made


def sgd_cases(rng) -> list[Case]:
    made = []
    for momentum, decay, points in [(0.0, 0.0, 1.0), (0.9, 0.0, 1.0), (0.9, 0.01, 1.0)]:
        p = Program(
            shown=f"SGD(Linear(3, 2).parameters(), lr=0.1, momentum={momentum}, weight_decay={decay}), "
            "three steps with given gradients, the bias's gradient None on the second"
        )
        p.add("layer", into="m", kind="Linear", args=[3, 2])
        p.add("set_parameters", model="m", values=[array(rng, (3, 2))["array"], array(rng, (2,))["array"]])
        p.add("optimizer", into="opt", model="m", lr=0.1, momentum=momentum, weight_decay=decay)
        for step in range(3):
            grads = [array(rng, (3, 2))["array"], None if step == 1 else array(rng, (2,))["array"]]
            p.add("set_gradients", model="m", values=grads)
            p.add("optimizer_step", optimizer="opt")
        p.inputs["gradients"] = "seeded, set before each step"
        p.read("parameter_arrays", "m", "the parameters after three steps")
        hint = (
            "g = grad + weight_decay * p; buf = g at first, then momentum * buf + g; p -= lr * buf; "
            "skip a parameter whose grad is None"
        )
        made.append(
            Case(
                f"sgd-{momentum}-{decay}",
                "tensor",
                p.shown.split(",")[0] + f", momentum={momentum}, weight_decay={decay})",
                hint,
                [p],
                points=points,
            )
        )
    return made


def batch_cases(rng) -> list[Case]:
    programs = []
    for n, size in [(10, 3), (8, 4), (5, 5)]:
        seed = rng.randrange(1000)
        p = Program(
            shown=f"batches(xs, ys, batch_size={size}, seed={seed}) on {n} samples, sample i being [i, -i] with label i"
        )
        p.add("batch_order", into="order", n=n, batch_size=size, seed=seed)
        p.read("labels", "order", "each batch's sample numbers as its xs and its ys hold them, in order")
        programs.append(p)
    bad = Program(shown="batches() with 5 xs and 4 ys, then with batch_size 0 and True")
    for n_ys, size in [(4, 2), (5, 0), (5, True)]:
        bad.add("batches_raise", n_xs=5, n_ys=n_ys, batch_size=size)
        bad.labels.append(f"the error for {n_ys} targets and batch_size={size!r}")
    hint = "one permutation from numpy.random.default_rng(seed), cut in order; the last short batch is kept"
    return [Case("batches", "tensor", "batches()", hint, [*programs, bad], points=1.0)]


def fit_cases(rng) -> list[Case]:
    p = Program(shown="fit(Linear(3, 1), xs, ys, mse_loss, SGD(lr=0.1, momentum=0.5), epochs=3, batch_size=4, seed=1)")
    p.add("layer", into="m", kind="Linear", args=[3, 1])
    p.add("set_parameters", model="m", values=[array(rng, (3, 1))["array"], array(rng, (1,))["array"]])
    xs, ys = array(rng, (10, 3)), array(rng, (10, 1))
    p.inputs.update(xs=xs["array"], ys=ys["array"])
    p.add(
        "fit",
        into="losses",
        model="m",
        xs=xs,
        ys=ys,
        loss="mse_loss",
        lr=0.1,
        momentum=0.5,
        weight_decay=0.0,
        epochs=3,
        batch_size=4,
        seed=1,
    )
    p.read("floats", "losses", "the loss of each epoch")
    p.read("parameter_arrays", "m", "the parameters after training")
    hint = (
        "epoch e shuffles with seed + e; per batch zero_grad, loss, backward, step; "
        "an epoch's loss weights each batch by its size"
    )
    return [Case("fit", "tensor", "fit()", hint, [p], points=1.5)]


MILESTONE_ACCURACY = 0.85  # the reference reaches 0.92 to 0.94 on the last 297 digits, whatever the draw
# CPU seconds for everything the child that trains does (starting, importing NumPy and the
# submission, building the model, fit's 5 epochs): the public milestone's rate (8 s for 20 epochs
# of a network twice as wide); the reference's child takes about 0.3 s, 0.1 s of it in fit.
MILESTONE_SECONDS = 2.0
# Wall seconds after which that child's CPU is looked at: past the limit, it is stopped there (a
# slow loop costs the grading no more); within it, a loaded machine slowed it, and it runs on for
# as long again (child_loop.py), until it answers or passes the limit.
STOPPED_AFTER = MILESTONE_SECONDS + 0.5
MILESTONE_SHAPES = [[64, 32], [32], [32, 10], [10]]
# Training is deterministic: fair engines (sums in another order, one sample at a time, another
# softmax) end within 1e-14 of the reference's parameters; a model trained from other initial
# parameters, in another order, or made without training is off by 0.1 or more.
TRAINED_RTOL, TRAINED_ATOL = 1e-5, 1e-7


def held_out() -> tuple[list[list[float]], list[int]]:
    """The digits past TRAINING_DIGITS: their pixels / 16 and their labels, both kept here (the
    child is handed only the training rows). Read with the standard library: the grading
    process has no other reason to import NumPy."""
    rows = [[int(float(v)) for v in line.split(",")] for line in digit_rows()[TRAINING_DIGITS:]]
    return [[v / 16 for v in row[:-1]] for row in rows], [row[-1] for row in rows]


def accuracy(parameters: list[dict]) -> float:
    """The share of held-out digits that the course's network with these parameters labels right:
    Linear (x @ weight + bias), ReLU, Linear, then the largest logit, computed here in plain
    Python (parameters are arrays as the child sends them, already checked well-formed)."""
    w1, b1, w2, b2 = (answer["values"] for answer in parameters)
    columns1, columns2 = list(zip(*w1)), list(zip(*w2))
    images, labels = held_out()
    right = 0
    for image, label in zip(images, labels):
        hidden = [max(0.0, b + sum(map(operator.mul, image, column))) for b, column in zip(b1, columns1)]
        logits = [b + sum(map(operator.mul, hidden, column)) for b, column in zip(b2, columns2)]
        right += logits.index(max(logits)) == label
    return right / len(labels)


def milestone_cases(rng) -> list[Case]:
    """The milestone, judged here: the child trains the course's network, built from the
    submission's own Linear, ReLU and Sequential, and sends back the parameters training left,
    nothing else. The parent counts the CPU of the whole child that trained (cases.measured),
    and holds the parameters against the reference's, trained from the same initial parameters
    on the same batches: no answer made elsewhere (a model shipped in the submission, weights
    worked out from the training file) is the answer to this program. A model that is not, the
    parent runs on the held-out digits, which never leave this process, to say how it does."""
    p = Program(
        shown="Sequential(Linear(64, 32), ReLU(), Linear(32, 10)) trained with fit() on 1,500 digits "
        "(cross_entropy, SGD lr=0.1 momentum=0.9, 5 epochs of batches of 32), then its parameters, "
        "run by the grader on the other 297"
    )
    p.add("measured", what="fit()", limit=MILESTONE_SECONDS, stop_after=STOPPED_AFTER)
    p.add("digits", into="train", rows=TRAINING_DIGITS)
    for name, kind, args in [("l1", "Linear", [64, 32]), ("r", "ReLU", []), ("l2", "Linear", [32, 10])]:
        p.add("layer", into=name, kind=kind, args=args)
    p.add("sequential", into="m", modules=["l1", "r", "l2"])
    values = [array(rng, s, -0.125, 0.125)["array"] for s in [(64, 32), (32,)]]
    values += [array(rng, s, -0.17, 0.17)["array"] for s in [(32, 10), (10,)]]
    p.add("set_parameters", model="m", values=values)
    p.inputs["parameters"] = "seeded, set in parameters() order"
    fit = {"into": "losses", "model": "m", "xs": "train_xs", "ys": "train_ys", "loss": "cross_entropy"}
    fit |= {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.0, "epochs": 5, "batch_size": 32, "seed": 0}
    p.add("fit", **fit)
    p.read("parameter_arrays", "m", "the parameters after training")

    def learned(got: list, want: list) -> str | None:
        trained = got[0] if len(got) == 1 else got
        if not (isinstance(trained, list) and len(trained) == 4 and all(map(well_formed, trained, MILESTONE_SHAPES))):
            shapes = ", ".join(str(tuple(shape)) for shape in MILESTONE_SHAPES)
            return f"parameters() after training are {described(trained)}, expected arrays of shapes {shapes}"
        if close(trained, want[0], TRAINED_RTOL, TRAINED_ATOL):
            return None
        mine, reference = accuracy(trained), accuracy(want[0])
        if mine < MILESTONE_ACCURACY:
            return (
                f"test accuracy {mine:.3f} on digits training never saw, expected at least {MILESTONE_ACCURACY} "
                f"(the reference gets {reference:.3f})"
            )
        gap = max(
            abs(g - w)
            for got_one, want_one in zip(trained, want[0])
            for g, w in zip(entries(got_one), entries(want_one))
        )
        return (
            f"test accuracy {mine:.3f}, but these are not the parameters fit() reaches from this program's initial "
            f"parameters: they differ from the reference's, trained the same way, by up to {gap:.3g} (fit's own "
            "test shows where its steps differ)"
        )

    hint = (
        "if the loss does not fall, check cross_entropy's gradient and SGD.step first; if fit is slow, "
        "look for Python loops over entries or samples: every operation should be one NumPy call"
    )
    return [Case("digits", "tensor", "the milestone: digits", hint, [p], points=2.0, check=learned)]


@cases(forward_cases)
def test_forward(case, grade):
    grade(case)


@cases(gradient_cases)
def test_gradient(case, grade):
    grade(case)


@cases(unbroadcast_cases)
def test_unbroadcast(case, grade):
    grade(case)


@cases(backward_cases)
def test_backward(case, grade):
    grade(case)


@cases(central_difference_cases)
def test_central_differences(case, grade):
    grade(case)


@cases(linear_cases)
def test_layers(case, grade):
    grade(case)


@cases(loss_cases)
def test_losses(case, grade):
    grade(case)


@cases(sgd_cases)
def test_sgd(case, grade):
    grade(case)


@cases(batch_cases)
def test_batches(case, grade):
    grade(case)


@cases(fit_cases)
def test_fit(case, grade):
    grade(case)


@cases(milestone_cases)
def test_digits_milestone(case, grade):
    grade(case)
