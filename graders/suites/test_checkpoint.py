"""Hidden suite, the checkpoint quiz: each answer, without ever showing the right one."""

from graders.cases import Case, Program, cases
from graders.harness import reference_module

POINTS = 1.0


def answer_cases(rng) -> list[Case]:
    questions = reference_module("checkpoint").QUESTIONS
    made = []
    for name, kind in questions.items():
        p = Program(shown=f"minigrad/checkpoint.py: {name}")
        p.add("answers", names=[name])
        p.read("answer", name, "your answer")
        hint = "work it through by hand with the lesson's method" if kind == "number" else "reread the lesson's section"
        made.append(Case(name, "checkpoint", f"checkpoint {name}", hint, [p], points=POINTS, secret=True, rtol=1e-3))
    return made


@cases(answer_cases)
def test_answer(case, grade):
    grade(case)
