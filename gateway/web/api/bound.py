"""Services that open their own transactions (they take a session maker, as the CLI
calls them), run inside the request's one transaction: a maker bound to the request's
connection whose every transaction is a savepoint, so their work commits or rolls back
with the request (with its authentication, or with a refusal after it)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker


async def sessions_in(session: AsyncSession) -> async_sessionmaker[AsyncSession]:
    await session.flush()  # the service's sessions see what this one did so far
    return async_sessionmaker(
        bind=await session.connection(),
        join_transaction_mode="create_savepoint",
        expire_on_commit=False,
    )
