"""The child's one way to NumPy, shared by the runner and the self-test probe, so the probe
proves exactly the imports the runner will allow."""

import importlib.machinery
import sys


class NumPyOnly:
    """Finds the top-level `numpy` package in the folder the parent named, and nothing else
    there: the child gets the standard library plus NumPy, not every package installed beside it."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if path is None and name == "numpy":
            return importlib.machinery.PathFinder.find_spec(name, [self.folder])
        return None


def allow(argv: list[str]) -> None:
    """Make NumPy importable from the folder the parent passed as the child's one argument, if any."""
    if len(argv) > 1:
        sys.meta_path.append(NumPyOnly(argv[1]))
