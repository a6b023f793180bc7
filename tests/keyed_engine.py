"""An engine with the session's audit keys bound, as the CLI's one opener binds them
(``gateway.app.database``): tests that write through the services on an engine of their
own need it, since every audit row is keyed (storage.audit)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records import chain
from storage.db import make_engine as plain_engine


def make_engine(url: str) -> AsyncEngine:
    engine = plain_engine(url)
    chain.bind(engine, url)
    return engine
