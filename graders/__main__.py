import sys

from graders.grading.grade_cli import main

sys.exit(main())
