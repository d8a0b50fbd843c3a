"""nbgrader's course directory for this repository: everything nbgrader writes stays in
build/nbgrader/, never in `reference/` or `assignments/`.

The student release is made by `make release` (course/release.py, nbgrader's ClearSolutions
and ClearHiddenTests on plain .py files), not by `nbgrader generate_assignment`: that command
copies every other file of its source folder unchanged (so .py solutions would reach the
release) and deletes its release folder when a rerun fails. So nbgrader's source, release,
submitted, autograded and feedback folders, its gradebook and its export all live under
build/nbgrader/, where no command of nbgrader's can touch the committed folders.
`minigrad-class --gradebook` fills the gradebook; `nbgrader export` then reads it.
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

COURSE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build", "nbgrader")
os.makedirs(COURSE, exist_ok=True)  # SQLite makes the gradebook file, not its folder

c.CourseDirectory.root = COURSE
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE, "gradebook.db")
c.CsvExportPlugin.to = os.path.join(COURSE, "grades.csv")
c.ClearSolutions.enforce_metadata = False
c.ClearHiddenTests.enforce_metadata = False
