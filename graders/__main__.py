import sys

from graders.grade_cli import main

sys.exit(main())
