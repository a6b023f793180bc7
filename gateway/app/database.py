"""The one way a command opens the database.

:func:`resolve` turns ``--database`` (else ``$REELGATE_DATABASE_URL``, else
``./reelgate.db``) into an async URL: plain ``sqlite:///path`` and ``postgresql://``
are mapped to the drivers Reelgate runs on (aiosqlite, asyncpg); anything else is one
line naming the option.  A SQLite file must exist (only ``reelgate db upgrade`` and the
demo create one), so a typo never leaves an empty ``reelgate.db`` behind.

:func:`open_engine` connects and compares the database's Alembic revision with the
newest one this Reelgate ships: a database at another revision is refused with the fix
(``reelgate db upgrade``).  Migrations run only when asked (:func:`upgrade`).  The
revision check is a plain ``SELECT`` and the head is read from the revision files'
names, so ordinary commands never load Alembic (it is slow to import).

It also binds the audit chain's keys to the engine (:mod:`gateway.records.chain`);
``upgrade`` creates ``<file>.keys/`` for a SQLite file that has no key configured, so
the demo, tests and benches need no set-up.

Every failure to reach or read the database becomes one :class:`OperatorError` line.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    NoSuchModuleError,
)
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.errors import OperatorError
from gateway.records import chain
from gateway.records.keys import RecordKeyError
from storage import audit, seals
from storage.chain_errors import AuditKeyMissing
from storage.db import database_url, make_engine, make_sessionmaker
from storage.pg_hosts import HostListError, lift_host_list, primary_url
from storage.types import ValueTooLong

if TYPE_CHECKING:
    from storage.database_mark import DatabaseKind

T = TypeVar("T")
VERSIONS = Path(__file__).resolve().parents[2] / "storage" / "migrations" / "versions"
DRIVERS = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}
UPGRADE = "reelgate db upgrade"


def safe_url(url: str | URL) -> str:
    """The URL as it may be printed (no password)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url)


def resolve(given: str | None, *, create: bool = False) -> str:
    """The async URL for ``given`` (checked; see the module docstring)."""
    raw = database_url(given)
    try:
        url = make_url(lift_host_list(raw))
    except (ArgumentError, ValueError):
        raise OperatorError(f"--database: not a database URL: {raw!r}") from None
    backend = "postgresql" if url.get_backend_name() == "postgres" else url.get_backend_name()
    driver = DRIVERS.get(backend)
    if driver is None:
        known = ", ".join(f"{b}://" for b in DRIVERS)
        raise OperatorError(f"--database {safe_url(url)}: unknown scheme (use {known})")
    if "+" in url.drivername and url.get_driver_name() != driver:
        raise OperatorError(
            f"--database {safe_url(url)}: driver {url.get_driver_name()} is not supported "
            f"(use {backend}:// or {backend}+{driver}://)"
        )
    url = url.set(drivername=f"{backend}+{driver}")
    if backend == "sqlite":
        _check_sqlite_file(url, create=create)
        return url.render_as_string(hide_password=False)
    try:  # a primary and its replicas: writes go to the primary (storage/pg_hosts.py)
        return primary_url(url.render_as_string(hide_password=False))
    except HostListError as exc:
        raise OperatorError(f"--database {safe_url(url)}: {exc}") from None


def _check_sqlite_file(url: URL, *, create: bool) -> None:
    file = url.database or ""
    if not file or file == ":memory:" or file.startswith("file:"):
        return
    path = Path(file).expanduser()
    if not path.resolve().parent.is_dir():  # say so before SQLite's "unable to open"
        raise OperatorError(f"--database {url}: folder {path.resolve().parent} does not exist")
    if not create and not path.exists():
        raise OperatorError(
            f"--database {url}: no database file {path}; run {UPGRADE} --database ... to create it"
        )


def cannot_open(url: str, exc: BaseException) -> OperatorError:
    """One line for a database that cannot be reached or read."""
    text_ = str(getattr(exc, "orig", None) or exc).strip()
    first = text_.splitlines()[0] if text_ else type(exc).__name__
    return OperatorError(f"--database {safe_url(url)}: cannot open: {first}")


def head_revision() -> str:
    """The newest revision this Reelgate ships (revision ids are sequential file names)."""
    return max(p.name.split("_", 1)[0] for p in VERSIONS.glob("[0-9]*_*.py"))


async def stored_revision(engine: AsyncEngine) -> str | None:
    """The database's Alembic revision, None for a database Reelgate never migrated."""
    async with engine.connect() as conn:

        def read(sync_conn: Connection) -> str | None:
            from sqlalchemy import inspect

            if not inspect(sync_conn).has_table("alembic_version"):
                return None
            found = sync_conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            return None if found is None else str(found)

        return await conn.run_sync(read)


def refuse_other_revision(found: str | None) -> None:
    head = head_revision()
    if found != head:
        at = f"at revision {found}" if found else "not set up (no revision)"
        raise OperatorError(f"database is {at}, this reelgate needs {head}: run {UPGRADE}")


async def open_engine(given: str | None) -> tuple[str, AsyncEngine]:
    """Resolve, connect and check the revision; the caller disposes of the engine."""
    url = resolve(given)
    engine = make_engine(url)
    try:
        bind_keys(engine, url)
        refuse_other_revision(await guarded(url, stored_revision(engine)))
    except BaseException:
        await engine.dispose()
        raise
    return url, engine


def bind_keys(engine: AsyncEngine, url: str) -> None:
    """The chain's keys and its witness (:mod:`gateway.records.witness`) for ``engine``."""
    from gateway.records import witness

    try:
        chain.bind(engine, url)
    except RecordKeyError as exc:
        raise OperatorError(str(exc)) from None
    try:
        witness.bind(engine, url)
    except ValueError as exc:
        raise OperatorError(f"records.witness: {exc}") from None


def watch_chain(engine: AsyncEngine) -> None:
    """``serve`` and ``api``: checkpoints within a minute of anyone's write, and at
    shutdown (:meth:`gateway.records.witness.Witness.watch`)."""
    from gateway.records.witness import witness_of

    found = witness_of(engine)
    if found is not None:
        found.watch()


async def close_engine(engine: AsyncEngine) -> None:
    """Dispose of an engine from :func:`open_engine`: its witness first holds every head
    committed (and, in ``serve`` and ``api``, a shutdown checkpoint; see
    :mod:`gateway.records.witness`)."""
    from gateway.records.witness import witness_of

    found = witness_of(engine)
    try:
        if found is not None:
            await found.close()
    finally:
        await engine.dispose()


def require_audit_key(engine: AsyncEngine, what: str) -> None:
    """A process that writes results as they happen must not find out at its first write."""
    if audit.keys_of_engine(engine) is None:
        raise OperatorError(
            f"{what} needs the audit key: set REELGATE_AUDIT_KEY_FILE "
            "(create one with `reelgate audit keys-init`)"
        )


async def guarded(url: str, work: Awaitable[T]) -> T:
    """``work`` with every way of not reaching the database turned into one line."""
    try:
        return await work
    except (ArgumentError, NoSuchModuleError) as exc:  # e.g. a driver not installed
        raise OperatorError(f"--database {safe_url(url)}: {exc}") from None
    except (OSError, DBAPIError, TimeoutError, UnicodeDecodeError) as exc:
        raise cannot_open(url, exc) from None


async def upgrade(given: str | None) -> tuple[str | None, str]:
    """Create or migrate the database to head; returns (revision before, revision after)."""
    from alembic.util.exc import CommandError  # alembic loads slowly: only here

    from storage.migrate import upgrade_async

    url = resolve(given, create=True)
    engine = make_engine(url)
    try:
        try:
            chain.ensure_local_keys(url)
        except RecordKeyError as exc:
            raise OperatorError(str(exc)) from None
        before = await guarded(url, stored_revision(engine))
        try:
            await guarded(url, upgrade_async(engine))
        except CommandError as exc:  # e.g. a revision this Reelgate does not know
            raise OperatorError(f"--database {safe_url(url)}: {exc}") from None
        await guarded(url, _key_legacy_chain(engine, url))
        return before, head_revision()
    finally:
        await close_engine(engine)


async def init(given: str | None, *, training: bool, by: str) -> tuple[str | None, str, str]:
    """Create (or migrate) the database and write its kind once: training or production
    (:mod:`storage.database_mark`).  Only a database with nothing in it yet can become a
    training one; a kind already written never changes.  Returns (revision before,
    revision after, kind)."""
    from storage.database_mark import DatabaseKind, MarkRefused, database_kind, mark

    url = resolve(given, create=True)
    engine = make_engine(url)
    try:
        before = await guarded(url, stored_revision(engine))
    finally:
        await engine.dispose()
    wanted = DatabaseKind.TRAINING if training else DatabaseKind.PRODUCTION
    if before is not None:
        found = await _kind_of(url)
        if training and found is not DatabaseKind.TRAINING:
            raise OperatorError(
                f"--training: {safe_url(url)} already holds a {found} database; only a new, "
                "empty database can be made a training one"
            )
    _, after = await upgrade(given)
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session, session.begin():
            try:
                await mark(session, wanted, at=datetime.now(UTC), by=by)
            except MarkRefused as exc:
                raise OperatorError(f"db init: {exc}") from None
            kind = await database_kind(session)
    finally:
        await engine.dispose()
    return before, after, kind.value


async def _has_no_tables(engine: AsyncEngine) -> bool:
    async with engine.connect() as conn:

        def read(sync_conn: Connection) -> bool:
            from sqlalchemy import inspect

            return not inspect(sync_conn).get_table_names()

        return await conn.run_sync(read)


async def create_if_missing(given: str | None, *, training: bool, by: str) -> str | None:
    """The first account's database: one that does not exist yet (a SQLite file not
    there, a PostgreSQL database with no table) is created at the newest revision, as
    ``db init`` would (``training``: a training one); the one line that says so, or None
    for a database that exists — left as it is: a database at another revision is
    migrated only by ``db upgrade`` (the next command refuses it), and ``training`` is
    refused for a production database (its kind was written when it was created)."""
    url = resolve(given, create=True)
    engine = make_engine(url)
    try:
        empty = await guarded(url, _has_no_tables(engine))
        if empty:  # the account's audit row needs the key: say so before creating
            try:
                chain.ensure_local_keys(url)
            except RecordKeyError as exc:
                raise OperatorError(str(exc)) from None
            bind_keys(engine, url)
            if audit.keys_of_engine(engine) is None:
                raise OperatorError(
                    "no audit key: set REELGATE_AUDIT_KEY_FILE (create one with `reelgate "
                    "audit keys-init`); no database created, nothing saved"
                )
    finally:
        await engine.dispose()
    if not empty:
        if training and await guarded(url, kind_of(given)) != "training":
            raise OperatorError(
                f"--training: {safe_url(url)} already holds a production database; a "
                "database's kind is written once, when it is created"
            )
        return None
    _, after, kind = await init(given, training=training, by=by)
    return f"database {safe_url(url)}: created at revision {after}, {kind} database"


async def _kind_of(url: str) -> DatabaseKind:
    from storage.database_mark import DatabaseKind, database_kind

    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            if await guarded(url, _has_mark_table(session)):
                return await database_kind(session)
            return DatabaseKind.PRODUCTION
    finally:
        await engine.dispose()


async def _has_mark_table(session: AsyncSession) -> bool:
    def check(sync_conn: Connection) -> bool:
        from sqlalchemy import inspect

        return bool(inspect(sync_conn).has_table("database_mark"))

    conn = await session.connection()
    return await conn.run_sync(check)


async def kind_of(given: str | None) -> str:
    """``training`` or ``production`` (a database from before the mark: production)."""
    return (await _kind_of(resolve(given))).value


async def _key_legacy_chain(engine: AsyncEngine, url: str) -> None:
    """Seal a chain from before the key under it now, if the key is configured; then
    seal the existing rows of tables put under the seals since the chain was keyed
    (:func:`storage.seals.extend_scope`, one ``records.seal_scope`` audit row)."""
    bind_keys(engine, url)
    if audit.keys_of_engine(engine) is None:
        return
    async with make_sessionmaker(engine).begin() as session:
        await session.run_sync(audit.key_legacy_chain)
    async with make_sessionmaker(engine).begin() as session:
        await session.run_sync(seals.extend_scope)


async def revision_of(given: str | None) -> str | None:
    url = resolve(given)
    engine = make_engine(url)
    try:
        return await guarded(url, stored_revision(engine))
    finally:
        await engine.dispose()


def run(target: argparse.Namespace | str | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Open the database (checked) and run ``work`` in one transaction.  ``target`` is
    the command's arguments (or just a ``--database`` value, for a read): a write's
    people and clock are settled first (:func:`gateway.app.keyed.preflight`), and a
    training database says so on standard error."""
    return asyncio.run(_run(target, work))


async def _run(
    target: argparse.Namespace | str | None, work: Callable[[AsyncSession], Awaitable[T]]
) -> T:
    from gateway.app import keyed
    from gateway.tournament.services.common import unit_of_work

    args = target if isinstance(target, argparse.Namespace) else None
    given: str | None = args.database if args is not None else target  # type: ignore[assignment]
    url, engine = await open_engine(given)
    try:
        sessions = make_sessionmaker(engine)
        if args is not None and getattr(args, "writes", False):
            await guarded(url, keyed.preflight(sessions, args))
        else:
            keyed.banner(await guarded(url, keyed.training_of(sessions)))
        async with unit_of_work(sessions) as session:
            result = await work(session)
            if args is not None and getattr(args, "writes", False):
                keyed.check_keyed_time_used(args)  # raising here rolls the work back
            return result
    except ValueTooLong as exc:
        raise OperatorError(f"{exc}; nothing saved") from exc
    except AuditKeyMissing as exc:
        raise OperatorError(str(exc)) from exc
    except IntegrityError as exc:
        # Two desks changed the same seat at the same moment; the loser's change is void.
        raise OperatorError(f"conflicting change, nothing saved; try again ({exc.orig})") from exc
    except (DBAPIError, OSError) as exc:  # server gone, database locked
        raise cannot_open(url, exc) from exc
    finally:
        await close_engine(engine)
