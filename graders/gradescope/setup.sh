#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
# It installs only what grading needs: Python, bubblewrap (the sandbox) and the `grader` extra
# of the kit (requirements.txt, written by package.py); no nbgrader, no PyTorch. python3-numpy is
# the NumPy a student's engine may import inside the sandbox, where the venv is not on its path.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-numpy bubblewrap
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --no-cache-dir --upgrade pip
/autograder/venv/bin/python -m pip install --no-cache-dir -r /autograder/source/requirements.txt
