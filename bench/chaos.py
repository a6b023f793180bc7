"""Our own chaos suite: heats SIGKILLed at every floor step, with faults, then checked.

    python bench/chaos.py                   # 100 heats, seed 1
    python bench/chaos.py --heats 20 --seed 7 --database postgresql://postgres@127.0.0.1/test

Test heats (``reelgate heat run``) and scheduled tournament heats (``bench/chaos_worker.py``)
alternate over every kill point (arm, unlock, mid-play, end lock, meter reads, tournament
exit, release), with link cuts, machines silent for 3 s, corrupted CRCs and bit flips on
one machine, and some recoveries killed too (:mod:`bench.chaos_harness`).  After each
heat the invariants are checked on the database (:mod:`bench.chaos_checks`).  Prints the
totals and a per-kill-point breakdown; every heat with a finding is listed with its
scenario and seed, so it can be played again.  Goal: 0 in every loss column.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("chaos_harness", ROOT / "bench" / "chaos_harness.py")
assert _spec is not None
assert _spec.loader is not None
harness = importlib.util.module_from_spec(_spec)
sys.modules["chaos_harness"] = harness
_spec.loader.exec_module(harness)

COLUMNS = ("heats", "kills", "recoveries", "lost", "doubled", "wrong", "replayed", "stuck",
           "unsettled", "pending", "audit", "malfunctioned", "control s")  # fmt: skip


def _row(label: str, reports: list[Any]) -> list[str]:
    f = [r.findings for r in reports]
    control = [t for r in reports for t in r.in_control_s]
    median = f"{statistics.median(control):.3f}" if control else "-"
    counts = [
        len(reports),
        sum(r.killed for r in reports),
        sum(r.recoveries for r in reports),
        sum(x.lost for x in f),
        sum(x.doubled for x in f),
        sum(x.wrong for x in f),
        sum(x.replayed for x in f),
        sum(x.stuck for x in f),
        sum(x.unsettled for x in f),
        sum(x.pending for x in f),
        sum(x.audit_broken for x in f),
        sum(x.malfunctions for x in f),
    ]
    return [label, *(str(c) for c in counts), median]


def _table(rows: list[list[str]]) -> str:
    head = ["", *COLUMNS]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = [" ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                      enumerate(zip(r, widths, strict=True))) for r in [head, *rows]]  # fmt: skip
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def report(reports: list[Any]) -> str:
    by_kill: dict[str, list[Any]] = defaultdict(list)
    by_fault: dict[str, list[Any]] = defaultdict(list)
    for r in reports:
        by_kill[f"{r.scenario.kill}"].append(r)
        by_fault[f"fault {r.scenario.fault}"].append(r)
    rows = [_row("all", reports)]
    rows += [_row(k, by_kill[k]) for k in harness.KILL_POINTS if k in by_kill]
    rows += [_row(k, v) for k, v in sorted(by_fault.items())]
    rows += [_row(k, [r for r in reports if r.scenario.kind == k]) for k in harness.KINDS]
    out = [_table(rows)]
    bad = [r for r in reports if r.findings.losses() or r.findings.problems]
    for r in bad:
        out.append(f"\n{r.scenario.label()} seed {r.scenario.seed}: {r.findings.final_state}")
        out += [f"  {p}" for p in r.findings.problems]
        out += [f"  | {line}" for line in r.log[-6:]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heats", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", help="PostgreSQL server URL (default: a SQLite file)")
    args = parser.parse_args(argv)
    from gateway.records.chain import throwaway_keys  # the repo root is on the path now

    throwaway_keys()  # no key configured: this run's own, for its workers too
    reports = []
    with (
        tempfile.TemporaryDirectory(prefix="chaos") as tmp,
        harness.Chaos(Path(tmp), database=args.database) as chaos,
    ):
        for i, scenario in enumerate(harness.scenarios(args.heats, args.seed), start=1):
            r = chaos.run(scenario)
            reports.append(r)
            verdict = "ok" if not r.findings.losses() else "FINDING"
            print(f"[{i}/{args.heats}] {scenario.label()}: {r.findings.final_state}, "
                      f"{r.seconds:.1f}s, {verdict}", flush=True)  # fmt: skip
            for problem in r.findings.problems:
                print(f"    {problem}", flush=True)
    print()
    print(f"chaos: {args.heats} heats, seed {args.seed}")
    print(report(reports))
    return 1 if any(r.findings.losses() for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
