"""The checkpoint quiz: is each answer filled in and well formed? The values are graded hidden."""

import math

import pytest

from feedback import Unanswered, fail
from quiz import load_answers

pytestmark = pytest.mark.checkpoint

QUESTIONS, ANSWERS = load_answers()


@pytest.mark.parametrize("name", QUESTIONS)
def test_answer_is_given_and_well_formed(name):
    kind = QUESTIONS[name]
    if name not in ANSWERS:
        fail(
            f"checkpoint {name}",
            {},
            f"an answer ({'a number' if kind == 'number' else 'one of ' + kind})",
            "no answer yet",
            f"replace the two stub lines under the question with `{name} = ...`",
            kind=Unanswered,
        )
    got = ANSWERS[name]
    if kind == "number":
        ok = not isinstance(got, bool) and isinstance(got, (int, float)) and math.isfinite(got)
    else:
        ok = isinstance(got, str) and len(got) == 1 and got in kind
    if not ok:
        fail(
            f"checkpoint {name}",
            {},
            "a finite number" if kind == "number" else f"one letter of {kind}",
            got,
            "numbers as int or float, choices as one capital letter in quotes",
        )
