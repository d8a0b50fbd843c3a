"""graders/ keeps its roles apart (docs/building.md draws the folders): each folder imports only
from the folders listed before it, no two modules import each other in a circle (imports made
only for type checking count too), and the top level holds only the package's own entry points.
A newcomer reads the folder list and knows which room a change belongs in."""

from __future__ import annotations

import ast
from pathlib import Path

from graders.course_facts.kit import GRADERS

# Lower to higher: a folder may import from itself and from those before it, never after it.
ORDER = [
    "course_facts",
    "reporting",
    "child",
    "uploads",
    "isolation",
    "audit",
    "similarity",
    "grading",
    "suites",
    "gradescope",
    "class_grading",
]
TOP_LEVEL_MODULES = 8  # at most: more, and the folder stops showing its roles at a glance


def module_name(path: Path) -> str:
    parts = path.relative_to(GRADERS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graders_imports(path: Path) -> set[str]:
    """The graders modules `path` imports, by name, wherever the import statement stands."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def the_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in GRADERS.rglob("*.py") if "__pycache__" not in path.parts}
    return {
        name: {other for other in graders_imports(path) if other in modules and other != name}
        for name, path in modules.items()
    }


def folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ORDER) else None


def test_every_folder_is_placed() -> None:
    folders = {path.name for path in GRADERS.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(ORDER), (
        f"place each folder of graders/ in ORDER (and docs/building.md): {folders ^ set(ORDER)}"
    )


def test_no_import_runs_back_up() -> None:
    upward = [
        f"{name} imports {other}"
        for name, imports in the_graph().items()
        for other in imports
        if folder(name) is not None
        and folder(other) is not None
        and ORDER.index(folder(other)) > ORDER.index(folder(name))
    ]
    assert upward == [], "a lower folder imports from a higher one:\n" + "\n".join(sorted(upward))


def test_no_import_cycle() -> None:
    graph = the_graph()
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for other in sorted(graph[name]):
            if cycle := walk(other, [*path, name]):
                return cycle
        done.add(name)
        return None

    cycles = [cycle for name in sorted(graph) if (cycle := walk(name, []))]
    assert cycles == [], "modules import each other in a circle: " + " -> ".join(cycles[0])


def test_the_top_level_stays_small() -> None:
    top = sorted(path.name for path in GRADERS.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, f"graders/ has {len(top)} top-level modules: {top}"
