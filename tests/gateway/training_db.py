"""Test databases for the CLI: training databases (free keyed times, as the season and
desk scripts need) and accounts whose passwords the tests type on standard input."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime

import pytest
from argon2 import PasswordHasher
from sqlalchemy.ext.asyncio import AsyncEngine

import storage.accounts
from gateway.accounts import service
from gateway.records import chain
from storage.database_mark import DatabaseKind, mark
from storage.db import make_engine, make_sessionmaker

PASSWORD = "correct horse battery"


def _keyed_engine(url: str) -> AsyncEngine:
    """An engine with the session's audit keys bound, as the CLI's opener binds them."""
    engine = make_engine(url)
    chain.bind(engine, url)
    return engine


def make_training(url: str) -> None:
    """Mark a freshly migrated database as a training one (``db init --training``)."""

    async def go() -> None:
        engine = _keyed_engine(url)
        try:
            async with make_sessionmaker(engine)() as session, session.begin():
                await mark(session, DatabaseKind.TRAINING, at=datetime.now(UTC), by="tests")
        finally:
            await engine.dispose()

    asyncio.run(go())


def cheap_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )


def add_accounts(url: str, *accounts: tuple[str, str]) -> None:
    """Accounts (name, role), each with :data:`PASSWORD`."""

    async def go() -> None:
        engine = _keyed_engine(url)
        try:
            async with make_sessionmaker(engine)() as session, session.begin():
                for name, role in accounts:
                    await service.add_user(
                        session, name, role, PASSWORD, actor="tests", now=datetime.now(UTC)
                    )
        finally:
            await engine.dispose()

    asyncio.run(go())


def type_passwords(monkeypatch: pytest.MonkeyPatch, *passwords: str) -> None:
    """Standard input holding one password a line, as a script would pipe them."""
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{p}\n" for p in passwords)))
