"""Storage fixtures: an *empty* database per backend (no tables), for migration tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.audit import ChainKeys, bind_keys
from storage.db import make_engine
from storage.testing import EmptyDatabase

POSTGRES_URL = os.environ.get("REELGATE_DATABASE_URL", "")  # as in tests/conftest.py


@pytest.fixture
async def empty_db(
    db_backend: str, tmp_path: Path, record_keys: ChainKeys
) -> AsyncIterator[EmptyDatabase]:
    if db_backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
        eng = make_engine(url)
        bind_keys(eng, record_keys)
        try:
            yield EmptyDatabase(eng, url, None)
        finally:
            await eng.dispose()
        return
    schema = f"m_{uuid.uuid4().hex[:12]}"
    admin = make_engine(POSTGRES_URL)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    eng = make_engine(POSTGRES_URL, schema=schema)
    bind_keys(eng, record_keys)
    try:
        yield EmptyDatabase(eng, POSTGRES_URL, schema)
    finally:
        await eng.dispose()
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
