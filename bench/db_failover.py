"""The database host dies: primary killed → the gateway writing again on the promoted
replica (issue 29 no. 4).

Each trial starts its own PostgreSQL primary with a synchronous streaming replica on
loopback (``bench/pg_cluster.py``), opens one engine on a URL naming both hosts (as
``reelgate serve --database`` would, ``storage/pg_hosts.py``) and runs the gateway's
journal writer (``gateway/heats/spool.py``, its production retry interval) writing a
journal row every 50 ms, as a heat does.  The primary is SIGKILLed (every process, as a
host dying) and the replica promoted at once with ``pg_ctl promote -w``.  Measured:

* ``kill → promoted``: PostgreSQL's part, with the promotion started at the kill (an
  operator, or Patroni after its leader key expires, starts it later: add that);
* ``promoted → writing``: Reelgate's own part: the promoted server accepts writes until
  the writer's spool is replayed onto it (the engine finds the new primary by itself);
* ``kill → writing``: the whole gap, during which the spool carried every write.

And per trial: journal rows lost or doubled (each write is numbered; all must be there
once).  Goal: kill → writing under 10 s, Reelgate's part under 2 s.

    python bench/db_failover.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a fresh clone
sys.path.insert(0, str(ROOT / "bench"))

import pg_cluster  # noqa: E402
from sqlalchemy import text  # noqa: E402

import storage.models  # noqa: E402, F401
from gateway.app.database import resolve  # noqa: E402
from gateway.heats.spool import JournalWriter  # noqa: E402
from storage.db import Base, make_engine, make_sessionmaker  # noqa: E402
from storage.journal import Journal, RunState  # noqa: E402
from storage.journal_ops import StepOp  # noqa: E402

BOUND_S = 120.0
CADENCE_S = 0.05


@dataclass
class Trial:
    kill_to_promoted_s: float
    promoted_to_writing_s: float
    kill_to_writing_s: float
    spooled: int
    lost: int
    doubled: int


async def _until(check: object, what: str) -> float:
    deadline = time.monotonic() + BOUND_S
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise RuntimeError(f"not {what} within {BOUND_S:g} s")
        await asyncio.sleep(0.005)
    return time.monotonic()


async def trial(spool_dir: Path) -> Trial:
    with pg_cluster.PgCluster() as cluster:
        url = resolve(cluster.url())
        engine = make_engine(url)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(Base.metadata.create_all)
            journal = Journal(make_sessionmaker(engine))
            machines = [f"M{i:03d}" for i in range(1, 11)]
            run_id = await journal.create_run("A", machines, credits=300, seconds=60)
            writer = JournalWriter(journal, spool_dir / f"spool-{run_id}-{time.time_ns()}")
            written: list[str] = []
            stop = asyncio.Event()

            async def gateway() -> None:  # a heat's steady journal writes
                n = 0
                while not stop.is_set():
                    n += 1
                    # alternate states: a replayed step is recognised by its state
                    state = RunState.PAUSED if n % 2 else RunState.RUNNING
                    await writer.write(StepOp(run_id, state, note=f"w{n}"))
                    written.append(f"w{n}")
                    await asyncio.sleep(CADENCE_S)

            task = asyncio.create_task(gateway())
            await asyncio.sleep(0.5)
            killed = time.monotonic()
            await asyncio.to_thread(cluster.kill_primary)
            await asyncio.to_thread(cluster.promote)
            promoted = time.monotonic()
            await _until(lambda: writer.spooled_total > 0, "spooling")
            writing = await _until(lambda: not writer.pending, "writing again")
            await asyncio.sleep(0.3)  # a few writes straight onto the new primary
            stop.set()
            await task
            assert await writer.drain(BOUND_S)
            await writer.close()
            async with engine.connect() as conn:
                port = await conn.scalar(text("SELECT inet_server_port()"))
            notes = [n for _, _, n in await journal.steps(run_id) if n.startswith("w")]
            if port != cluster.replica.port:
                raise RuntimeError(f"writing to port {port}, not the promoted replica")
            return Trial(
                kill_to_promoted_s=promoted - killed,
                promoted_to_writing_s=max(0.0, writing - promoted),
                kill_to_writing_s=writing - killed,
                spooled=writer.spooled_total,
                lost=len(set(written) - set(notes)),
                doubled=len(notes) - len(set(notes)),
            )
        finally:
            await engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    reason = pg_cluster.missing_reason()
    if reason:
        print(f"cannot run: {reason}")
        return 2
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            t = asyncio.run(trial(Path(tmp)))
            trials.append(t)
            print(f"run {i + 1}: promoted {t.kill_to_promoted_s:.2f} s, writing "
                  f"{t.kill_to_writing_s:.2f} s ({t.spooled} spooled, lost {t.lost}, "
                  f"doubled {t.doubled})", flush=True)  # fmt: skip
    print(f"\ndatabase failover, {len(trials)} runs, PostgreSQL primary + synchronous replica")
    print(f"{'measure':<34}{'median':>10}{'max':>10}")
    for name, attr in (
        ("kill → promoted (PostgreSQL)", "kill_to_promoted_s"),
        ("promoted → writing (Reelgate)", "promoted_to_writing_s"),
        ("kill → writing (whole gap)", "kill_to_writing_s"),
    ):
        values = [getattr(t, attr) for t in trials]
        print(f"{name:<34}{statistics.median(values):>9.2f}s{max(values):>9.2f}s")
    lost, doubled = sum(t.lost for t in trials), sum(t.doubled for t in trials)
    print(f"{'journal writes lost / doubled':<34}{lost:>10}{doubled:>10}")
    whole = statistics.median(t.kill_to_writing_s for t in trials)
    ours = statistics.median(t.promoted_to_writing_s for t in trials)
    ok = whole < 10 and ours < 2 and lost == doubled == 0
    print(f"goal (kill → writing < 10 s, Reelgate's part < 2 s, none lost): "
          f"{'met' if ok else 'NOT met'}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
