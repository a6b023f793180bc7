"""A PostgreSQL URL that names several hosts: a primary and its streaming replicas.

Reelgate writes, so it must always reach the primary.  libpq says so with a host list
and ``target_session_attrs=read-write``; asyncpg takes the same (it tries the hosts in
order and keeps the first that accepts writes), and SQLAlchemy hands it over from the
query string.  This module turns every libpq spelling into the one SQLAlchemy's asyncpg
dialect reads (``?host=h1:p1&host=h2:p2``, each host with its port) and refuses what
would let a writer land on a replica:

* ``postgresql://u@h1:5433,h2:5434/db`` (libpq's host list in the authority);
* ``?host=h1,h2&port=5433,5434`` or ``?host=h1:5433,h2:5434`` (comma lists);
* ``?host=h1:5433&host=h2:5434`` (SQLAlchemy's own form).

A host without a port gets 5432 (the asyncpg dialect wants every port spelt out).  With
more than one host ``target_session_attrs`` defaults to ``read-write``; ``primary``
(the same thing on PostgreSQL 14+) is accepted too; ``any``, ``read-only``, ``standby``
and ``prefer-standby`` are refused: no Reelgate engine reads from a replica (none is
named as such).  A single-host URL is left as it is.

Pure: strings in, a string or :class:`HostListError` (one line) out; and
:class:`PrimaryConnector`, which walks the list one host at a time.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

DEFAULT_PORT = 5432
WRITABLE = ("read-write", "primary")
KNOWN_ATTRS = (*WRITABLE, "any", "read-only", "standby", "prefer-standby")
# scheme://[user[:pw]@]hosts/rest — the authority's host list, when it has a comma.
_AUTHORITY = re.compile(
    r"^(?P<scheme>[^:/]+://)(?P<user>[^@/]*@)?(?P<hosts>[^/?]*,[^/?]*)(?P<rest>.*)$"
)


class HostListError(ValueError):
    """A multi-host URL Reelgate cannot use; the message is one line."""


def _is_postgres(url: URL) -> bool:
    return url.get_backend_name() in ("postgresql", "postgres")


def lift_host_list(raw: str) -> str:
    """``scheme://u@h1:p1,h2:p2/db?x`` → ``scheme://u@/db?x&host=h1:p1&host=h2:p2``."""
    found = _AUTHORITY.match(raw)
    if found is None:
        return raw
    rest = found["rest"] or "/"
    path, _, query = rest.partition("?")
    hosts = "&".join(f"host={h}" for h in found["hosts"].split(","))
    query = f"{query}&{hosts}" if query else hosts
    return f"{found['scheme']}{found['user'] or ''}{path}?{query}"


def _split(entry: str) -> tuple[str, str | None]:
    host, sep, port = entry.strip().rpartition(":")
    if not sep:
        return entry.strip(), None
    return host, port


def hosts_of(url: URL) -> list[tuple[str, int]]:
    """The (host, port) pairs the URL names in its query string, in order."""
    given = url.query.get("host")
    if given is None:
        return []
    entries = [given] if isinstance(given, str) else list(given)
    pairs = [_split(part) for entry in entries for part in entry.split(",")]
    ports_given = url.query.get("port")
    if ports_given is not None:
        if any(p is not None for _, p in pairs):
            raise HostListError("give each host's port either as host:port or in port=, not both")
        ports = ports_given.split(",") if isinstance(ports_given, str) else list(ports_given)
        if len(ports) == 1:
            ports = ports * len(pairs)
        if len(ports) != len(pairs):
            raise HostListError(f"{len(pairs)} hosts but {len(ports)} ports")
        pairs = [(h, p) for (h, _), p in zip(pairs, ports, strict=True)]
    out: list[tuple[str, int]] = []
    for host, port in pairs:
        if not host:
            raise HostListError("an empty host in the host list")
        if port is None or port == "":
            out.append((host, DEFAULT_PORT))
            continue
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise HostListError(f"host {host}: port {port!r} is not a port number")
        out.append((host, int(port)))
    return out


def primary_url(raw: str) -> str:
    """``raw`` with its host list in the form asyncpg reads and writes sent to the
    primary; unchanged when it is not PostgreSQL or names one host."""
    lifted = lift_host_list(raw)
    try:
        url = make_url(lifted)
    except (ArgumentError, ValueError) as exc:
        raise HostListError(f"not a database URL ({exc})") from None
    if not _is_postgres(url):
        return raw
    attrs = url.query.get("target_session_attrs")
    if attrs is not None and (not isinstance(attrs, str) or attrs not in KNOWN_ATTRS):
        raise HostListError(
            f"target_session_attrs={attrs!r}: use read-write (Reelgate writes to the primary)"
        )
    pairs = hosts_of(url)
    if len(pairs) <= 1 and lifted == raw:
        if attrs is not None and attrs not in WRITABLE:
            raise HostListError(
                f"target_session_attrs={attrs}: Reelgate writes, so it needs the primary "
                "(use read-write)"
            )
        return raw
    if url.host or url.port:
        raise HostListError("name the hosts either before the database name or in host=, not both")
    if len(pairs) != len(set(pairs)):
        raise HostListError("a host is named twice in the host list")
    if attrs is None:
        attrs = "read-write" if len(pairs) > 1 else None
    elif attrs not in WRITABLE:
        raise HostListError(
            f"target_session_attrs={attrs}: Reelgate writes, so it needs the primary "
            "(use read-write)"
        )
    query = {k: v for k, v in url.query.items() if k not in ("host", "port")}
    query["host"] = tuple(f"{h}:{p}" for h, p in pairs)
    if attrs is not None:
        query["target_session_attrs"] = attrs
    return url.set(query=query).render_as_string(hide_password=False)


PER_HOST_TIMEOUT_S = 5.0


class PrimaryConnector:
    """asyncpg's connect for a host list, one host at a time, each with its own timeout.

    asyncpg walks a host list inside one timeout: a host that is powered off (no TCP
    reset, no answer) would eat the whole of it at every connect, and the next host would
    never be tried.  This tries each host alone (``target_session_attrs`` still decides
    whether it will do), the one that last answered as primary first, so after a
    failover only the first connect pays for the dead host.  When no host will do it
    raises :class:`ConnectionError` (an outage to the spool and the API, like a refused
    connection).  Handed to SQLAlchemy's asyncpg dialect as ``async_creator_fn``.
    """

    def __init__(self) -> None:
        self.last_good: tuple[str, int] | None = None

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import asyncpg  # type: ignore[import-untyped]  # only PostgreSQL engines need it

        hosts, ports = kwargs.pop("host"), kwargs.pop("port")
        if isinstance(hosts, list):
            pairs = list(zip(hosts, ports, strict=True))
        else:
            pairs = [(hosts, ports)]
        if self.last_good in pairs:
            pairs.remove(self.last_good)
            pairs.insert(0, self.last_good)
        kwargs.setdefault("timeout", PER_HOST_TIMEOUT_S)
        failures: list[str] = []
        for host, port in pairs:
            try:
                conn = await asyncpg.connect(*args, host=host, port=port, **kwargs)
            except (OSError, TimeoutError, asyncpg.TargetServerAttributeNotMatched) as exc:
                failures.append(f"{host}:{port}: {exc or type(exc).__name__}")
                continue
            self.last_good = (host, port)
            return conn
        attrs = kwargs.get("target_session_attrs") or "any"
        raise ConnectionError(f"no host is {attrs} ({'; '.join(failures)})")
