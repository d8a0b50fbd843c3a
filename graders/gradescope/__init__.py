"""Gradescope's autograder: the zip an instructor uploads, and what it does with each upload.

package.py        builds build/gradescope/autograder.zip (`make gradescope SECRET_FILE=...`)
setup.sh          Gradescope runs it once, when it builds the image: Python, bubblewrap, the grader's needs
run_autograder    Gradescope runs it for every submission: it starts run.py
run.py            grades /autograder/submission officially and writes /autograder/results/results.json
"""
