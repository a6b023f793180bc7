"""Database engine and session set-up shared by every part of Reelgate.

The embedded default is a SQLite file (WAL journal, foreign keys on, write
transactions taken with ``BEGIN IMMEDIATE`` so two writers never deadlock on a lock
upgrade; a transaction that only reads may ask for a plain deferred ``BEGIN`` with
:data:`READ_ONLY`, so reads never queue behind writers).  Production and CI use
PostgreSQL through asyncpg.  The URL comes from ``--database`` or
``REELGATE_DATABASE_URL``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from storage import sqlite_driver
from storage.pg_hosts import PrimaryConnector, hosts_of, primary_url

DEFAULT_SQLITE_PATH = Path("reelgate.db")

# Connection execution options of a transaction that will only read
# (``await session.connection(execution_options=READ_ONLY)`` before its first query).
# On SQLite it begins deferred: under WAL it reads a snapshot and takes no lock, so it
# never waits for the writer.  It must not write: a deferred transaction that later
# writes can fail with SQLITE_BUSY instead of waiting.  Other databases ignore it.
READ_ONLY: dict[str, Any] = {"reelgate_read_only": True}

# Stable constraint names so Alembic migrations are reproducible on both databases.
# Multi-column names use every column (``column_0_N``) so that two constraints that
# start with the same column never collide; SQLAlchemy shortens over-long names.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base of every Reelgate table."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def database_url(explicit: str | None = None) -> str:
    """The URL to use: explicit argument, then the environment, then the embedded file."""
    if explicit:
        return explicit
    from_env = os.environ.get("REELGATE_DATABASE_URL")
    if from_env:
        return from_env
    return f"sqlite+aiosqlite:///{DEFAULT_SQLITE_PATH}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str | None = None, *, schema: str | None = None, **kwargs: Any) -> AsyncEngine:
    """Create an async engine with Reelgate's connection settings.

    ``schema`` (PostgreSQL only) puts every table in that schema through the search
    path; tests use it to give each test an isolated, disposable schema.
    """
    resolved = database_url(url)
    if is_sqlite(resolved):
        if make_url(resolved).get_driver_name() == "aiosqlite":
            # One hand-off to the connection's thread per statement, not four.
            kwargs.setdefault("module", sqlite_driver.dbapi())
        engine = create_async_engine(resolved, **kwargs)
        _configure_sqlite(engine)
        return engine
    # A primary and its replicas may be named together; every engine writes to the
    # primary (storage/pg_hosts.py).  After a promotion the pool's connections to the
    # dead primary fail: SQLAlchemy invalidates the pool on the disconnect, pre-ping
    # weeds out any left, and the next connect walks the host list to the new primary.
    resolved = primary_url(resolved)
    connect_args: dict[str, Any] = kwargs.pop("connect_args", {})
    if schema is not None:
        connect_args.setdefault("server_settings", {})["search_path"] = schema
    if len(hosts_of(make_url(resolved))) > 1 and make_url(resolved).get_driver_name() == "asyncpg":
        connect_args.setdefault("async_creator_fn", PrimaryConnector())
    return create_async_engine(resolved, connect_args=connect_args, pool_pre_ping=True, **kwargs)


def _configure_sqlite(engine: AsyncEngine) -> None:
    sync_engine = engine.sync_engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # pysqlite's own transaction handling is switched off so that we issue
        # BEGIN IMMEDIATE ourselves (see _on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        reads_only = connection.get_execution_options().get("reelgate_read_only", False)
        connection.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[Any]:
    return async_sessionmaker(engine, expire_on_commit=False)
