"""CLI start-up benchmark: how long a ``reelgate`` command takes as a whole process.

    python bench/cli_startup.py            # median of 10 runs each
    python bench/cli_startup.py --runs 20

Two commands, each run as a fresh ``python -m gateway`` process (interpreter start,
imports, parsing, the command's work, exit): ``reelgate --help`` and ``reelgate
tournament list`` on a SQLite database made by ``reelgate db upgrade`` in a temporary
folder.  Prints one table: median and fastest wall-clock seconds, and the goal
(0.2 s for ``--help``, 0.4 s for ``tournament list``).  Runs alternate between the
commands so a busy moment of the machine does not land on one of them only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"reelgate --help": 0.2, "reelgate tournament list": 0.4}


def _reelgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "gateway", *args]


def _timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command (10, max 100)")
    runs = min(max(parser.parse_args().runs, 1), 100)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("REELGATE_DATABASE_URL", None)
    with tempfile.TemporaryDirectory(prefix="reelgate-startup-") as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        subprocess.run(_reelgate("db", "upgrade", "--database", url), cwd=ROOT, env=env,
                       check=True, capture_output=True, timeout=120)  # fmt: skip
        commands = {
            "reelgate --help": _reelgate("--help"),
            "reelgate tournament list": _reelgate("tournament", "list", "--database", url),
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for cmd in commands.values():
            _timed(cmd, env)  # warm the file cache once
        for _ in range(runs):
            for name, cmd in commands.items():
                times[name].append(_timed(cmd, env))
    print(f"{'command':<28} {'median s':>9} {'fastest s':>10} {'goal s':>7}  met")
    for name, got in times.items():
        median = statistics.median(got)
        met = "yes" if median <= GOALS[name] else "no"
        print(f"{name:<28} {median:>9.3f} {min(got):>10.3f} {GOALS[name]:>7.1f}  {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
