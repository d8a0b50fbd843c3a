"""build/audit/report.md and report.csv: what the suites caught, function by function.

A mutant counts as killed by the hidden grader when it loses points at the first seed; the
seed table then lists every mutant whose verdict or points lost differ at the other seeds.
Allow-listed (equivalent) mutants are left out of every count but their own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .allowed import Equivalent
from .grading import hidden_parts
from .run import Graded

TARGET = 0.95  # the share of non-equivalent mutants the hidden grader must kill


@dataclass(frozen=True)
class Settings:
    seeds: list[int]
    jobs: int
    cap: int | None
    capped: dict[str, int]  # "function (file)" -> mutants made before the cap
    seconds: float  # wall time of the grading
    cpu: float  # CPU seconds the gradings used (user and system, every subprocess)


@dataclass
class Tally:
    made: int = 0
    equivalent: int = 0
    public: int = 0
    hidden: int = 0
    survivors: int = 0
    public_only: int = 0
    seed_flagged: int = 0
    not_graded: int = 0

    @property
    def counted(self) -> int:
        return self.made - self.equivalent - self.not_graded

    @property
    def share(self) -> float:
        return self.hidden / self.counted if self.counted else 1.0

    def add(self, graded: Graded, audit: Audit) -> None:
        self.made += 1
        if graded.mutant.id in audit.allowed:
            self.equivalent += 1
            return
        if graded.error:
            self.not_graded += 1
            return
        self.public += graded.killed_by_public
        self.hidden += audit.killed(graded)
        self.survivors += not audit.killed(graded)
        self.public_only += graded in audit.public_only
        self.seed_flagged += graded in audit.seed_flagged


class Audit:
    """The gradings with the allow-list applied, and every list the report shows."""

    def __init__(self, graded: list[Graded], allowed: dict[str, Equivalent], settings: Settings):
        self.graded, self.allowed, self.settings = graded, allowed, settings
        self.main_seed = settings.seeds[0]
        ids = {g.mutant.id for g in graded}
        self.not_graded = [g for g in graded if g.error]
        done = [g for g in graded if not g.error]
        self.public_only = [g for g in done if g.killed_by_public and not self.killed(g)]
        self.survivors = [g for g in done if not self.killed(g) and g.mutant.id not in allowed]
        self.seed_flagged = [g for g in done if len({_verdict(g.hidden[s]) for s in settings.seeds}) > 1]
        self.stale = [e for e in allowed.values() if e.id not in ids]
        self.not_equivalent = [g for g in graded if g.mutant.id in allowed and self.killed(g)]

    def killed(self, graded: Graded) -> bool:
        return graded.killed_by_hidden(self.main_seed)

    def tally(self, graded: Iterable[Graded]) -> Tally:
        tally = Tally()
        for g in graded:
            tally.add(g, self)
        return tally

    def by_function(self) -> dict[tuple[str, str], list[Graded]]:
        groups: dict[tuple[str, str], list[Graded]] = {}
        for g in self.graded:
            groups.setdefault((g.mutant.file, g.mutant.function), []).append(g)
        return groups

    def passes(self) -> bool:
        """The targets: every mutant graded, no public-only mutant, and the hidden grader kills
        enough of the rest."""
        return not self.not_graded and not self.public_only and self.tally(self.graded).share >= TARGET


def _verdict(kill) -> tuple:
    return ("survived",) if kill is None else ("killed", kill.part, kill.lost)


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def markdown(audit: Audit) -> str:
    total, s = audit.tally(audit.graded), audit.settings
    lines = [
        "# make audit: mutation testing of the course's suites",
        "",
        f"{len(audit.graded)} mutants of the reference's holes, graded with {s.jobs} jobs at seeds "
        f"{', '.join(map(str, s.seeds))} in {s.seconds:.0f} s ({s.cpu:.0f} CPU seconds: "
        f"{s.cpu / max(s.jobs, 1):.0f} s on {s.jobs} idle cores).",
        "",
        "| mutants | equivalent | counted | killed by public | killed by hidden | survivors "
        "| public-only | seed-flagged |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {total.made} | {total.equivalent} | {total.counted} | {total.public} "
        f"| {total.hidden} ({_percent(total.share)}) | {total.survivors} | {total.public_only} "
        f"| {total.seed_flagged} |",
        "",
        f"Target: the hidden grader kills at least {_percent(TARGET)} of the counted mutants "
        f"({'met' if total.share >= TARGET else 'NOT met'}), and no mutant is killed by the public checks "
        f"only ({'met' if not audit.public_only else 'NOT met'}).",
    ]
    if s.capped:
        lines += [
            "",
            f"Capped at {s.cap} mutants per function (a stable sample, the lowest ids): "
            + ", ".join(f"`{f}`: {n} made" for f, n in sorted(s.capped.items()))
            + ".",
        ]
    lines += ["", "## By operator", "", "| operator | mutants | killed by hidden | survivors |", "|---|---:|---:|---:|"]
    operators = sorted({g.mutant.operator for g in audit.graded})
    for operator in operators:
        t = audit.tally(g for g in audit.graded if g.mutant.operator == operator)
        lines.append(f"| {operator} | {t.made} | {t.hidden} ({_percent(t.share)}) | {t.survivors} |")
    lines += [
        "",
        "## By function",
        "",
        "| file | function | hidden parts | mutants | equivalent | killed by public | killed by hidden "
        "| survivors | public-only | seed-flagged |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (file, function), group in audit.by_function().items():
        t = audit.tally(group)
        lines.append(
            f"| {file} | `{function}` | {', '.join(hidden_parts(file))} | {t.made} | {t.equivalent} | {t.public} "
            f"| {t.hidden} ({_percent(t.share)}) | {t.survivors} | {t.public_only} | {t.seed_flagged} |"
        )
    lines += _mutant_list("Killed by public, missed by hidden (must be empty)", audit.public_only, audit)
    lines += _mutant_list("Survivors (killed by neither the hidden grader nor the allow-list)", audit.survivors, audit)
    lines += _seed_table(audit)
    lines += _allow_list_problems(audit)
    if audit.not_graded:
        lines += ["", "## Not graded (a grading failed: the audit is incomplete until they are)", ""]
        lines += [f"- `{g.mutant.id}` (`{g.mutant.function}`): `{g.error}`" for g in audit.not_graded]
    return "\n".join(lines) + "\n"


def _mutant_list(title: str, graded: list[Graded], audit: Audit) -> list[str]:
    lines = ["", f"## {title}", ""]
    if not graded:
        return [*lines, "None."]
    for g in graded:
        m = g.mutant
        public = f"public checks fail in {g.public.part} ({g.public.summary})" if g.public else "public checks pass"
        lines += [f"### `{m.function}` ({m.file}:{m.line}, {m.operator}, id `{m.id}`): {public}", "", "```diff"]
        lines += [m.diff.rstrip("\n"), "```", ""]
    return lines


def _seed_table(audit: Audit) -> list[str]:
    seeds = audit.settings.seeds
    lines = ["", "## Seed sensitivity", ""]
    lines.append(
        f"Each mutant is graded at seeds {', '.join(map(str, seeds))}; listed: those whose verdict, or "
        "points lost, change with the seed."
    )
    if not audit.seed_flagged:
        return [*lines, "", "None."]
    escapes = [g for g in audit.seed_flagged if None in g.hidden.values()]
    lines += [
        "",
        f"{len(escapes)} of them survive at some seed and die at another: at those seeds a student with this "
        "mistake loses nothing. The others lose points at every seed, but not the same.",
        "",
        "| function | id | change | " + " | ".join(f"seed {s}" for s in seeds) + " |",
        "|---|---|---|" + "---|" * len(seeds),
    ]
    for g in sorted(audit.seed_flagged, key=lambda g: g not in escapes):
        cells = [("survived" if (k := g.hidden[s]) is None else f"{k.part} -{k.lost:g}") for s in seeds]
        change = " / ".join(g.mutant.changed).replace("|", "\\|")
        lines.append(f"| `{g.mutant.function}` | `{g.mutant.id}` | `{change}` | " + " | ".join(cells) + " |")
    return lines


def _allow_list_problems(audit: Audit) -> list[str]:
    lines = []
    if audit.stale:
        lines += ["", "## Allow-list entries that match no mutant (remove them)", ""]
        lines += [f"- `{e.id}` (`{e.function}`)" for e in audit.stale]
    if audit.not_equivalent:
        lines += ["", "## Allow-listed mutants the hidden grader killed (not equivalent: remove them)", ""]
        lines += [f"- `{g.mutant.id}` (`{g.mutant.function}`)" for g in audit.not_equivalent]
    return lines


def function_csv(audit: Audit) -> str:
    """One row per function: what report.md's table says, as numbers."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "file",
            "function",
            "mutants",
            "equivalent",
            "killed_by_public",
            "killed_by_hidden",
            "survivors",
            "public_only",
            "seed_flagged",
            "survivor_ids",
        ]
    )
    for (file, function), group in audit.by_function().items():
        t = audit.tally(group)
        survivors = " ".join(g.mutant.id for g in group if g in audit.survivors)
        writer.writerow(
            [
                file,
                function,
                t.made,
                t.equivalent,
                t.public,
                t.hidden,
                t.survivors,
                t.public_only,
                t.seed_flagged,
                survivors,
            ]
        )
    return out.getvalue()


def mutant_csv(audit: Audit) -> str:
    """One row per mutant: its verdicts, with the diff's changed lines."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    seeds = audit.settings.seeds
    hidden_columns = [f"hidden_seed_{s}" for s in seeds]
    writer.writerow(
        [
            "id",
            "file",
            "function",
            "operator",
            "line",
            "equivalent",
            "public_part",
            *hidden_columns,
            "seconds",
            "change",
        ]
    )
    for g in audit.graded:
        m = g.mutant
        hidden = ["" if (k := g.hidden.get(s)) is None else f"{k.part} -{k.lost:g}" for s in seeds]
        writer.writerow(
            [
                m.id,
                m.file,
                m.function,
                m.operator,
                m.line,
                m.id in audit.allowed,
                g.public.part if g.public else "",
                *hidden,
                f"{g.seconds:.2f}",
                "\n".join(m.changed),
            ]
        )
    return out.getvalue()


def write(audit: Audit, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(markdown(audit), encoding="utf-8")
    (out / "report.csv").write_text(function_csv(audit), encoding="utf-8")
    (out / "mutants.csv").write_text(mutant_csv(audit), encoding="utf-8")
