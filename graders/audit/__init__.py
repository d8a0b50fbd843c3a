"""`make audit`: mutation testing of the course's own suites.

The reference's holes (the regions the release replaces with stubs) are where students write
code, so they are where the suites must catch mistakes. Each mutant is the reference with one
small change in one hole; the public checks and the hidden grader both grade it, and the report
says which mutants each one caught, which survived both, and which the public checks caught but
the hidden grader missed (there must be none: the hidden suite is the stronger one).

    holes.py      which functions have holes, and which lines
    operators.py  the single changes, as a table over Python's own syntax tree
    mutants.py    every mutant of a hole, verified, deduplicated and capped
    grading.py    one submission through the public checks and the hidden grader
    run.py        every mutant graded in a pool, each at three seeds once killed
    report.py     report.md and report.csv
    allowed.py    the committed allow-list of equivalent mutants (equivalent.toml)
"""
