"""``reelgate serve --floor F``: the long-running gateway.

On start it recovers every bank from the journal (heats under way are resumed or
restarted, rule 20; machines left in tournament mode are released), then supervises
every bank (general polls at the SAS cadence, events, link health) and lets the
scheduler start due heats on enabled banks and stop them by the heat clock.  SIGTERM or
SIGINT stops it; a heat under way at that moment is picked up by the next start from
the journal, exactly as after a crash.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from typing import TYPE_CHECKING, Any

from gateway.heats.context import add_common_arguments

if TYPE_CHECKING:
    from gateway.heats.context import GatewayContext
    from gateway.heats.links import MachineLink
    from gateway.heats.tournament_hooks import ServiceHooks
    from gateway.supervisor import BankSupervisor

log = logging.getLogger("reelgate.serve")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "serve", help="run the gateway: recovery, bank supervision, scheduled heats"
    )
    add_common_arguments(parser, floor_required=True)
    parser.add_argument(
        "--poll-interval", type=float, default=0.2, help="general poll cadence per machine (s)"
    )
    parser.add_argument("--tick", type=float, default=0.5, help="scheduler tick (s)")
    parser.add_argument("--log-level", default="INFO")
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.poll_interval < 0.2:
        from gateway.errors import OperatorError

        raise OperatorError("--poll-interval: SAS allows one poll per machine every 0.2 s at most")
    return asyncio.run(serve(args))


async def serve(args: argparse.Namespace, stop: asyncio.Event | None = None) -> int:
    # Imported here: the CLI loads every command module just to build its parser.
    from gateway.heats.context import GatewayContext, bank_links, close_links
    from gateway.heats.tournament_hooks import ServiceHooks
    from gateway.scheduler import Scheduler
    from gateway.supervisor import BankSupervisor

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    links: dict[str, dict[str, MachineLink]] = {}
    supervisors: dict[str, BankSupervisor] = {}
    recoveries: list[asyncio.Task[Any]] = []
    try:
        hooks = ServiceHooks(ctx.sessions)
        for bank in ctx.floor.banks.values():
            bank_link, failed = await bank_links(bank, include_excluded=True)
            links[bank.name] = bank_link
            for machine_id, why in failed.items():
                log.warning("bank %s: %s not answering yet (%s)", bank.name, machine_id, why)
            supervisor = BankSupervisor(bank_link, interval_s=args.poll_interval)
            supervisor.claim(bank_link)  # recovery first; supervision once it is done
            supervisors[bank.name] = supervisor
            supervisor.start()
        scheduler = Scheduler(ctx, links, hooks=hooks, supervisors=supervisors, tick_s=args.tick)
        for name, bank_link in links.items():
            task = asyncio.create_task(_recover(ctx, bank_link, name, hooks, supervisors[name]))
            scheduler.busy[name] = task
            recoveries.append(task)
        log.info("serving %d bank(s): %s", len(links), ", ".join(sorted(links)))
        await scheduler.run(stop)
    finally:
        for task in recoveries:
            task.cancel()
        await asyncio.gather(*recoveries, return_exceptions=True)
        for supervisor in supervisors.values():
            await supervisor.stop()
        for bank_link in links.values():
            await close_links(bank_link)
        await ctx.close()
    return 0


async def _recover(
    ctx: GatewayContext,
    links: dict[str, MachineLink],
    bank: str,
    hooks: ServiceHooks,
    supervisor: BankSupervisor,
) -> None:
    from gateway.recovery import recover_bank

    try:
        for r in await recover_bank(ctx.writer, links, bank, hooks=hooks):
            log.info(
                "bank %s: heat run %s found %s -> %s%s",
                bank, r.run_id, r.found_state.value, r.decision,
                f" (silent: {', '.join(r.silent)})" if r.silent else "",
            )  # fmt: skip
    finally:
        supervisor.release(links)
