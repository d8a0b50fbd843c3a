"""The audit's gradings kept as JSON (build/audit/results.json), so the report can be written
again (`--report-only`) without grading again: the allow-list grows after a run."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from .grading import PublicRun
from .mutants import Mutant
from .run import Graded, Kill


def dump(graded: list[Graded], settings: dict, path: Path) -> None:
    records = [
        {
            "mutant": {**asdict(g.mutant), "source": ""},  # the diff says the change; the file is the reference's
            "public": asdict(g.public) if g.public else None,
            "hidden": {str(seed): asdict(kill) if kill else None for seed, kill in g.hidden.items()},
            "seconds": g.seconds,
            "error": g.error,
        }
        for g in graded
    ]
    path.write_text(json.dumps({"settings": settings, "graded": records}, indent=1), encoding="utf-8")


def load(path: Path) -> tuple[list[Graded], dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    graded = []
    for record in data["graded"]:
        hidden = {
            int(seed): Kill(kill["part"], kill["lost"], tuple(kill["failed"])) if kill else None
            for seed, kill in record["hidden"].items()
        }
        public = PublicRun(**record["public"]) if record["public"] else None
        graded.append(Graded(Mutant(**record["mutant"]), public, hidden, record["seconds"], record.get("error")))
    return graded, data["settings"]
