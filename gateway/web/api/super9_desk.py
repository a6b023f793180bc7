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

from gateway.super9.desk import Super9Desk


async def desk_in(session: AsyncSession) -> Super9Desk:
    await session.flush()  # the desk's sessions see what this one did so far
    maker = async_sessionmaker(
        bind=await session.connection(),
        join_transaction_mode="create_savepoint",
        expire_on_commit=False,
    )
    return Super9Desk(maker)
