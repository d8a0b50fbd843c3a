"""The repository root is an nbgrader course directory.

`reference/` holds the solutions (nbgrader's "source"), `assignments/` the generated student
release. Release generation itself runs through `make release` (course/release.py), which
applies nbgrader's ClearSolutions and ClearHiddenTests to plain .py files.
"""

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "reference"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.ClearSolutions.enforce_metadata = False
c.ClearHiddenTests.enforce_metadata = False
