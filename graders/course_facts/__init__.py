"""The course's facts the grader depends on: where the kit's pieces are, the parts, the seed,
and the kit's version as a grade depends on it."""
