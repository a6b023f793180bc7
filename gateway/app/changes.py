"""The change reader of a process that serves screens (``serve``, ``api``): its own
engine on the database, so a PostgreSQL listener holds a connection of its own and the
API's pool is not drained by it (``gateway.web.change_reader``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.database import open_engine
from gateway.web.change_reader import ChangeReader, Publisher
from storage.db import make_sessionmaker


@dataclass
class RunningChanges:
    reader: ChangeReader
    engine: AsyncEngine

    async def close(self) -> None:
        await self.reader.close()
        await self.engine.dispose()


async def start_changes(database: str | None, feed: Publisher, **options: Any) -> RunningChanges:
    """Publish every stored change a screen shows to ``feed`` (after publishing what is
    stored now), until ``close()``."""
    _, engine = await open_engine(database)
    reader = ChangeReader(make_sessionmaker(engine), feed, engine=engine, **options)
    try:
        await reader.start()
    except BaseException:
        await reader.close()
        await engine.dispose()
        raise
    return RunningChanges(reader, engine)
