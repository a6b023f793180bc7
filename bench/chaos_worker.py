"""One scheduled tournament heat in its own process, for the chaos suite to kill.

Opens the gateway as ``reelgate serve`` would (:class:`gateway.app.context.GatewayContext`),
asks the tournament bridge which machines are seated (T11, T16, T22), and drives the heat
with :meth:`gateway.heats.runner.HeatRunner.run_new` and the default tournament bridge,
exactly as the scheduler starts a due heat.  Every journal step and every floor command
is printed to stderr *as it happens* — ``state STATE`` once the step is journaled,
``floor OP MACHINE`` just before the command leaves — so the parent
(:mod:`bench.chaos_harness`) can SIGKILL this process at a chosen floor step::

    python bench/chaos_worker.py --database URL --floor FLOOR --spool DIR --heat ID

Exit status: 0 closed, 1 any other end, 3 the heat was not due (nothing touched).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a fresh clone

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatRunner
from gateway.heats.scheduler import DUE
from gateway.machines.links import MachineLink
from gateway.tournament.bridge import TournamentBridge
from storage.journal import RunState
from storage.tournament import Heat

# Driver calls worth a kill: arming (identity, lock, enter), the start's and the
# release's unlock, live and cross-check credit reads, the end's lock, meter reads
# (LP 95-99 on native machines, else credits and meters), the exit.
TRACED = ("identity", "lock", "enter_tournament", "unlock", "credits", "tournament_meters",
          "heat_score", "exit_tournament")  # fmt: skip
PREPARED = {"prepare_unlock": "unlock", "prepare_lock": "lock"}


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _traced(name: str, machine_id: str, op: Callable[..., Awaitable[Any]]) -> Any:
    async def call(*args: Any) -> Any:
        say(f"floor {name} {machine_id}")
        return await op(*args)

    return call


def _traced_prepare(name: str, machine_id: str, prepare: Callable[[], Any]) -> Any:
    def prepared() -> Any:
        trigger = prepare()

        def fire() -> Any:
            say(f"floor {name} {machine_id}")
            return trigger()

        return fire

    return prepared


def trace_floor(links: Mapping[str, MachineLink]) -> None:
    """Wrap each driver's floor commands so each is announced just before it is sent."""
    for machine_id, link in links.items():
        driver: Any = link.driver
        for name in (n for n in TRACED if hasattr(driver, n)):
            setattr(driver, name, _traced(name, machine_id, getattr(driver, name)))
        for name, shown in PREPARED.items():
            if hasattr(driver, name):
                setattr(driver, name, _traced_prepare(shown, machine_id, getattr(driver, name)))


def _progress(note: ProgressNote) -> None:
    if note.kind is Progress.STATE:
        say(f"state {note.state}")
    elif note.kind is Progress.MALFUNCTION:
        say(f"malfunction {note.machine_id}: {note.detail}")


async def run_heat(args: argparse.Namespace) -> int:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        async with ctx.sessions() as session:
            heat = await session.get(Heat, args.heat)
        if heat is None or heat.status not in DUE:
            say(f"heat {args.heat} is not due")
            return 3
        bridge = TournamentBridge(ctx.sessions)  # the default bridge, as the runner makes it
        seated = await bridge.seated_machines(heat.id)
        links, _ = await bank_links(ctx.bank(heat.bank_name))
        try:
            trace_floor(links)
            runner = HeatRunner(ctx.writer, links, tournament=bridge, progress=_progress)
            out = await runner.run_new(
                heat.bank_name,
                [m for m in seated if m in links],
                credits=int(heat.starting_credits),
                seconds=heat.duration_seconds,
                heat_id=heat.id,
                attempt=heat.restarts + 1,
            )
            await ctx.writer.drain(10.0)
        finally:
            await close_links(links)
        say(f"done {out.state.value}")
        return 0 if out.state is RunState.CLOSED else 1
    finally:
        await ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--spool", required=True)
    parser.add_argument("--heat", type=int, required=True)
    return asyncio.run(run_heat(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
