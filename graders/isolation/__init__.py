"""What stands between a submission's code and everything else: the sandbox a child runs in
(sandbox.py), the uid and cgroup of one grading (identity.py, cgroup.py, processes.py), and
the proof, before any grading, that the chosen level hides what it must and that its child
can import what the course promises (selftest.py, child_numpy.py, preflight.py)."""
