"""SNMP agents of the boards: endpoints, the stored reference, and the secrets file.

The stored form, :meth:`SnmpRef.text`, holds no secret: SNMPv3 passphrases and v2c
communities come from the SNMP secrets file (:class:`SnmpSecrets`, ``--snmp-secrets`` or
``$REELGATE_SNMP_SECRETS``) or inline in the floor file, used for one run, never stored.
"""

from __future__ import annotations

import os
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.errors import OperatorError

if TYPE_CHECKING:  # imported when used: pysnmp is slow to load and the CLI loads this
    from protocols.snmp.security import Security


SNMP_KEYS = ("snmp", "community", "snmp_user", "snmp_auth", "snmp_priv")




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
class InlineSnmp:
    """A parsed ``snmp`` setting: the storable reference plus any secrets given with it."""

    ref: SnmpRef
    community: str | None = None
    auth: str | None = None
    priv: str | None = None


def parse_snmp_parts(
    uri: str,
    *,
    community: str | None = None,
    user: str | None = None,
    auth: str | None = None,
    priv: str | None = None,
) -> InlineSnmp:
    host, port, query = _split_uri(uri)
    version = query.get("version")
    community = community if community is not None else query.get("community")
    user = user if user is not None else query.get("user")
    auth = auth if auth is not None else query.get("auth")
    priv = priv if priv is not None else query.get("priv")
    if community is not None or version == "2c":
        if user is not None or auth is not None or priv is not None or version == "3":
            raise ValueError("snmp: give a v2c community or a v3 user, not both")
        if community is not None and not community:
            raise ValueError("SNMP community is empty")
        return InlineSnmp(SnmpRef(host, port, None), community=community)
    return _inline_v3(host, port, user, auth, priv)


def _split_uri(uri: str) -> tuple[str, int, dict[str, str]]:
    """``udp://host:port?query`` checked: host, port (161 by default) and the options."""
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
    if query.get("version") not in (None, "2c", "3"):
        raise ValueError(f"snmp {uri!r}: version must be 2c or 3")
    return parts.hostname, port, query


def _inline_v3(
    host: str, port: int, user: str | None, auth: str | None, priv: str | None
) -> InlineSnmp:
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
    return InlineSnmp(SnmpRef(host, port, user), auth=auth, priv=priv)


def _check_passphrases(auth: str, priv: str) -> None:
    # Same floor as protocols.snmp.security.V3User, checked without loading pysnmp.
    if len(auth) < 8 or len(priv) < 8:
        raise ValueError("SNMPv3 auth and priv pass phrases need at least 8 characters")


def parse_snmp_ref(text: str) -> SnmpRef:
    """The stored text of :meth:`SnmpRef.text` (secrets in an old text are ignored)."""
    return parse_snmp_parts(text).ref


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
    inline = parse_snmp_parts(uri, community=community, user=user, auth=auth, priv=priv)
    if inline.community is None and inline.auth is None:
        raise ValueError(f"snmp {inline.ref.text()!r}: its passphrases or community are missing")
    secrets = SnmpSecrets().with_inline("-", inline)
    return secrets.endpoint_or_value_error("-", inline.ref)


SECRETS_HINT = "--snmp-secrets or REELGATE_SNMP_SECRETS"


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

    def with_inline(self, machine_id: str, inline: InlineSnmp) -> SnmpSecrets:
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
                    f'community.endpoints."{ref.address}" ({SECRETS_HINT})'
                )
            security = V2cCommunity(community)
        else:
            keys = self.users.get(ref.user)
            if keys is None:
                raise ValueError(
                    f"no SNMPv3 passphrases: set v3_users.{ref.user}.auth and "
                    f"v3_users.{ref.user}.priv ({SECRETS_HINT})"
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
    users = {
        user: _v3_keys(keys, f"{source}: v3_users.{user}")
        for user, keys in _table(data, "v3_users", source).items()
    }
    community = _table(data, "community", source)
    extra = sorted(set(community) - {"machines", "endpoints"})
    if extra:
        raise OperatorError(f"{source}: community.{extra[0]}: unknown key (machines, endpoints)")
    machines = _communities(community, "machines", source)
    endpoints = _communities(community, "endpoints", source)
    return SnmpSecrets(users, machines, endpoints)


def _v3_keys(keys: Any, where: str) -> tuple[str, str]:
    """One ``[v3_users.NAME]`` table: its (auth, priv) pass phrases, checked."""
    if not isinstance(keys, dict):
        raise OperatorError(f"{where}: must be a table with auth and priv")
    extra = sorted(set(keys) - {"auth", "priv"})
    if extra:
        raise OperatorError(f"{where}: unknown key {extra[0]!r}")
    auth, priv = keys.get("auth"), keys.get("priv")
    if not isinstance(auth, str):
        raise OperatorError(f"{where}.auth: must be a string")
    if not isinstance(priv, str):
        raise OperatorError(f"{where}.priv: must be a string")
    try:
        _check_passphrases(auth, priv)
    except ValueError as exc:
        raise OperatorError(f"{where}: {exc}") from None
    return auth, priv


def _communities(community: Mapping[str, Any], kind: str, source: str) -> dict[str, str]:
    """``[community.machines]`` or ``[community.endpoints]`` (keys normalised to the
    endpoint's address, so ``udp://h`` and ``udp://h:161`` are one)."""
    found: dict[str, str] = {}
    for key, value in _table(community, kind, f"{source}: community").items():
        if not isinstance(value, str) or not value:
            raise OperatorError(f"{source}: community.{kind}.{key}: must be a non-empty string")
        if kind == "endpoints":
            try:
                key = parse_snmp_parts(key, community=value).ref.address
            except ValueError as exc:
                raise OperatorError(f"{source}: community.endpoints: {exc}") from None
        found[key] = value
    return found


def _table(data: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise OperatorError(f"{source}: {key} must be a table")
    return value


SECRETS_ENV = "REELGATE_SNMP_SECRETS"


def load_snmp_secrets(path: str | None, *, inline: SnmpSecrets | None = None) -> SnmpSecrets:
    """The run's SNMP secrets: the file at ``path`` (else ``$REELGATE_SNMP_SECRETS``, else
    none) with ``inline`` (the floor file's own, ``Floor.secrets``) over them."""
    path = path or os.environ.get(SECRETS_ENV) or None
    secrets = SnmpSecrets()
    if path:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise OperatorError(f"--snmp-secrets {p}: cannot read ({exc.strerror})") from None
        secrets = parse_snmp_secrets(text, source=str(p))
    if inline is not None:
        secrets = secrets.merged(inline)
    return secrets
