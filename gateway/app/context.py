"""What every gateway command opens: the database, the journal writer, the floor.

The database (``--database``, see :mod:`gateway.app.database`) must be at this
Reelgate's revision; ``--floor`` seeds banks and machines the database does not know yet
(the database is the truth after that) and is validated whole, every machine's endpoint
parsed by its driver, before anything is stored; ``--spool`` names the local file that
keeps journal writes while the database is unreachable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from gateway.app.database import close_engine, guarded, open_engine
from gateway.app.database import upgrade as upgrade_database
from gateway.app.defaults import DEFAULT_SPOOL
from gateway.errors import OperatorError
from gateway.floor.aft import configure_driver
from gateway.floor.model import (
    BankSpec,
    Floor,
    MachineSpec,
    load_floor_file,
    parse_floor,
    resolve_snmp,
)
from gateway.floor.snmp import SnmpSecrets, load_snmp_secrets
from gateway.floor.store import load_floor, sync_floor
from gateway.heats.spool import JournalWriter
from gateway.machines.driver import MachineDriver
from gateway.machines.links import MachineLink, close_links, open_links
from gateway.machines.registry import check_endpoint
from storage.db import make_sessionmaker
from storage.journal import Journal


def load_floor_seed(path: str | Path) -> Floor:
    """The floor file, checked whole: TOML, names, and every endpoint by its driver's
    parser (one line naming the machine), so nothing of a bad file is ever stored."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as exc:
        raise OperatorError(f"--floor {p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise OperatorError(f"--floor {p}: not UTF-8 text (byte {exc.start})") from None
    floor = parse_floor(text, source=str(p))
    for bank in floor.banks.values():
        for machine in bank.machines:
            check_endpoint(machine.id, machine.endpoint)
    return floor


def snmp_secrets_for(
    path: str | None, floor_path: str | None, machines: Iterable[MachineSpec]
) -> SnmpSecrets:
    """The run's SNMP secrets, checked at start-up: every machine with an SNMP agent must
    have its own (one-line OperatorError naming the machine and the key otherwise)."""
    inline = load_floor_file(floor_path).secrets if floor_path else None
    secrets = load_snmp_secrets(path, inline=inline)
    resolve_snmp(machines, secrets)
    return secrets


@dataclass
class GatewayContext:
    url: str
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    journal: Journal
    writer: JournalWriter
    floor: Floor
    venue: str | None = None  # multi-venue: the venue whose banks this gateway serves

    @classmethod
    async def open(
        cls,
        *,
        database: str | None,
        floor_path: str | None,
        spool: str | Path | None = DEFAULT_SPOOL,
        upgrade: bool = False,
        venue: str | None = None,
    ) -> GatewayContext:
        """Open a database at this Reelgate's revision (``upgrade``: migrate it first,
        for tests and the demo's own fresh file).  ``venue``: a venue's gateway on a
        shared central database, which sees (and leases) its own venue's banks only."""
        seed = load_floor_seed(floor_path) if floor_path else None  # validate before writing
        if upgrade:
            await upgrade_database(database)
        url, engine = await open_engine(database)
        try:
            sessions = make_sessionmaker(engine)
            journal = Journal(sessions)
            writer = JournalWriter(journal, spool or DEFAULT_SPOOL)  # None: a parser not run by cli
            await guarded(url, writer.flush())  # anything kept during an outage goes in first
            floor = await guarded(
                url,
                sync_floor(sessions, seed, venue=venue)
                if seed
                else load_floor(sessions, venue=venue),
            )
        except BaseException:
            await engine.dispose()
            raise
        return cls(url, engine, sessions, journal, writer, floor, venue)

    async def reload_floor(self) -> Floor:
        self.floor = await load_floor(self.sessions, venue=self.venue)
        return self.floor

    def bank(self, name: str) -> BankSpec:
        return self.floor.bank(name)

    async def close(self) -> None:
        await self.writer.close()
        with contextlib.suppress(Exception):
            await close_engine(self.engine)  # the witness settled (serve: a last checkpoint)


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
    specs = {m.id: m for m in bank.machines}

    def build(machine_id: str, endpoint: str) -> MachineDriver:
        driver: MachineDriver = made(machine_id, endpoint)
        return configure_driver(driver, specs.get(machine_id))  # the floor's AFT identity

    return await open_links(machines, build)


__all__ = ["GatewayContext", "bank_links", "check_endpoint", "close_links", "load_floor_seed"]
