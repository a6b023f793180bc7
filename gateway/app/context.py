"""What every gateway command opens: the database, the journal writer, the floor.

``--database`` (or ``REELGATE_DATABASE_URL``, or the embedded SQLite file) is migrated
to head before use; ``--floor`` seeds banks and machines the database does not know yet
(the database is the truth after that); ``--spool`` names the local file that keeps
journal writes while the database is unreachable.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from gateway.floor.model import BankSpec, Floor, load_floor_file
from gateway.floor.store import load_floor, sync_floor
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import MachineDriver
from gateway.machines.links import MachineLink, close_links, open_links
from storage.db import Base, database_url, make_engine, make_sessionmaker
from storage.journal import Journal

DEFAULT_SPOOL = Path("reelgate-journal.spool")


def add_common_arguments(parser: argparse.ArgumentParser, *, floor_required: bool) -> None:
    parser.add_argument(
        "--floor", required=floor_required, help="floor file (TOML) naming banks and machines"
    )
    parser.add_argument("--database", help="database URL (default: REELGATE_DATABASE_URL)")
    parser.add_argument(
        "--spool",
        default=str(DEFAULT_SPOOL),
        help="local file keeping journal writes while the database is unreachable",
    )


async def prepare_database(engine: AsyncEngine) -> None:
    """Migrate to head, then check that every table of the running code exists."""
    from storage.migrate import upgrade_async

    await upgrade_async(engine)
    import storage.models  # noqa: F401  (registers every table)

    def missing(conn: Any) -> list[str]:
        have = set(inspect(conn).get_table_names())
        return [t for t in Base.metadata.tables if t not in have]

    async with engine.connect() as conn:
        absent = await conn.run_sync(missing)
    if absent:
        # Never patched up with create_all: a later migration would then collide with it.
        raise OperatorError(
            f"database: tables {', '.join(sorted(absent)[:3])} have no migration yet "
            "(python -m storage.migrate revision -m ...)"
        )


@dataclass
class GatewayContext:
    url: str
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    journal: Journal
    writer: JournalWriter
    floor: Floor

    @classmethod
    async def open(
        cls,
        *,
        database: str | None,
        floor_path: str | None,
        spool: str | Path = DEFAULT_SPOOL,
        migrate: bool = True,
    ) -> GatewayContext:
        seed = load_floor_file(floor_path) if floor_path else None  # validate before writing
        url = database_url(database)
        engine = make_engine(url)
        try:
            if migrate:
                await prepare_database(engine)
            sessions = make_sessionmaker(engine)
            journal = Journal(sessions)
            writer = JournalWriter(journal, spool)
            await writer.flush()  # anything kept during an outage goes in first
            floor = await (sync_floor(sessions, seed) if seed else load_floor(sessions))
        except BaseException:
            await engine.dispose()
            raise
        return cls(url, engine, sessions, journal, writer, floor)

    async def reload_floor(self) -> Floor:
        self.floor = await load_floor(self.sessions)
        return self.floor

    def bank(self, name: str) -> BankSpec:
        return self.floor.bank(name)

    async def close(self) -> None:
        await self.writer.close()
        with contextlib.suppress(Exception):
            await self.engine.dispose()


def driver_factory() -> Any:
    from gateway.machines.registry import open_driver

    return open_driver


async def bank_links(
    bank: BankSpec, *, include_excluded: bool = False, factory: Any = None
) -> tuple[dict[str, MachineLink], dict[str, str]]:
    machines: Mapping[str, str] = {
        m.id: m.endpoint for m in (bank.machines if include_excluded else bank.active)
    }
    if not machines:
        raise OperatorError(f"bank {bank.name}: no machine to talk to")
    made: Any = factory or driver_factory()

    def build(machine_id: str, endpoint: str) -> MachineDriver:
        driver: MachineDriver = made(machine_id, endpoint)
        return driver

    return await open_links(machines, build)


__all__ = ["GatewayContext", "add_common_arguments", "bank_links", "close_links"]
