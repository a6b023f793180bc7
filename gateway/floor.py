"""The floor model: tournament banks and their machines.

A floor file (TOML) is the starting point::

    [[bank]]
    name = "A"
    machines = [
      { id = "A01", endpoint = "sas+tcp://127.0.0.1:7001" },
      { id = "A02", endpoint = "sas+serial:///dev/ttyS1?address=3" },
      { id = "A03", endpoint = "mqtt://127.0.0.1/site/A03",
        snmp = "udp://127.0.0.1:1161", snmp_user = "ops",
        snmp_auth = "auth-pass", snmp_priv = "priv-pass" },   # SNMPv3 authPriv
      { id = "A04", endpoint = "...", snmp = "udp://127.0.0.1:1162", community = "public" },
    ]

A machine whose board runs an SNMP agent names it with ``snmp`` plus either SNMPv3
authPriv credentials (``snmp_user``/``snmp_auth``/``snmp_priv``, the default and the
recommended) or a v2c ``community`` (legacy boards, tests); :mod:`gateway.health` then
polls it and receives its traps.  The stored form is one text, :func:`snmp_text`.

:func:`sync_floor` seeds the database with any bank or machine it does not know yet;
after that the database is the truth: a machine a technician added or moved at run time
(:func:`add_machine`, :func:`move_machine`) keeps its stored bank and endpoint even if
the file still says otherwise.
"""

from __future__ import annotations

import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.errors import OperatorError
from storage import audit
from storage.floor import FloorBank, FloorMachine

if TYPE_CHECKING:  # imported when used: pysnmp is slow to load and the CLI loads this
    from protocols.snmp.security import Security

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
_ENDPOINT = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$")
_SNMP_KEYS = ("snmp", "community", "snmp_user", "snmp_auth", "snmp_priv")


@dataclass(frozen=True, slots=True)
class SnmpEndpoint:
    """Where a board's SNMP agent listens and how to talk to it."""

    host: str
    port: int
    security: Security


def snmp_text(endpoint: SnmpEndpoint) -> str:
    """The stored form: ``udp://host:port?community=c`` or ``?user=u&auth=a&priv=p``."""
    from protocols.snmp.security import V2cCommunity

    sec = endpoint.security
    if isinstance(sec, V2cCommunity):
        query = {"community": sec.community}
    else:
        query = {"user": sec.user, "auth": sec.auth_key, "priv": sec.priv_key}
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"udp://{host}:{endpoint.port}?{urllib.parse.urlencode(query)}"


def parse_snmp(
    uri: str,
    *,
    community: str | None = None,
    user: str | None = None,
    auth: str | None = None,
    priv: str | None = None,
) -> SnmpEndpoint:
    """``udp://host:port`` plus credentials (given here or in the URI's query).  Raises
    ``ValueError`` naming what is wrong; a half-given v3 user is refused, never guessed."""
    from protocols.snmp.security import V2cCommunity, V3User

    parts = urllib.parse.urlsplit(uri)
    if parts.scheme != "udp" or not parts.hostname:
        raise ValueError(f"snmp {uri!r} must look like udp://host:port")
    try:
        port = parts.port or 161
    except ValueError:
        raise ValueError(f"snmp {uri!r}: bad port") from None
    if not 0 < port < 65536:
        raise ValueError(f"snmp {uri!r}: port must be 1-65535")
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - {"community", "user", "auth", "priv"})
    if unknown:
        raise ValueError(f"snmp {uri!r}: unknown option {unknown[0]!r}")
    community = community if community is not None else query.get("community")
    v3 = [
        user if user is not None else query.get("user"),
        auth if auth is not None else query.get("auth"),
        priv if priv is not None else query.get("priv"),
    ]
    security: Security
    if community is not None:
        if any(x is not None for x in v3):
            raise ValueError("snmp: give a v2c community or a v3 user, not both")
        security = V2cCommunity(community)  # ValueError if empty
    elif all(x is not None for x in v3):
        security = V3User(str(v3[0]), str(v3[1]), str(v3[2]))  # ValueError: short keys
    else:
        raise ValueError(
            "snmp: needs snmp_user, snmp_auth and snmp_priv (v3 authPriv) or a community (v2c)"
        )
    return SnmpEndpoint(parts.hostname, port, security)


@dataclass(frozen=True, slots=True)
class MachineSpec:
    id: str
    endpoint: str
    bank: str
    position: int
    excluded_reason: str | None = None
    snmp: str | None = None  # stored text of its board's SNMP agent (:func:`snmp_text`)

    def snmp_endpoint(self) -> SnmpEndpoint | None:
        return None if self.snmp is None else parse_snmp(self.snmp)


@dataclass(frozen=True, slots=True)
class BankSpec:
    name: str
    machines: tuple[MachineSpec, ...]
    enabled: bool = False

    @property
    def active(self) -> tuple[MachineSpec, ...]:
        """Machines that take part in heats (not excluded at enable time)."""
        return tuple(m for m in self.machines if m.excluded_reason is None)


@dataclass(frozen=True, slots=True)
class Floor:
    banks: Mapping[str, BankSpec] = field(default_factory=dict)

    def bank(self, name: str) -> BankSpec:
        try:
            return self.banks[name]
        except KeyError:
            known = ", ".join(sorted(self.banks)) or "none"
            raise OperatorError(f"bank {name!r} is not on the floor (banks: {known})") from None

    def machine(self, machine_id: str) -> MachineSpec:
        for bank in self.banks.values():
            for m in bank.machines:
                if m.id == machine_id:
                    return m
        raise OperatorError(f"machine {machine_id!r} is not on the floor")


def parse_floor(text: str, source: str = "floor file") -> Floor:
    """Validate a floor file's text; every mistake names its field."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OperatorError(f"{source}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"bank"})
    if unknown:
        raise OperatorError(f"{source}: unknown key {unknown[0]!r} (expected [[bank]] tables)")
    banks_raw = data.get("bank", [])
    if not isinstance(banks_raw, list) or not banks_raw:
        raise OperatorError(f"{source}: needs at least one [[bank]] table")
    banks: dict[str, BankSpec] = {}
    seen: dict[str, str] = {}
    for b_index, raw in enumerate(banks_raw, start=1):
        where = f"{source}: bank #{b_index}"
        if not isinstance(raw, dict):
            raise OperatorError(f"{where}: must be a table")
        extra = sorted(set(raw) - {"name", "machines"})
        if extra:
            raise OperatorError(f"{where}: unknown key {extra[0]!r}")
        name = raw.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise OperatorError(f"{where}: name must be 1-32 letters, digits, '_', '-' or '.'")
        if name in banks:
            raise OperatorError(f"{where}: bank name {name!r} used twice")
        machines_raw = raw.get("machines")
        if not isinstance(machines_raw, list) or not machines_raw:
            raise OperatorError(f"{where} ({name}): machines must be a non-empty list")
        machines: list[MachineSpec] = []
        for m_index, m in enumerate(machines_raw, start=1):
            m_where = f"{where} ({name}) machine #{m_index}"
            machines.append(_machine(m, m_where, name, m_index, seen))
        banks[name] = BankSpec(name=name, machines=tuple(machines))
    return Floor(banks=banks)


def _machine(raw: Any, where: str, bank: str, position: int, seen: dict[str, str]) -> MachineSpec:
    if not isinstance(raw, dict):
        raise OperatorError(f"{where}: must be an inline table {{ id = ..., endpoint = ... }}")
    extra = sorted(set(raw) - {"id", "endpoint", *_SNMP_KEYS})
    if extra:
        raise OperatorError(f"{where}: unknown key {extra[0]!r}")
    machine_id = raw.get("id")
    endpoint = raw.get("endpoint")
    if not isinstance(machine_id, str) or not _NAME.match(machine_id):
        raise OperatorError(f"{where}: id must be 1-32 letters, digits, '_', '-' or '.'")
    if not isinstance(endpoint, str) or not _ENDPOINT.match(endpoint):
        raise OperatorError(f"{where} ({machine_id}): endpoint must be a URI like sas+tcp://h:p")
    if machine_id in seen:
        raise OperatorError(
            f"{where}: machine id {machine_id!r} already in bank {seen[machine_id]}"
        )
    seen[machine_id] = bank
    snmp: str | None = None
    if any(k in raw for k in _SNMP_KEYS):
        snmp = _snmp_field(raw, f"{where} ({machine_id})")
    return MachineSpec(id=machine_id, endpoint=endpoint, bank=bank, position=position, snmp=snmp)


def _snmp_field(raw: dict[str, Any], where: str) -> str:
    values = {k: raw.get(k) for k in _SNMP_KEYS}
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise OperatorError(f"{where}: {key} must be a string")
    if values["snmp"] is None:
        raise OperatorError(f'{where}: SNMP credentials without snmp = "udp://host:port"')
    try:
        endpoint = parse_snmp(
            str(values["snmp"]),
            community=values["community"],
            user=values["snmp_user"],
            auth=values["snmp_auth"],
            priv=values["snmp_priv"],
        )
    except ValueError as exc:
        raise OperatorError(f"{where}: {exc}") from None
    return snmp_text(endpoint)


def load_floor_file(path: str | Path) -> Floor:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise OperatorError(f"--floor {p}: cannot read ({exc.strerror})") from None
    return parse_floor(text, source=str(p))


async def sync_floor(sessions: async_sessionmaker[AsyncSession], seed: Floor) -> Floor:
    """Seed unknown banks and machines from the file, then return the stored floor."""
    now = datetime.now(UTC)
    async with sessions.begin() as session:
        known_banks = set((await session.scalars(select(FloorBank.name))).all())
        known_machines = set((await session.scalars(select(FloorMachine.machine_id))).all())
        for bank in seed.banks.values():
            if bank.name not in known_banks:
                session.add(FloorBank(name=bank.name, enabled=False))
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
                            updated_at=now,
                        )
                    )
                elif m.snmp is not None:
                    # A machine stored before SNMP was known: the file seeds what the
                    # database never had; a stored value stays the truth.
                    row = await session.get(FloorMachine, m.id)
                    if row is not None and row.snmp_endpoint is None:
                        row.snmp_endpoint, row.updated_at = m.snmp, now
    return await load_floor(sessions)


async def load_floor(sessions: async_sessionmaker[AsyncSession]) -> Floor:
    async with sessions() as session:
        banks = (await session.scalars(select(FloorBank).order_by(FloorBank.name))).all()
        machines = (
            await session.scalars(
                select(FloorMachine).order_by(FloorMachine.bank_name, FloorMachine.position)
            )
        ).all()
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
    actor: str = "technician",
) -> MachineSpec:
    """A technician adds a machine at run time; it goes to the end of the bank.
    ``snmp``: its board's agent with credentials in the query (:func:`parse_snmp`)."""
    if not _NAME.match(machine_id):
        raise OperatorError("machine id must be 1-32 letters, digits, '_', '-' or '.'")
    if not _ENDPOINT.match(endpoint):
        raise OperatorError(f"endpoint {endpoint!r} must be a URI like sas+tcp://host:port")
    if snmp is not None:
        try:
            snmp = snmp_text(parse_snmp(snmp))
        except ValueError as exc:
            raise OperatorError(f"--snmp: {exc}") from None
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
                updated_at=datetime.now(UTC),
            )
        )
        await session.flush()
        await audit.record(
            session,
            actor=actor,
            action="floor.add-machine",
            subject=f"machine:{machine_id}",
            # The SNMP endpoint without its credentials: the audit log is read widely.
            details={
                "bank": bank,
                "endpoint": endpoint,
                "position": position,
                "snmp": None if snmp is None else snmp.split("?", 1)[0],
            },
        )
    return MachineSpec(machine_id, endpoint, bank, position, snmp=snmp)


async def move_machine(
    sessions: async_sessionmaker[AsyncSession],
    machine_id: str,
    *,
    bank: str | None = None,
    endpoint: str | None = None,
    actor: str = "technician",
) -> MachineSpec:
    if endpoint is not None and not _ENDPOINT.match(endpoint):
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
