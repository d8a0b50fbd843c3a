#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# It installs only what grading needs: Python, bubblewrap (the sandbox) and the `grader` extra
# of the kit (requirements.txt, written by package.py); no nbgrader, no PyTorch. The child that
# runs a student's code runs this same Python (the venv's base) and imports the venv's own NumPy
# (graders/isolation/child_python.py, child_numpy.py), so a grade does not depend on the image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv bubblewrap
# The kit runs on CPython 3.10 (Ubuntu 22.04, Gradescope's usual base image) to 3.13 (CI grades
# under each); an older image's Python is refused here, when the autograder is built, not at
# the first student's grading.
if ! python3 -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2])'; then
  echo "minigrad needs Python >= 3.10 and this image has $(python3 --version 2>&1):" \
    "choose Gradescope's Ubuntu 22.04 or 24.04 base image" >&2
  exit 1
fi
if ! python3 -c 'import sys; sys.exit(not sys.version_info[:2] <= (3, 13))'; then
  echo "warning: $(python3 --version 2>&1) is newer than the kit was tested on (3.10 to 3.13)" >&2
fi
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --no-cache-dir --upgrade pip
/autograder/venv/bin/python -m pip install --no-cache-dir -r /autograder/source/requirements.txt
