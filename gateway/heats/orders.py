"""A director's order to the running gateway, queued through the journal.

``reelgate heat direct`` and ``POST /api/v1/banks/{bank}/orders`` both end here: the order
is checked (only a start names a heat; abort and restart need a reason, T20 and T23;
the bank must be on the floor), written as a :class:`~storage.journal.DirectorCommand`
and audited in the same transaction.  The scheduler of ``reelgate serve`` carries it out
on its next tick, so the floor is only ever touched by the process that holds the bank.

An order for a bank that no gateway holds is refused, whichever desk gives it (CLI, API,
console): queued, it would be carried out by whichever gateway took the bank next,
perhaps hours later, on a heat the director no longer has in mind.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.errors import OperatorError
from storage import audit
from storage.floor import FloorBank
from storage.journal import DirectorCommand
from storage.lease import BankLease

ORDERS: Final = ("start", "pause", "resume", "abort", "restart")


def unheld(bank: str, order: str) -> str:
    """The one line that refuses an order for a bank no gateway holds."""
    return f"bank {bank}: no gateway holds it (start `reelgate serve`); the {order} was not queued"


def check_order(order: str, heat_id: int | None, reason: str) -> str:
    """The order's reason, trimmed; refuses an order the director cannot give so."""
    if order not in ORDERS:
        raise OperatorError(f"order: {order!r} is not one of {', '.join(ORDERS)}")
    if order == "start" and heat_id is None:
        raise OperatorError("--heat: say which heat to start")
    if order != "start" and heat_id is not None:
        raise OperatorError("--heat: only a start names a heat (the others act on the bank)")
    if order in ("abort", "restart") and not reason.strip():
        raise OperatorError(f"--reason: a director's {order} needs a reason (rules 20, 23)")
    return reason.strip()


async def queue_order(
    session: AsyncSession,
    *,
    bank: str,
    order: str,
    heat_id: int | None,
    reason: str,
    actor: str,
    now: datetime,
) -> DirectorCommand:
    reason = check_order(order, heat_id, reason)
    if await session.get(FloorBank, bank) is None:
        raise OperatorError(f"bank {bank!r} is not on the floor")
    held = await session.get(BankLease, bank)
    if held is None or held.released or held.expires_at <= now:
        raise OperatorError(unheld(bank, order))
    cmd = DirectorCommand(
        bank_name=bank, heat_id=heat_id, command=order, reason=reason, actor=actor, created_at=now
    )
    session.add(cmd)
    await session.flush()
    await audit.record(
        session,
        actor=actor,
        action=f"heat.{order}",
        subject=f"bank:{bank}",
        reason=reason or None,
        details={"heat": heat_id, "order": cmd.id},
    )
    return cmd
