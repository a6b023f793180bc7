"""The floor model: tournament banks and their machines.

A floor file (TOML) is the starting point::

    [[bank]]
    name = "A"
    machines = [
      { id = "A01", endpoint = "sas+tcp://127.0.0.1:7001" },
      { id = "A02", endpoint = "sas+serial:///dev/ttyS1?address=3" },
      { id = "A03", endpoint = "mqtt://h/site/A03", snmp = "udp://h:1161", snmp_user = "ops" },
      { id = "A04", endpoint = "...", snmp = "udp://127.0.0.1:1162?version=2c" },
    ]

A machine whose board runs an SNMP agent names it with ``snmp`` plus either an SNMPv3
authPriv user (``snmp_user``, the default and the recommended) or v2c (legacy boards,
tests); :mod:`gateway.health` then polls it and receives its traps.  The stored form,
:meth:`SnmpRef.text`, holds no secret: the v3 passphrases and the v2c community come from
the SNMP secrets file (:class:`SnmpSecrets`, ``--snmp-secrets`` or
``$REELGATE_SNMP_SECRETS``) or, for convenience, inline in the floor file
(``snmp_auth``/``snmp_priv``, ``community``), used for the run and never stored.

:func:`sync_floor` seeds the database with any bank or machine it does not know yet;
after that the database is the truth: a machine a technician added or moved at run time
(:func:`add_machine`, :func:`move_machine`) keeps its stored bank and endpoint even if
the file still says otherwise.
"""

from __future__ import annotations

import os
import re
import tomllib
import urllib.parse
from collections.abc import Iterable, Mapping
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
    """Where a board's SNMP agent listens and how to talk to it (secrets included: held
    in memory for the run, never stored)."""

    host: str
    port: int
    security: Security


@dataclass(frozen=True, slots=True)
class SnmpRef:
    """What the database keeps of a board's SNMP agent: where it listens and which v3
    user it expects (``None``: SNMPv2c).  No passphrase, no community: those are secrets
    and come from the secrets file (:class:`SnmpSecrets`)."""

    host: str
    port: int
    user: str | None

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"udp://{host}:{self.port}"

    def text(self) -> str:
        """The stored form: ``udp://host:port?user=U`` (v3) or ``?version=2c``."""
        query = {"version": "2c"} if self.user is None else {"user": self.user}
        return f"{self.address}?{urllib.parse.urlencode(query)}"


@dataclass(frozen=True, slots=True)
class _InlineSnmp:
    """A parsed ``snmp`` setting: the storable reference plus any secrets given with it."""

    ref: SnmpRef
    community: str | None = None
    auth: str | None = None
    priv: str | None = None


def _parse_snmp_parts(
    uri: str,
    *,
    community: str | None = None,
    user: str | None = None,
    auth: str | None = None,
    priv: str | None = None,
) -> _InlineSnmp:
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
    unknown = sorted(set(query) - {"community", "user", "auth", "priv", "version"})
    if unknown:
        raise ValueError(f"snmp {uri!r}: unknown option {unknown[0]!r}")
    version = query.get("version")
    if version not in (None, "2c", "3"):
        raise ValueError(f"snmp {uri!r}: version must be 2c or 3")
    community = community if community is not None else query.get("community")
    user = user if user is not None else query.get("user")
    auth = auth if auth is not None else query.get("auth")
    priv = priv if priv is not None else query.get("priv")
    v2c = community is not None or version == "2c"
    if v2c:
        if user is not None or auth is not None or priv is not None or version == "3":
            raise ValueError("snmp: give a v2c community or a v3 user, not both")
        if community is not None and not community:
            raise ValueError("SNMP community is empty")
        return _InlineSnmp(SnmpRef(parts.hostname, port, None), community=community)
    if user is None:
        if auth is not None or priv is not None:
            raise ValueError("snmp: snmp_auth/snmp_priv without snmp_user")
        raise ValueError(
            "snmp: needs snmp_user (v3 authPriv, passphrases in the secrets file) "
            'or a community (v2c, or "?version=2c" with the community in the secrets file)'
        )
    if not user:
        raise ValueError("SNMPv3 user name is empty")
    if (auth is None) != (priv is None):
        raise ValueError("snmp: give both snmp_auth and snmp_priv, or neither (secrets file)")
    if auth is not None and priv is not None:
        _check_passphrases(auth, priv)
    return _InlineSnmp(SnmpRef(parts.hostname, port, user), auth=auth, priv=priv)


def _check_passphrases(auth: str, priv: str) -> None:
    # Same floor as protocols.snmp.security.V3User, checked without loading pysnmp.
    if len(auth) < 8 or len(priv) < 8:
        raise ValueError("SNMPv3 auth and priv pass phrases need at least 8 characters")


def parse_snmp_ref(text: str) -> SnmpRef:
    """The stored text of :meth:`SnmpRef.text` (secrets in an old text are ignored)."""
    return _parse_snmp_parts(text).ref


def snmp_text(endpoint: SnmpEndpoint) -> str:
    """The stored form of an endpoint: its :class:`SnmpRef` text, secrets left out."""
    from protocols.snmp.security import V2cCommunity

    sec = endpoint.security
    user = None if isinstance(sec, V2cCommunity) else sec.user
    return SnmpRef(endpoint.host, endpoint.port, user).text()


def parse_snmp(
    uri: str,
    *,
    community: str | None = None,
    user: str | None = None,
    auth: str | None = None,
    priv: str | None = None,
) -> SnmpEndpoint:
    """``udp://host:port`` plus every credential (given here or in the URI's query).
    Raises ``ValueError`` naming what is wrong; a half-given v3 user is refused."""
    inline = _parse_snmp_parts(uri, community=community, user=user, auth=auth, priv=priv)
    if inline.community is None and inline.auth is None:
        raise ValueError(f"snmp {inline.ref.text()!r}: its passphrases or community are missing")
    secrets = SnmpSecrets().with_inline("-", inline)
    return secrets.endpoint_or_value_error("-", inline.ref)


_V3_HINT = "--snmp-secrets or REELGATE_SNMP_SECRETS"


@dataclass(frozen=True, slots=True)
class SnmpSecrets:
    """SNMP secrets for this run, never stored: v3 passphrases per user, v2c community
    per machine or per endpoint (``udp://host:port``; a machine's own one wins).

    The secrets file (TOML)::

        [v3_users.ops]
        auth = "auth-pass"
        priv = "priv-pass"

        [community.machines]
        A04 = "public"

        [community.endpoints]
        "udp://127.0.0.1:1162" = "public"
    """

    users: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    machines: Mapping[str, str] = field(default_factory=dict)
    endpoints: Mapping[str, str] = field(default_factory=dict)

    def with_inline(self, machine_id: str, inline: _InlineSnmp) -> SnmpSecrets:
        """These secrets plus a floor file's inline ones for one machine (they win)."""
        users, machines = dict(self.users), dict(self.machines)
        if inline.ref.user is not None and inline.auth is not None and inline.priv is not None:
            users[inline.ref.user] = (inline.auth, inline.priv)
        if inline.community is not None:
            machines[machine_id] = inline.community
        return SnmpSecrets(users, machines, dict(self.endpoints))

    def merged(self, other: SnmpSecrets) -> SnmpSecrets:
        """``other``'s secrets over these (a floor file's inline ones over the file's)."""
        return SnmpSecrets(
            {**self.users, **other.users},
            {**self.machines, **other.machines},
            {**self.endpoints, **other.endpoints},
        )

    def endpoint_or_value_error(self, machine_id: str, ref: SnmpRef) -> SnmpEndpoint:
        from protocols.snmp.security import V2cCommunity, V3User

        security: Security
        if ref.user is None:
            community = self.machines.get(machine_id, self.endpoints.get(ref.address))
            if community is None:
                raise ValueError(
                    f"no SNMP community: set community.machines.{machine_id} or "
                    f'community.endpoints."{ref.address}" ({_V3_HINT})'
                )
            security = V2cCommunity(community)
        else:
            keys = self.users.get(ref.user)
            if keys is None:
                raise ValueError(
                    f"no SNMPv3 passphrases: set v3_users.{ref.user}.auth and "
                    f"v3_users.{ref.user}.priv ({_V3_HINT})"
                )
            security = V3User(ref.user, keys[0], keys[1])
        return SnmpEndpoint(ref.host, ref.port, security)

    def endpoint(self, machine_id: str, ref: SnmpRef) -> SnmpEndpoint:
        """The endpoint with its secrets; a missing one is a one-line OperatorError that
        names the machine and the key."""
        try:
            return self.endpoint_or_value_error(machine_id, ref)
        except ValueError as exc:
            raise OperatorError(f"machine {machine_id}: {exc}") from None


def parse_snmp_secrets(text: str, source: str = "SNMP secrets file") -> SnmpSecrets:
    """Validate a secrets file's text; every mistake names its key (never its value)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OperatorError(f"{source}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"v3_users", "community"})
    if unknown:
        raise OperatorError(f"{source}: unknown key {unknown[0]!r} (v3_users, community)")
    users: dict[str, tuple[str, str]] = {}
    for user, keys in _table(data, "v3_users", source).items():
        where = f"{source}: v3_users.{user}"
        if not isinstance(keys, dict):
            raise OperatorError(f"{where}: must be a table with auth and priv")
        extra = sorted(set(keys) - {"auth", "priv"})
        if extra:
            raise OperatorError(f"{where}: unknown key {extra[0]!r}")
        auth, priv = keys.get("auth"), keys.get("priv")
        for key, value in (("auth", auth), ("priv", priv)):
            if not isinstance(value, str):
                raise OperatorError(f"{where}.{key}: must be a string")
        assert isinstance(auth, str) and isinstance(priv, str)
        try:
            _check_passphrases(auth, priv)
        except ValueError as exc:
            raise OperatorError(f"{where}: {exc}") from None
        users[user] = (auth, priv)
    community = _table(data, "community", source)
    extra = sorted(set(community) - {"machines", "endpoints"})
    if extra:
        raise OperatorError(f"{source}: community.{extra[0]}: unknown key (machines, endpoints)")
    found: dict[str, dict[str, str]] = {}
    for kind in ("machines", "endpoints"):
        found[kind] = {}
        for key, value in _table(community, kind, f"{source}: community").items():
            if not isinstance(value, str) or not value:
                raise OperatorError(f"{source}: community.{kind}.{key}: must be a non-empty string")
            if kind == "endpoints":
                try:
                    key = _parse_snmp_parts(key, community=value).ref.address
                except ValueError as exc:
                    raise OperatorError(f"{source}: community.endpoints: {exc}") from None
            found[kind][key] = value
    return SnmpSecrets(users, found["machines"], found["endpoints"])


def _table(data: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise OperatorError(f"{source}: {key} must be a table")
    return value


SECRETS_ENV = "REELGATE_SNMP_SECRETS"


def load_snmp_secrets(path: str | None, *, floor_path: str | Path | None = None) -> SnmpSecrets:
    """The run's SNMP secrets: the file at ``path`` (else ``$REELGATE_SNMP_SECRETS``, else
    none) with the floor file's inline secrets over them."""
    path = path or os.environ.get(SECRETS_ENV) or None
    secrets = SnmpSecrets()
    if path:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise OperatorError(f"--snmp-secrets {p}: cannot read ({exc.strerror})") from None
        secrets = parse_snmp_secrets(text, source=str(p))
    if floor_path:
        secrets = secrets.merged(load_floor_file(floor_path).secrets)
    return secrets


def resolve_snmp(machines: Iterable[MachineSpec], secrets: SnmpSecrets) -> dict[str, SnmpEndpoint]:
    """Every machine with an SNMP agent -> its endpoint with secrets.  Raises an
    OperatorError for the first machine whose secret is missing (checked at start-up)."""
    out: dict[str, SnmpEndpoint] = {}
    for m in machines:
        ref = m.snmp_ref()
        if ref is not None:
            out[m.id] = secrets.endpoint(m.id, ref)
    return out


@dataclass(frozen=True, slots=True)
class MachineSpec:
    id: str
    endpoint: str
    bank: str
    position: int
    excluded_reason: str | None = None
    snmp: str | None = None  # stored text of its board's SNMP agent (:meth:`SnmpRef.text`)

    def snmp_ref(self) -> SnmpRef | None:
        return None if self.snmp is None else parse_snmp_ref(self.snmp)

    def snmp_endpoint(self, secrets: SnmpSecrets) -> SnmpEndpoint | None:
        ref = self.snmp_ref()
        return None if ref is None else secrets.endpoint(self.id, ref)


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
    # A floor file's inline SNMP secrets: used for this run, never stored.
    secrets: SnmpSecrets = field(default_factory=SnmpSecrets)

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
    secrets = SnmpSecrets()
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
            spec, inline = _machine(m, m_where, name, m_index, seen)
            if inline is not None:
                secrets = _add_inline(secrets, spec.id, inline, m_where)
            machines.append(spec)
        banks[name] = BankSpec(name=name, machines=tuple(machines))
    return Floor(banks=banks, secrets=secrets)


def _add_inline(
    secrets: SnmpSecrets, machine_id: str, inline: _InlineSnmp, where: str
) -> SnmpSecrets:
    user = inline.ref.user
    if user is not None and inline.auth is not None and user in secrets.users:
        if secrets.users[user] != (inline.auth, inline.priv):
            raise OperatorError(
                f"{where} ({machine_id}): SNMPv3 user {user!r} given other passphrases before"
            )
    return secrets.with_inline(machine_id, inline)


def _machine(
    raw: Any, where: str, bank: str, position: int, seen: dict[str, str]
) -> tuple[MachineSpec, _InlineSnmp | None]:
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
    inline: _InlineSnmp | None = None
    if any(k in raw for k in _SNMP_KEYS):
        inline = _snmp_field(raw, f"{where} ({machine_id})")
    snmp = None if inline is None else inline.ref.text()  # the stored form: no secret
    spec = MachineSpec(id=machine_id, endpoint=endpoint, bank=bank, position=position, snmp=snmp)
    return spec, inline


def _snmp_field(raw: dict[str, Any], where: str) -> _InlineSnmp:
    values = {k: raw.get(k) for k in _SNMP_KEYS}
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise OperatorError(f"{where}: {key} must be a string")
    if values["snmp"] is None:
        raise OperatorError(f'{where}: SNMP credentials without snmp = "udp://host:port"')
    try:
        return _parse_snmp_parts(
            str(values["snmp"]),
            community=values["community"],
            user=values["snmp_user"],
            auth=values["snmp_auth"],
            priv=values["snmp_priv"],
        )
    except ValueError as exc:
        raise OperatorError(f"{where}: {exc}") from None


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
    ``snmp``: its board's agent, ``udp://host:port?user=U`` (v3) or ``?version=2c``; its
    secrets belong in the SNMP secrets file, never in the database, so a URI carrying
    one is refused."""
    if not _NAME.match(machine_id):
        raise OperatorError("machine id must be 1-32 letters, digits, '_', '-' or '.'")
    if not _ENDPOINT.match(endpoint):
        raise OperatorError(f"endpoint {endpoint!r} must be a URI like sas+tcp://host:port")
    if snmp is not None:
        try:
            inline = _parse_snmp_parts(snmp)
        except ValueError as exc:
            raise OperatorError(f"--snmp: {exc}") from None
        if inline.community is not None or inline.auth is not None:
            raise OperatorError(
                "--snmp: no passphrase or community here (it would be stored); put it in "
                f"the SNMP secrets file ({_V3_HINT})"
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
                updated_at=datetime.now(UTC),
            )
        )
        await session.flush()
        await audit.record(
            session,
            actor=actor,
            action="floor.add-machine",
            subject=f"machine:{machine_id}",
            details={"bank": bank, "endpoint": endpoint, "position": position, "snmp": snmp},
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
