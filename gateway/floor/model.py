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

A host-timed machine (no native tournament mode) gets its credits by AFT funds
transfer, and a real EGM transfers only for the host registered with it: give the
gateway's AFT registration key (``aft_registration_key``, 40 hex digits = 20 bytes) and
POS ID (``aft_pos_id``, 1..4294967295) once per bank, or per machine where one differs
(a machine's own value wins)::

    [[bank]]
    name = "B"
    aft_registration_key = "0123456789abcdef0123456789abcdef01234567"
    aft_pos_id = 9001
    machines = [ { id = "B01", endpoint = "sas+tcp://127.0.0.1:7101", aft_pos_id = 9002 } ]

The key is no secret: any host on the loop reads it back with SAS LP 73, so it is stored
with the machine.

A machine whose board runs an SNMP agent names it with ``snmp`` plus either an SNMPv3
authPriv user (``snmp_user``, the default and the recommended) or v2c (legacy boards,
tests); :mod:`gateway.machines.health` then polls it and receives its traps.  The stored form,
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

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.errors import OperatorError
from gateway.floor.snmp import (
    SNMP_KEYS,
    InlineSnmp,
    SnmpEndpoint,
    SnmpRef,
    SnmpSecrets,
    parse_snmp_parts,
    parse_snmp_ref,
)

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
ENDPOINT_PATTERN = re.compile(r"^[a-z][a-z0-9+.-]*://\S+$")
AFT_KEY_PATTERN = re.compile(r"^[0-9a-fA-F]{40}$")
AFT_KEYS = ("aft_registration_key", "aft_pos_id")


@dataclass(frozen=True, slots=True)
class AftHostFields:
    """The AFT registration key and POS ID given at one level (bank or machine)."""

    registration_key: str | None = None
    pos_id: int | None = None

    def over(self, default: AftHostFields) -> AftHostFields:
        """These values, each one missing taken from ``default`` (the bank's)."""
        key = self.registration_key
        return AftHostFields(
            key if key is not None else default.registration_key,
            self.pos_id if self.pos_id is not None else default.pos_id,
        )


def parse_aft_fields(raw: Mapping[str, Any], where: str) -> AftHostFields:
    """``aft_registration_key`` / ``aft_pos_id`` from a bank or machine table, checked."""
    key, pos = raw.get("aft_registration_key"), raw.get("aft_pos_id")
    if key is not None:
        if not isinstance(key, str) or not AFT_KEY_PATTERN.match(key):
            raise OperatorError(f"{where}: aft_registration_key must be 40 hex digits (20 bytes)")
        if not int(key, 16):
            raise OperatorError(f"{where}: aft_registration_key must not be all zero")
        key = key.lower()
    if pos is not None and (
        not isinstance(pos, int) or isinstance(pos, bool) or not 1 <= pos <= 0xFFFFFFFF
    ):
        raise OperatorError(f"{where}: aft_pos_id must be a whole number 1..4294967295")
    return AftHostFields(key, pos)


def check_aft_pair(fields: AftHostFields, where: str) -> None:
    """Both or neither: a key without a POS ID (or the reverse) registers nobody."""
    if (fields.registration_key is None) != (fields.pos_id is None):
        missing = "aft_pos_id" if fields.pos_id is None else "aft_registration_key"
        raise OperatorError(f"{where}: {missing} missing (AFT needs the key and the POS ID)")


@dataclass(frozen=True, slots=True)
class MachineSpec:
    id: str
    endpoint: str
    bank: str
    position: int
    excluded_reason: str | None = None
    snmp: str | None = None  # stored text of its board's SNMP agent (:meth:`SnmpRef.text`)
    aft_registration_key: str | None = None  # 40 lower-case hex digits (SAS LP 73 key)
    aft_pos_id: int | None = None  # 1..4294967295, with the key

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
        extra = sorted(set(raw) - {"name", "machines", *AFT_KEYS})
        if extra:
            raise OperatorError(f"{where}: unknown key {extra[0]!r}")
        name = raw.get("name")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise OperatorError(f"{where}: name must be 1-32 letters, digits, '_', '-' or '.'")
        if name in banks:
            raise OperatorError(f"{where}: bank name {name!r} used twice")
        bank_aft = parse_aft_fields(raw, f"{where} ({name})")
        machines_raw = raw.get("machines")
        if not isinstance(machines_raw, list) or not machines_raw:
            raise OperatorError(f"{where} ({name}): machines must be a non-empty list")
        machines: list[MachineSpec] = []
        for m_index, m in enumerate(machines_raw, start=1):
            m_where = f"{where} ({name}) machine #{m_index}"
            spec, inline = _machine(m, m_where, name, m_index, seen, bank_aft)
            if inline is not None:
                secrets = _add_inline(secrets, spec.id, inline, m_where)
            machines.append(spec)
        banks[name] = BankSpec(name=name, machines=tuple(machines))
    return Floor(banks=banks, secrets=secrets)


def _add_inline(
    secrets: SnmpSecrets, machine_id: str, inline: InlineSnmp, where: str
) -> SnmpSecrets:
    user = inline.ref.user
    if (
        user is not None
        and inline.auth is not None
        and user in secrets.users
        and secrets.users[user] != (inline.auth, inline.priv)
    ):
        raise OperatorError(
            f"{where} ({machine_id}): SNMPv3 user {user!r} given other passphrases before"
        )
    return secrets.with_inline(machine_id, inline)


def _machine(
    raw: Any,
    where: str,
    bank: str,
    position: int,
    seen: dict[str, str],
    bank_aft: AftHostFields,
) -> tuple[MachineSpec, InlineSnmp | None]:
    if not isinstance(raw, dict):
        raise OperatorError(f"{where}: must be an inline table {{ id = ..., endpoint = ... }}")
    extra = sorted(set(raw) - {"id", "endpoint", *SNMP_KEYS, *AFT_KEYS})
    if extra:
        raise OperatorError(f"{where}: unknown key {extra[0]!r}")
    machine_id = raw.get("id")
    endpoint = raw.get("endpoint")
    if not isinstance(machine_id, str) or not NAME_PATTERN.match(machine_id):
        raise OperatorError(f"{where}: id must be 1-32 letters, digits, '_', '-' or '.'")
    if not isinstance(endpoint, str) or not ENDPOINT_PATTERN.match(endpoint):
        raise OperatorError(f"{where} ({machine_id}): endpoint must be a URI like sas+tcp://h:p")
    if machine_id in seen:
        raise OperatorError(
            f"{where}: machine id {machine_id!r} already in bank {seen[machine_id]}"
        )
    seen[machine_id] = bank
    inline: InlineSnmp | None = None
    if any(k in raw for k in SNMP_KEYS):
        inline = _snmp_field(raw, f"{where} ({machine_id})")
    snmp = None if inline is None else inline.ref.text()  # the stored form: no secret
    aft = parse_aft_fields(raw, f"{where} ({machine_id})").over(bank_aft)
    check_aft_pair(aft, f"{where} ({machine_id})")
    spec = MachineSpec(
        id=machine_id,
        endpoint=endpoint,
        bank=bank,
        position=position,
        snmp=snmp,
        aft_registration_key=aft.registration_key,
        aft_pos_id=aft.pos_id,
    )
    return spec, inline


def _snmp_field(raw: dict[str, Any], where: str) -> InlineSnmp:
    values = {k: raw.get(k) for k in SNMP_KEYS}
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise OperatorError(f"{where}: {key} must be a string")
    if values["snmp"] is None:
        raise OperatorError(f'{where}: SNMP credentials without snmp = "udp://host:port"')
    try:
        return parse_snmp_parts(
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


def resolve_snmp(machines: Iterable[MachineSpec], secrets: SnmpSecrets) -> dict[str, SnmpEndpoint]:
    """Every machine with an SNMP agent -> its endpoint with secrets.  Raises an
    OperatorError for the first machine whose secret is missing (checked at start-up)."""
    out: dict[str, SnmpEndpoint] = {}
    for m in machines:
        ref = m.snmp_ref()
        if ref is not None:
            out[m.id] = secrets.endpoint(m.id, ref)
    return out
