"""Bring a database to the current schema with Alembic, without an ini file.

CLI commands call :func:`upgrade` (sync) or :func:`upgrade_async` before they touch the
database; the embedded SQLite default is created this way.  Maintainers add a revision
after changing models with::

    python -m storage.migrate revision -m "what changed"

which upgrades a scratch SQLite file to head, autogenerates the difference against
``Base.metadata`` into ``storage/migrations/versions/`` and tidies it with ruff.  Read
the generated file before committing it (autogenerate cannot see renames).
``python -m storage.migrate check [--database URL]`` prints the differences and exits 1
if a database differs from the models; without ``--database`` (and without
``REELGATE_DATABASE_URL``) it checks a scratch SQLite upgraded to head, i.e. exactly
what the next ``revision`` would write.  ``upgrade``/``downgrade``/``current`` do what
they say.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import change_feed
from storage.db import Base, database_url, make_engine

ENV_URL = "REELGATE_DATABASE_URL"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str | None = None, *, schema: str | None = None) -> Config:
    """A programmatic Alembic config pointing at the packaged migrations."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # ConfigParser treats '%' as interpolation: escape it (URL-encoded passwords).
    config.set_main_option("sqlalchemy.url", database_url(url).replace("%", "%%"))
    config.attributes["schema"] = schema
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _run(connection: Connection, action: str, revision: str) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    if action == "upgrade":
        command.upgrade(config, revision)
    else:
        command.downgrade(config, revision)


async def _on_engine(engine: AsyncEngine, action: str, revision: str) -> None:
    async with engine.begin() as connection:
        await connection.run_sync(_run, action, revision)
    change_feed.forget_schema(engine.sync_engine)


async def upgrade_async(
    target: str | AsyncEngine | None = None, revision: str = "head", *, schema: str | None = None
) -> None:
    """Upgrade the database (a URL, an engine, or the default URL) to ``revision``."""
    await _apply(target, "upgrade", revision, schema)


async def downgrade_async(
    target: str | AsyncEngine | None = None, revision: str = "base", *, schema: str | None = None
) -> None:
    await _apply(target, "downgrade", revision, schema)


async def _apply(
    target: str | AsyncEngine | None, action: str, revision: str, schema: str | None
) -> None:
    if isinstance(target, AsyncEngine):
        await _on_engine(target, action, revision)
        return
    engine = make_engine(target, schema=schema)
    try:
        await _on_engine(engine, action, revision)
    finally:
        await engine.dispose()


def upgrade(url: str | None = None, revision: str = "head", *, schema: str | None = None) -> None:
    """Synchronous :func:`upgrade_async` for CLI handlers (not inside a running loop)."""
    _no_running_loop("upgrade")
    asyncio.run(upgrade_async(url, revision, schema=schema))


def downgrade(url: str | None = None, revision: str = "base", *, schema: str | None = None) -> None:
    _no_running_loop("downgrade")
    asyncio.run(downgrade_async(url, revision, schema=schema))


def _no_running_loop(name: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"storage.migrate.{name}() called inside an event loop: use {name}_async")


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as connection:
        return await connection.run_sync(_current)


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def schema_differences(engine: AsyncEngine) -> list[Any]:
    """Alembic's diff between the live database and ``Base.metadata`` (empty = in step)."""
    import storage.models  # noqa: F401  (every table on Base.metadata)

    async with engine.connect() as connection:
        return await connection.run_sync(_differences)


def make_revision(message: str, rev_id: str | None = None) -> Path | None:
    """Autogenerate a revision from the models against a scratch SQLite at head.

    Revision ids are sequential (``0001``, ``0002`` ...) so files sort in upgrade order.
    """
    import storage.models  # noqa: F401

    if rev_id is None:
        existing = list(ScriptDirectory.from_config(alembic_config()).walk_revisions())
        rev_id = f"{len(existing) + 1:04d}"
    with tempfile.TemporaryDirectory() as scratch:
        url = f"sqlite+aiosqlite:///{Path(scratch) / 'scratch.db'}"
        upgrade(url)
        engine = make_engine(url)

        def _revise(connection: Connection) -> Any:
            config = alembic_config(url)
            config.attributes["connection"] = connection
            return command.revision(config, message=message, autogenerate=True, rev_id=rev_id)

        async def _go() -> Any:
            try:
                async with engine.begin() as connection:
                    return await connection.run_sync(_revise)
            finally:
                await engine.dispose()

        script = asyncio.run(_go())
    if script is None:
        return None
    path = Path(script.path)
    # An empty "Revises:" leaves trailing whitespace in the docstring.
    path.write_text("\n".join(line.rstrip() for line in path.read_text().splitlines()) + "\n")
    ruff = shutil.which("ruff")
    if ruff:  # keep generated revisions lint-clean
        subprocess.run([ruff, "format", "-q", str(path)], check=False)
        subprocess.run([ruff, "check", "--fix", "-q", str(path)], check=False)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m storage.migrate", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    for name in ("upgrade", "downgrade", "current", "check"):
        p = sub.add_parser(name)
        p.add_argument("--database", help=f"database URL (default: ${ENV_URL})")
        if name in ("upgrade", "downgrade"):
            p.add_argument("revision", nargs="?", default="head" if name == "upgrade" else "-1")
    rev = sub.add_parser("revision", help="autogenerate a revision from the models")
    rev.add_argument("-m", "--message", required=True)
    rev.add_argument("--rev-id", help="revision id (default: next number, e.g. 0002)")
    args = parser.parse_args(argv)

    if args.action == "revision":
        path = make_revision(args.message, args.rev_id)
        print(path if path else "no revision written")
        return 0
    if args.action == "upgrade":
        upgrade(args.database, args.revision)
        return 0
    if args.action == "downgrade":
        downgrade(args.database, args.revision)
        return 0

    if args.action == "check" and not args.database and not os.environ.get(ENV_URL):
        with tempfile.TemporaryDirectory() as scratch:
            url = f"sqlite+aiosqlite:///{Path(scratch) / 'head.db'}"
            upgrade(url)  # the revisions, to compare with the models
            return main(["check", "--database", url])

    async def _inspect() -> int:
        engine = make_engine(args.database)
        try:
            if args.action == "current":
                print(await current_revision(engine) or "(empty)")
                return 0
            diffs = await schema_differences(engine)
        finally:
            await engine.dispose()
        for diff in diffs:
            print(diff)
        return 1 if diffs else 0

    return asyncio.run(_inspect())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
