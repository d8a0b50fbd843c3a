"""Hidden suite, the checkpoint quiz: each answer, without ever showing the right one."""

from graders.course_facts.kit import reference_module
from graders.grading.cases import Case, Program, cases

POINTS = 1.0
# Where each question's idea is taught, and the step a wrong answer most often skips: the hint
# must lead back to the method without giving the number or the letter away.
HINTS = {
    "Q1_DF_DA": "chain rule through each node (lessons/01-value.md, 'Worked example: backpropagation by hand'): "
    "the derivative of u**2 is 2u, times du/da",
    "Q2_DF_DB": "chain rule through each node (lessons/01-value.md, 'Worked example: backpropagation by hand'): "
    "the derivative of u**2 is 2u, times du/db",
    "Q3_DZ_DX": "x reaches z along two paths: add what each path gives (lessons/02-backward.md, 'A node used twice')",
    "Q4_GRAD_AFTER_TWO_BACKWARDS": "leaf gradients accumulate over backward() calls "
    "(lessons/02-backward.md, 'What backward() does')",
    "Q5_DO_DN": "tanh's local derivative is written with its output (lessons/01-value.md, "
    "'The local derivatives you need')",
    "Q6_SIGMOID_SLOPE_AT_0": "sigmoid's local derivative is written with its output s "
    "(lessons/01-value.md, 'The local derivatives you need')",
    "Q7_WHY_PLUS_EQUALS": "reread lessons/01-value.md, 'Why += and not =', then trace z = x*y + x by hand",
    "Q8_BACKWARD_ORDER": "reread lessons/02-backward.md, 'The order matters', then run backward() by hand on a "
    "small graph in the order your answer gives",
    "Q9_FORGOT_ZERO_GRAD": "reread lessons/02-backward.md, 'zero_grad', and lessons/03-mlp.md, "
    "'SGD and the training loop'",
    "Q10_BIAS_GRAD": "a broadcast input's gradient is summed over the axes it was stretched along "
    "(lessons/04-tensor.md, 'Broadcasting, and why its gradient is a sum')",
    "Q11_SUBTRACT_THE_MAX": "reread lessons/04-tensor.md, 'Softmax cross-entropy', then try each option on "
    "logits like [1000, 999]",
    "Q12_MOMENTUM_STEP": "the buffer is the gradient on the first step, then momentum * buf + g "
    "(lessons/04-tensor.md, 'SGD with momentum and weight decay')",
}


def answer_cases(rng) -> list[Case]:
    questions = reference_module("checkpoint").QUESTIONS
    made = []
    for name in questions:
        p = Program(shown=f"minigrad/checkpoint.py: {name}")
        p.add("answers", names=[name])
        p.read("answer", name, "your answer")
        made.append(
            Case(name, "checkpoint", f"checkpoint {name}", HINTS[name], [p], points=POINTS, secret=True, rtol=1e-3)
        )
    return made


@cases(answer_cases)
def test_answer(case, grade):
    grade(case)
