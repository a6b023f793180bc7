"""The Super 9 desk inside the request's transaction.

:class:`~gateway.super9.desk.Super9Desk` opens its own transactions (the CLI's one per
command).  Here it is bound to the request's connection with every transaction it
opens a savepoint, so its work commits or rolls back with the request — with the
authentication, with a dual-control pending action, or with a trial that is rolled back.
Each request gets its own desk: its live draw is rebuilt from the stored spins and it
publishes nowhere (the live draw for displays is the gateway's and the wheel
follower's, which sync from the same rows).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.clocks.policy import WriteTime
from gateway.super9 import deadlines
from gateway.super9.desk import Super9Desk
from gateway.super9.rules.verification import Verification
from storage.enums import Tender


async def desk_in(session: AsyncSession) -> Super9Desk:
    await session.flush()  # the desk's sessions see what this one did so far
    maker = async_sessionmaker(
        bind=await session.connection(),
        join_transaction_mode="create_savepoint",
        expire_on_commit=False,
    )
    return Super9Desk(maker)


async def sell_at(
    desk: Super9Desk, ticket: str, player: str, tender: Tender, *, actor: str, write: WriteTime
) -> int:
    """S5: the sale at the write's time; a back-dated one still keeps S9-6b at the real
    time (:func:`gateway.super9.deadlines.super9_sale`), as the CLI's ``sell``."""
    deadlines.super9_sale(await desk.calendar(), write)
    return await desk.sell(ticket, player, actor=actor, now=write.at, tender=tender)


async def hand_in_at(
    desk: Super9Desk, ticket: str, numbers: str, verification: Verification, *, actor: str,
    write: WriteTime,
) -> int:  # fmt: skip
    """S9-6 to S9-11: the hand-in at the write's time; a back-dated one still keeps
    S9-6c at the real time (:func:`gateway.super9.deadlines.super9_hand_in`)."""
    sold_for = await desk.sold_for(ticket)
    if sold_for is not None:
        deadlines.super9_hand_in(await desk.calendar(), sold_for, write)
    return await desk.hand_in(ticket, numbers, actor=actor, now=write.at, verification=verification)
