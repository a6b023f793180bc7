"""The floor in the database: seeding from a floor file, reading it back, and the
technician's changes (add, move, enable, disable), each audited."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from storage import audit
from storage.floor import FloorBank, FloorMachine

if TYPE_CHECKING:  # imported when used: pysnmp is slow to load and the CLI loads this
    pass


from gateway.floor.model import (
    ENDPOINT_PATTERN,
    NAME_PATTERN,
    BankSpec,
    Floor,
    MachineSpec,
    check_aft_pair,
    parse_aft_fields,
)
from gateway.floor.snmp import SECRETS_HINT, parse_snmp_parts


async def sync_floor(
    sessions: async_sessionmaker[AsyncSession], seed: Floor, *, venue: str | None = None
) -> Floor:
    """Seed unknown banks and machines from the file, then return the stored floor.

    ``venue``: this gateway serves one venue of a shared (central) database.  The file's
    banks are stamped with it (a bank no venue claimed yet is claimed) and only that
    venue's banks are returned; a bank of the file that another venue serves is refused in
    one line, before anything is written."""
    now = datetime.now(UTC)
    async with sessions.begin() as session:
        stored = {b.name: b for b in (await session.scalars(select(FloorBank))).all()}
        if venue is not None:
            _claim(stored, seed, venue)
        known_machines = set((await session.scalars(select(FloorMachine.machine_id))).all())
        for bank in seed.banks.values():
            if bank.name not in stored:
                session.add(FloorBank(name=bank.name, enabled=False, venue=venue))
        await session.flush()
        for bank in seed.banks.values():
            for m in bank.machines:
                if m.id not in known_machines:
                    session.add(
                        FloorMachine(
                            machine_id=m.id,
                            bank_name=bank.name,
                            position=m.position,
                            endpoint=m.endpoint,
                            snmp_endpoint=m.snmp,
                            aft_registration_key=m.aft_registration_key,
                            aft_pos_id=m.aft_pos_id,
                            updated_at=now,
                        )
                    )
                else:
                    row = await session.get(FloorMachine, m.id)
                    if row is not None:
                        _seed_missing(row, m, now)
    return await load_floor(sessions, venue=venue)


def _claim(stored: Mapping[str, FloorBank], seed: Floor, venue: str) -> None:
    """Stamp the file's stored banks with ``venue``; refuse one that is another's."""
    for name in seed.banks:
        row = stored.get(name)
        if row is None:
            continue
        if row.venue is not None and row.venue != venue:
            raise OperatorError(
                f"bank {name} is served by venue {row.venue!r}, not {venue!r}: "
                "rename the bank in this venue's floor file"
            )
        row.venue = venue


def _seed_missing(row: FloorMachine, m: MachineSpec, now: datetime) -> None:
    """A machine stored before SNMP or AFT was known: the file seeds what the database
    never had; a stored value stays the truth."""
    if m.snmp is not None and row.snmp_endpoint is None:
        row.snmp_endpoint, row.updated_at = m.snmp, now
    if m.aft_registration_key is not None and row.aft_registration_key is None:
        row.aft_registration_key, row.aft_pos_id = m.aft_registration_key, m.aft_pos_id
        row.updated_at = now


async def load_floor(
    sessions: async_sessionmaker[AsyncSession], *, venue: str | None = None
) -> Floor:
    """The stored floor; ``venue``: only the banks that venue's gateway serves."""
    async with sessions() as session:
        query = select(FloorBank).order_by(FloorBank.name)
        if venue is not None:
            query = query.where(FloorBank.venue == venue)
        banks = (await session.scalars(query)).all()
        mine = select(FloorMachine).order_by(FloorMachine.bank_name, FloorMachine.position)
        if venue is not None:
            mine = mine.where(FloorMachine.bank_name.in_([b.name for b in banks]))
        machines = (await session.scalars(mine)).all()
    by_bank: dict[str, list[MachineSpec]] = {b.name: [] for b in banks}
    for m in machines:
        by_bank[m.bank_name].append(
            MachineSpec(
                m.machine_id,
                m.endpoint,
                m.bank_name,
                m.position,
                m.excluded_reason,
                snmp=m.snmp_endpoint,
                aft_registration_key=m.aft_registration_key,
                aft_pos_id=m.aft_pos_id,
            )
        )
    return Floor(
        banks={b.name: BankSpec(b.name, tuple(by_bank[b.name]), enabled=b.enabled) for b in banks}
    )


async def add_machine(
    sessions: async_sessionmaker[AsyncSession],
    bank: str,
    machine_id: str,
    endpoint: str,
    *,
    snmp: str | None = None,
    aft_registration_key: str | None = None,
    aft_pos_id: int | None = None,
    actor: str = "technician",
) -> MachineSpec:
    """A technician adds a machine at run time; it goes to the end of the bank.
    ``snmp``: its board's agent, ``udp://host:port?user=U`` (v3) or ``?version=2c``; its
    secrets belong in the SNMP secrets file, never in the database, so a URI carrying
    one is refused.  ``aft_registration_key`` and ``aft_pos_id``: the gateway's AFT host
    identity for it (both or neither), as a floor file gives them."""
    aft = parse_aft_fields(
        {"aft_registration_key": aft_registration_key, "aft_pos_id": aft_pos_id}, "add-machine"
    )
    check_aft_pair(aft, "add-machine")
    if not NAME_PATTERN.match(machine_id):
        raise OperatorError("machine id must be 1-32 letters, digits, '_', '-' or '.'")
    if not ENDPOINT_PATTERN.match(endpoint):
        raise OperatorError(f"endpoint {endpoint!r} must be a URI like sas+tcp://host:port")
    if snmp is not None:
        try:
            inline = parse_snmp_parts(snmp)
        except ValueError as exc:
            raise OperatorError(f"--snmp: {exc}") from None
        if inline.community is not None or inline.auth is not None:
            raise OperatorError(
                "--snmp: no passphrase or community here (it would be stored); put it in "
                f"the SNMP secrets file ({SECRETS_HINT})"
            )
        snmp = inline.ref.text()
    async with sessions.begin() as session:
        if await session.get(FloorBank, bank) is None:
            session.add(FloorBank(name=bank, enabled=False))
            await session.flush()
        if await session.get(FloorMachine, machine_id) is not None:
            raise OperatorError(f"machine {machine_id!r} already on the floor (use move)")
        position = await _next_position(session, bank)
        session.add(
            FloorMachine(
                machine_id=machine_id,
                bank_name=bank,
                position=position,
                endpoint=endpoint,
                snmp_endpoint=snmp,
                aft_registration_key=aft.registration_key,
                aft_pos_id=aft.pos_id,
                updated_at=datetime.now(UTC),
            )
        )
        await session.flush()
        await audit.record(
            session,
            actor=actor,
            action="floor.add-machine",
            subject=f"machine:{machine_id}",
            details={
                "bank": bank,
                "endpoint": endpoint,
                "position": position,
                "snmp": snmp,
                "aft_pos_id": aft.pos_id,
                "aft_registration_key": aft.registration_key,
            },
        )
    return MachineSpec(
        machine_id,
        endpoint,
        bank,
        position,
        snmp=snmp,
        aft_registration_key=aft.registration_key,
        aft_pos_id=aft.pos_id,
    )


async def move_machine(
    sessions: async_sessionmaker[AsyncSession],
    machine_id: str,
    *,
    bank: str | None = None,
    endpoint: str | None = None,
    actor: str = "technician",
) -> MachineSpec:
    if endpoint is not None and not ENDPOINT_PATTERN.match(endpoint):
        raise OperatorError(f"endpoint {endpoint!r} must be a URI like sas+tcp://host:port")
    async with sessions.begin() as session:
        row = await session.get(FloorMachine, machine_id)
        if row is None:
            raise OperatorError(f"machine {machine_id!r} is not on the floor")
        if bank is not None and bank != row.bank_name:
            if await session.get(FloorBank, bank) is None:
                session.add(FloorBank(name=bank, enabled=False))
                await session.flush()
            row.position = await _next_position(session, bank)
            row.bank_name = bank
        if endpoint is not None:
            row.endpoint = endpoint
        row.updated_at = datetime.now(UTC)
        await session.flush()
        await audit.record(
            session,
            actor=actor,
            action="floor.move-machine",
            subject=f"machine:{machine_id}",
            details={"bank": row.bank_name, "endpoint": row.endpoint},
        )
        return MachineSpec(
            row.machine_id,
            row.endpoint,
            row.bank_name,
            row.position,
            row.excluded_reason,
            snmp=row.snmp_endpoint,
            aft_registration_key=row.aft_registration_key,
            aft_pos_id=row.aft_pos_id,
        )


async def set_bank_enabled(
    sessions: async_sessionmaker[AsyncSession],
    bank: str,
    *,
    enabled: bool,
    exclusions: Mapping[str, str] | None = None,
    actor: str = "technician",
) -> None:
    """Record a bank as enabled (with its excluded machines) or disabled (exclusions cleared)."""
    exclusions = dict(exclusions or {})
    async with sessions.begin() as session:
        row = await session.get(FloorBank, bank)
        if row is None:
            raise OperatorError(f"bank {bank!r} is not on the floor")
        row.enabled = enabled
        row.enabled_at = datetime.now(UTC) if enabled else None
        row.enabled_by = actor if enabled else None
        machines = (
            await session.scalars(select(FloorMachine).where(FloorMachine.bank_name == bank))
        ).all()
        ids = {m.machine_id for m in machines}
        unknown = sorted(set(exclusions) - ids)
        if unknown:
            raise OperatorError(f"--exclude {unknown[0]}: not a machine of bank {bank}")
        for m in machines:
            m.excluded_reason = exclusions.get(m.machine_id) if enabled else None
            m.updated_at = datetime.now(UTC)
        # Every change a person makes goes into the audit log, in the same transaction.
        await audit.record(
            session,
            actor=actor,
            action="bank.enable" if enabled else "bank.disable",
            subject=f"bank:{bank}",
            details={"machines": sorted(ids), "excluded": sorted(exclusions)},
        )
        for machine_id, reason in sorted(exclusions.items()):
            await audit.record(
                session,
                actor=actor,
                action="bank.exclude-machine",
                subject=f"machine:{machine_id}",
                reason=reason,
                details={"bank": bank},
            )


async def _next_position(session: AsyncSession, bank: str) -> int:
    current = await session.scalar(
        select(func.max(FloorMachine.position)).where(FloorMachine.bank_name == bank)
    )
    return int(current or 0) + 1
