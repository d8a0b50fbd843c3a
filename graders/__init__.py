"""The hidden grader: trusted parent, sandboxed child, scores in Gradescope's format."""
