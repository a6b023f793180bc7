"""Alembic environment: async engines, one schema for both backends.

Run through :mod:`storage.migrate` (which passes either a live connection in
``config.attributes["connection"]`` or a URL), or by the ``alembic`` command with
``storage/alembic.ini``.  SQLite gets batch mode because it cannot ALTER most things.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

import storage.models  # noqa: F401  (registers every table on Base.metadata)
from storage.db import Base, database_url, make_engine
from storage.types import UTCDateTime

config = context.config
target_metadata = Base.metadata


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Write app-specific column types as plain SQLAlchemy so revisions never import them."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=render_item,
    )


def run_migrations_on(connection: Connection) -> None:
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_url(url: str, schema: str | None) -> None:
    engine = make_engine(url, schema=schema)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(run_migrations_on)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url") or database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    given = config.attributes.get("connection")
    if given is not None:
        run_migrations_on(given)
    else:
        url = config.get_main_option("sqlalchemy.url") or database_url()
        asyncio.run(_run_with_url(url, config.attributes.get("schema")))
