import sys

from graders.cli import main

sys.exit(main())
