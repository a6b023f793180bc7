"""CLI start-up benchmark: how long a desk's ``reelgate`` read takes as a whole process.

    python bench/cli_startup.py            # median of 10 runs each
    python bench/cli_startup.py --runs 20

Each command runs as a fresh ``python -m gateway`` process (interpreter start, imports,
parsing, the command's work, exit), side by side with ``reelgate --help``:

* on the gateway host, straight to the database: ``tournament list``, ``tournament
  standings``, ``heat list``, ``players list``;
* at a desk with no database, the same reads over ``--server`` from ``reelgate api``
  (a token in ``$REELGATE_TOKEN``), as issue 31 asks of a desk.

The database (SQLite in a temporary folder) is made with the CLI itself: a director and
a token, bank A with one machine, tournament Ridge with a heat tomorrow and 20 players
each with an entry.  Our modules are byte-compiled first (as ``pip install`` does for an
installed gateway), since an environment with ``PYTHONDONTWRITEBYTECODE`` would compile
every module on every start.  Runs alternate between the commands so a busy moment of
the machine does not land on one of them only.  Prints one table: median and fastest
wall-clock seconds, the median CPU seconds (user + system: what the command costs
whatever else the machine does), and the goal (0.3 s for a desk read, issue 31); the
load average is printed first, since wall times on a loaded 2-core host are not an idle
machine's.
"""

from __future__ import annotations

import argparse
import compileall
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gateway", "storage", "protocols", "emulators")
GOAL_S = 0.3
PLAYERS = 20
PASSWORD = "correct horse battery staple"


def _reelgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "gateway", *args]


def _run(cmd: list[str], env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(cmd, cwd=ROOT, env=env, input=stdin, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[2:])} failed: {done.stderr.strip()}")
    return done.stdout


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[2:])} failed: {err.strip()}")
    return wall, usage.ru_utime + usage.ru_stime


def _prepare(url: str, env: dict[str, str]) -> str:
    """The night's data, made with the CLI; the director's token."""
    _run(_reelgate("db", "init", "--database", url), env)
    _run(_reelgate("users", "add", "dana", "--role", "director", "--password-stdin",
                   "--database", url), env, stdin=PASSWORD + "\n")  # fmt: skip
    token = _run(_reelgate("tokens", "create", "--user", "dana", "--expires", "1", "--label",
                           "bench", "--json", "--database", url), env)  # fmt: skip
    _run(_reelgate("bank", "add-machine", "A", "A01", "--endpoint",
                   "sas+tcp://127.0.0.1:7001?address=1", "--database", url), env)  # fmt: skip
    _run(_reelgate("tournament", "create", "Ridge", "--validity", "48h", "--database", url), env)
    tomorrow = datetime.now(ZoneInfo("Africa/Johannesburg")) + timedelta(days=1)
    _run(_reelgate("heat", "schedule", "-t", "Ridge", "--start",
                   tomorrow.strftime("%Y-%m-%d 18:00"), "--bank", "A", "--database", url),
         env)  # fmt: skip
    for i in range(PLAYERS):
        id_number = f"80010150{i:05d}"
        _run(_reelgate("players", "add", "--id-number", id_number, "--name", f"Player {i}",
                       "--dob", "1980-01-01", "--database", url), env)  # fmt: skip
        _run(_reelgate("entries", "sell", id_number, "-t", "Ridge", "--database", url), env)
    import json

    return str(json.loads(token)["token"])


class Api:
    """``reelgate api`` on loopback for the desk reads."""

    def __init__(self, url: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            _reelgate("api", "--http", "127.0.0.1:0", "--database", url), cwd=ROOT, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        lines: queue.Queue[str] = queue.Queue()
        out = self.proc.stdout
        assert out is not None

        def pump() -> None:  # ends when the process closes its output
            for line in out:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        first = lines.get(timeout=60)
        if not first.startswith("api on "):
            raise SystemExit(f"reelgate api said: {first}")
        self.url = first.split()[-1]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs per command (10, max 100)")
    runs = min(max(parser.parse_args().runs, 1), 100)
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("REELGATE_DATABASE_URL", None)
    with tempfile.TemporaryDirectory(prefix="reelgate-startup-") as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        token = _prepare(url, env)
        api = Api(url, env)
        try:
            desk = {**env, "REELGATE_TOKEN": token}
            reads = {
                "tournament list": ("tournament", "list"),
                "tournament standings": ("tournament", "standings", "Ridge"),
                "heat list": ("heat", "list", "-t", "Ridge"),
                "players list": ("players", "list"),
            }
            commands: dict[str, tuple[list[str], dict[str, str]]] = {
                "--help": (_reelgate("--help"), env)
            }
            for name, argv in reads.items():
                commands[f"host: {name}"] = (_reelgate(*argv, "--database", url), env)
            for name, argv in reads.items():
                commands[f"desk: {name}"] = (_reelgate(*argv, "--server", api.url), desk)
            for cmd, where in commands.values():
                _timed(cmd, where)  # warm the file cache once
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
            load = os.getloadavg()[0]
            for _ in range(runs):
                for name, (cmd, where) in commands.items():
                    times[name].append(_timed(cmd, where))
        finally:
            api.close()
    print(f"load average (1 min) at the start: {load:.2f} on {os.cpu_count()} cores; {runs} runs")
    print(f"{'command':<28} {'median s':>9} {'fastest s':>10} {'CPU s':>7} {'goal s':>7}  met")
    for name, got in times.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        goal = f"{GOAL_S:>7.1f}" if name != "--help" else f"{'':>7}"
        met = ("yes" if wall <= GOAL_S else "no") if name != "--help" else ""
        print(f"{name:<28} {wall:>9.3f} {min(w for w, _ in got):>10.3f} {cpu:>7.3f} {goal}  {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
