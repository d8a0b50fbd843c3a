"""The kit's build backend: setuptools', for an editable install from a checkout only.

The grader reads `reference/` (the answers, part 4's digits) and the parts' registry beside
`graders/` in the checkout, and no wheel carries them: a wheel would install a grader that
cannot grade. So building one (`pip install .`, `pip wheel .`) is refused with the command
that works; `pip install -e .` (what every make target runs) is setuptools' own.
"""

from setuptools.build_meta import *  # noqa: F403 - every other hook as setuptools has it

REFUSAL = (
    "minigrad-problem-sets runs from its checkout only (the grader reads reference/ beside graders/): "
    "install it editable, pip install -e '.[grader]', or let make do it"
)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    raise SystemExit(REFUSAL)


def build_sdist(sdist_directory, config_settings=None):  # noqa: ANN001, ANN201
    raise SystemExit(REFUSAL)
