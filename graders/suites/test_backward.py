"""Hidden suite, part 2: whole graphs, reused nodes, deep chains, accumulation, zeroing.

Part 2 grades part 2 alone: every graph here is built from `+` and `*` only (of two Values,
or of a Value and a plain number), the two operators no backward() can do without. An engine
that lacks `**`, tanh or `/` loses those operators' own tests in part 1 and nothing here: a
square is written `s * s`, which also sends s two shares of the gradient along one edge. The
lesson's worked example keeps its `** 2` (the child's `square`), falling back to `u * u` for
an engine without `**`.
"""

from graders.grading.cases import Case, Program, cases
from graders.grading.judge import plain

ORDER_HINT = (
    "if part 1 fails too, fix + and * there first; "
    "else backward() must run every _backward output first (reverse topological order)"
)
OPS = ["+", "*"]
SMALLEST, LARGEST = 0.1, 10.0  # every node's size stays in between, so no sum cancels to nothing
LEAVES = "abc"


def random_expression(rng, size: int) -> tuple[Program, str]:
    """A random expression over a, b, c (none of them 0).

    Each operation takes the latest node and any node so far (itself included): every node
    feeds the root, and earlier nodes are reused, so a gradient must add up several paths.
    Operations that would leave a node's size outside [SMALLEST, LARGEST] are drawn again
    (the values are worked out here as the expression grows); when none fits, the latest
    node is scaled by a plain number into [0.5, 2], which always stays inside.
    """
    p = Program()
    pool = [p.value(round(rng.choice([-1, 1]) * rng.uniform(0.2, 1.5), 4), name) for name in LEAVES]
    values = [p.inputs[name] for name in LEAVES]
    shown = list(LEAVES)
    for _ in range(size):
        i = len(pool) - 1
        for _attempt in range(8):
            op, j = rng.choice(OPS), rng.randrange(len(pool))
            value = values[i] + values[j] if op == "+" else values[i] * values[j]
            if SMALLEST <= abs(value) <= LARGEST:
                pool.append(p.apply(op, pool[i], pool[j]))
                shown.append(f"({shown[i]} {op} {shown[j]})")
                break
        else:
            scale = round(rng.uniform(0.5, 2) / abs(values[i]), 4)
            value = values[i] * scale
            pool.append(p.apply("*", pool[i], scale))
            shown.append(f"({shown[i]} * {scale})")
        values.append(value)
    p.shown = shown[-1]
    return p, pool[-1]


def entangled(rng, size: int) -> tuple[Program, str]:
    """`s * s` for s = expression + a * b * c: every leaf gets a gradient through interior
    nodes, and the function curves in every input, whatever the random expression turned out
    to be."""
    p, root = random_expression(rng, size)
    product = p.apply("*", p.apply("*", "a", "b"), "c")
    p.shown = f"s * s, s = {p.shown} + a * b * c"
    s = p.apply("+", root, product)
    return p, p.apply("*", s, s)


def read_leaf_grads(p: Program, after: str = "") -> None:
    for name in LEAVES:
        p.read("grad", name, f"gradient of {name}{after}")


def random_graph(rng, size: int) -> Program:
    p, root = random_expression(rng, size)
    p.add("backward", root=root)
    read_leaf_grads(p)
    return p


def graph_cases(rng) -> list[Case]:
    return [
        Case(
            f"random-graph-{k}",
            "backward",
            "backward() on a random graph with reused nodes",
            ORDER_HINT,
            [random_graph(rng, size) for size in (2, 4, 8, 16)],
            points=2.0,
        )
        for k in range(6)
    ]


def worked_example(rng) -> list[Case]:
    p = Program()
    a, b, c = p.value(2.0, "a"), p.value(-3.0, "b"), p.value(10.0, "c")
    f = p.apply("square", p.apply("+", p.apply("*", a, b), c))
    p.add("backward", root=f)
    p.shown = "(a * b + c) ** 2  (as (a * b + c) * (a * b + c) when your Value has no **)"
    for name in LEAVES:
        p.read("grad", name, f"gradient of {name}")
    return [Case("lesson-example", "backward", "the worked example of lesson 2", ORDER_HINT, [p])]


# Four times the child's recursion limit (graders/child/runner.py) and twice the 10,000 students
# often raise it to, so a recursive order fails; no deeper, as every grading builds it twice.
CHAIN = 20_000


def deep_chain(rng) -> list[Case]:
    p = Program()
    p.value(round(rng.uniform(0.5, 1.5), 4), "x")
    p.value(0.5, "c")
    # One shared c, not a new constant per link: as deep, with half the nodes to build and visit.
    p.add("chain", into="y", start="x", op="+", operand="c", times=CHAIN)
    p.add("backward", root="y")
    p.shown = f"x + c + c + ... ({CHAIN:,} additions of the same c)"
    p.read("grad", "x", "gradient of x")
    hint = "Python stops at about 1,000 nested calls: build the order with a loop and an explicit stack"
    return [Case("deep-chain", "backward", f"backward() on a chain {CHAIN:,} nodes deep", hint, [p], points=2.0)]


def twice(rng) -> list[Case]:
    p, root = entangled(rng, 6)
    p.add("backward", root=root)
    p.add("backward", root=root)
    read_leaf_grads(p, " after two backward() calls")
    hint = "leaf gradients add up across calls, as in PyTorch; reset the interior nodes' grads before each pass"
    return [Case("backward-twice", "backward", "calling backward() twice", hint, [p], points=2.0)]


def zeroing(rng) -> list[Case]:
    p, root = entangled(rng, 5)
    p.add("backward", root=root)
    p.add("zero_grad", values=list(LEAVES))
    p.add("backward", root=root)
    read_leaf_grads(p, " after zero_grad and a second backward()")
    hint = "zero_grad sets grad to 0.0 on every value it is given"
    return [Case("zero-grad", "backward", "zero_grad([a, b, c]) between two passes", hint, [p])]


STRAYS = 3  # nodes made from the graph that do not feed the root


def topological(rng) -> list[Case]:
    """topological_order(root), judged here against the edges this program sends.

    The child only reports the order it got, as slot names; whether it is an order of this
    graph is decided here. The program also makes nodes from the graph's own nodes that do not
    feed the root, each placed among the graph's steps: the order in which the program builds
    its nodes (or numbers its slots) is then no answer, and only a walk from the root is."""
    p, root = random_expression(rng, 8)
    for _ in range(STRAYS):
        built = [args["into"] for name, args in p.steps if name in ("value", "apply")]
        operand = rng.choice(built[:-1])  # not the root: a node fed by the root would be an output
        at = rng.randint(built.index(operand), len(built) - 2)  # after its operand, before the root
        stray = p.slot()  # named as the graph's nodes are, so no name gives it away
        p.steps.insert(at + 1, ["apply", {"into": stray, "op": rng.choice(OPS), "operands": [operand, operand]}])
    parents = {
        args["into"]: [a for a in args["operands"] if isinstance(a, str)] for name, args in p.steps if name == "apply"
    }
    p.add("topo", into="order", root=root)
    p.read("order", "order", "the order")
    reachable = _reachable(root, parents)

    def valid(got: list, want: list) -> str | None:
        if len(got) != 1 or not isinstance(got[0], list) or not all(isinstance(name, str) for name in got[0]):
            return f"expected one list of nodes, got {plain(got)}"
        order = [name for name in got[0] if name != "?"]  # "?": a node of the engine's own making (a constant)
        if sorted(order) != reachable:
            return f"expected each of the {len(reachable)} nodes under the root exactly once, got {plain(order)}"
        position = {name: i for i, name in enumerate(order)}
        for node in order:
            for parent in parents.get(node, []):
                if position[parent] > position[node]:
                    return f"{parent} is listed after {node}, which it feeds"
        return None if order[-1] == root else "the root must come last"

    hint = "walk from the root through _prev, and append a node only after all of its inputs"
    return [Case("topological-order", "backward", "topological_order(root)", hint, [p], check=valid, points=2.0)]


def _reachable(root: str, parents: dict[str, list[str]]) -> list[str]:
    seen, stack = {root}, [root]
    while stack:
        for parent in parents.get(stack.pop(), []):
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen)


def numerical(rng) -> list[Case]:
    made = []
    for k in range(2):
        inner, _ = entangled(rng, 4)
        body = [s for s in inner.steps if s[0] == "apply"]
        xs = [inner.inputs[name] for name in LEAVES]
        shown = f"numerical_grad(f, [a, b, c], h=0.001) for f = {inner.shown}"
        p = Program(inputs=dict(zip(LEAVES, xs)), shown=shown)
        p.add("numerical_grad", into="slopes", body=body, inputs=list(LEAVES), at=xs, h=1e-3)
        p.read("floats", "slopes", "the three slopes")
        hint = "central differences: (f(x + h) - f(x - h)) / (2h), moving one input at a time"
        # With h = 0.001 a one-sided difference is off by about h/2 * f'' (1e-4 or so), far
        # outside the tolerance, while two correct central differences agree to rounding.
        made.append(Case(f"numerical-grad-{k}", "backward", "numerical_grad", hint, [p], rtol=1e-7, atol=1e-9))
    return made


@cases(worked_example)
def test_worked_example(case, grade):
    grade(case)


@cases(graph_cases)
def test_random_graph_gradients(case, grade):
    grade(case)


@cases(deep_chain)
def test_deep_chain(case, grade):
    grade(case)


@cases(twice)
def test_backward_twice_accumulates(case, grade):
    grade(case)


@cases(zeroing)
def test_zero_grad(case, grade):
    grade(case)


@cases(topological)
def test_topological_order(case, grade):
    grade(case)


@cases(numerical)
def test_numerical_grad(case, grade):
    grade(case)
