"""The night's database: a SQLite file, and a PostgreSQL database of its own when
``REELGATE_DATABASE_URL`` names a server.  Unlike the integration suite's, it is left
empty: the night's first ``reelgate users add`` creates it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from storage.db import make_engine
from tests.conftest import POSTGRES_URL


async def _admin(sql: str) -> None:
    engine = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(sql))
    finally:
        await engine.dispose()


_BACKENDS = ["sqlite"] + (["postgresql"] if POSTGRES_URL.startswith("postgresql") else [])


@pytest.fixture(params=_BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'reelgate.db'}"
        return
    name = f"rg_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
