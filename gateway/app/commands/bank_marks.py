"""``reelgate bank clear-mark MACHINE --reason TEXT``: a technician clears a machine's
SNMP trap marks (storage.marks) once the machine has been checked; audited."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from gateway.app.context import GatewayContext
from gateway.app.identity import host_actor
from gateway.app.options import add_gateway, add_write
from gateway.errors import OperatorError
from storage.marks import MarkStore


def register(actions: Any) -> None:
    clear = actions.add_parser(
        "clear-mark", help="clear a machine's trap marks (link down, power lost, door opened)"
    )
    clear.add_argument("machine")
    clear.add_argument("--reason", required=True, help="what the technician found (audit log)")
    add_gateway(clear, floor_required=False)
    add_write(clear, now=False)
    clear.set_defaults(handler=_clear_mark)


def _clear_mark(args: argparse.Namespace) -> int:
    reason = args.reason.strip()
    if not reason:
        raise OperatorError("--reason: must not be empty")
    cleared = asyncio.run(_run_clear(args, reason))
    if not cleared:
        print(f"{args.machine}: no trap marks to clear", file=sys.stderr)
        return 1
    kinds = ", ".join(m.kind for m in cleared)
    print(f"{args.machine}: cleared {len(cleared)} trap mark(s): {kinds}")
    return 0


async def _run_clear(args: argparse.Namespace, reason: str) -> list[Any]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        store = MarkStore(ctx.sessions)
        return list(await store.clear(args.machine, actor=host_actor(), reason=reason))
    finally:
        await ctx.close()
