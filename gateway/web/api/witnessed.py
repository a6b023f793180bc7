"""No answer before the witness: a desk is told a change is done only once the chain
head it reached is held outside the database (:mod:`gateway.records.witness`).

A pure ASGI middleware: when the application starts its response, it first awaits the
witness of the engine the API's sessions use.  Requests that committed nothing find
nothing pending and pass at the cost of one attribute read; concurrent commits wait
for one witness write together.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from gateway.records.witness import witness_of

Scope = dict[str, Any]
Receive = Any
Send = Any


class WitnessedAnswers:
    def __init__(self, app: Any, sessions: async_sessionmaker[AsyncSession] | None) -> None:
        self.app = app
        # None: an app whose sessions are bound later (a schema test); nothing to witness.
        bind = None if sessions is None else sessions.kw.get("bind")
        self.engine: AsyncEngine | None = bind if isinstance(bind, AsyncEngine) else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        engine = self.engine
        if scope["type"] != "http" or engine is None:
            await self.app(scope, receive, send)
            return

        async def send_after_witness(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                witness = witness_of(engine)
                if witness is not None and witness.pending:
                    await witness.settled()
            await send(message)

        await self.app(scope, receive, send_after_witness)
