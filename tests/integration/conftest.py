"""Databases for the whole-process tests: a SQLite file always, and a PostgreSQL
database of its own (created and dropped here) when ``REELGATE_DATABASE_URL`` names a
server.  Each is migrated with ``reelgate db upgrade``, as an operator would."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from gateway.app.cli import main
from storage.db import make_engine
from tests.conftest import POSTGRES_URL

_BACKENDS = ["sqlite"] + (["postgresql"] if POSTGRES_URL.startswith("postgresql") else [])


async def _admin(sql: str) -> None:
    engine = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(sql))
    finally:
        await engine.dispose()


@pytest.fixture(params=_BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh, migrated database."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        assert main(["db", "upgrade", "--database", url]) == 0
        yield url
        return
    name = f"rg_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    try:
        assert main(["db", "upgrade", "--database", url]) == 0
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
