"""Instructor tooling: turning `reference/` into the student release in `assignments/`."""
