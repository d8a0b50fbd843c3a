"""Gradescope's `submission_metadata.yml`, read under a budget.

Gradescope's "Export Submissions" maps each `submission_NNN` folder to its submitters and
times, written by Ruby's YAML (symbols as keys: `:submitters:`, `:sid:`, `:created_at:`; see
Gradescope's help page "Exporting submissions"). The file travels with the download, so it is
read as untrusted text: at most MAX_BYTES, by PyYAML's BaseLoader (every value stays a string,
so no YAML timestamp, integer or float is converted: a `:created_at:` in the month 13 or a
5,000-digit `:sid:` raised inside PyYAML's constructors and stopped the class), without
aliases (ten aliases of ten aliases, seven deep, took 15 s to turn into text) and at most
MAX_DEPTH deep (5,000 nested `[` ran out of stack). Times are parsed by moments.when.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from graders.uploads import intake

MAX_BYTES = 4 * 1024 * 1024  # a few hundred bytes per submission: a course of 10,000 fits
MAX_DEPTH = 8  # the export nests 4 deep: folder, entry, submitters, submitter


class _Loader(yaml.BaseLoader):
    """BaseLoader (strings, lists and mappings only) that refuses aliases and deep nesting
    while composing, before anything is built."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("an alias (&/*): Gradescope writes none")
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nested over {MAX_DEPTH} deep: Gradescope's export nests 4")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def load(path: Path) -> dict[str, dict]:
    """Each submission folder's entry (a mapping; anything else is an empty entry). SystemExit
    with the reason when the file is missing, too large or no YAML: the whole export is unusable."""
    data = intake.read_head(path, MAX_BYTES + 1)
    if data is None:
        raise SystemExit(f"{path}: cannot be read (missing, a link, or not a regular file)")
    if len(data) > MAX_BYTES:
        raise SystemExit(f"{path}: over {MAX_BYTES // 1024**2} MiB, more than any export holds")
    try:
        metadata = yaml.load(data.decode("utf-8"), Loader=_Loader)  # noqa: S506 (BaseLoader builds only strings, lists, dicts)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SystemExit(f"{path}: cannot be read ({exc})") from None
    if not isinstance(metadata, dict):
        return {}
    return {str(folder): entry if isinstance(entry, dict) else {} for folder, entry in metadata.items()}


def submitters(entry: dict, limit: int) -> list[dict[str, str]]:
    """The entry's submitters (at most `limit`), each with only its string fields."""
    listed = entry.get(":submitters")
    people = listed[:limit] if isinstance(listed, list) else []
    return [{k: v for k, v in person.items() if isinstance(v, str)} for person in people if isinstance(person, dict)]
