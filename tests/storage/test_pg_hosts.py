"""A database URL naming a primary and its streaming replicas (issue 29 no. 1): every
libpq spelling of the host list becomes the one asyncpg reads through SQLAlchemy, with
``target_session_attrs=read-write`` so writes always land on the primary; what would let
a writer reach a replica is refused in one line; a single-host URL is left untouched."""

from __future__ import annotations

import pytest
from sqlalchemy.dialects.postgresql.asyncpg import PGDialect_asyncpg
from sqlalchemy.engine import make_url

from gateway.app.backups.pg_tools import libpq
from gateway.app.database import resolve
from gateway.errors import OperatorError
from storage.pg_hosts import HostListError, hosts_of, primary_url

PAIR = ("a.db:5433", "b.db:5434")


def _connect_kwargs(url: str) -> dict[str, object]:
    """What SQLAlchemy's asyncpg dialect will hand to ``asyncpg.connect``."""
    dialect = PGDialect_asyncpg()  # type: ignore[no-untyped-call]
    _, kwargs = dialect.create_connect_args(make_url(url))  # type: ignore[no-untyped-call]
    return dict(kwargs)


@pytest.mark.parametrize(
    "given",
    [
        "postgresql+asyncpg://rg:pw@a.db:5433,b.db:5434/reelgate",  # libpq's authority list
        "postgresql+asyncpg://rg:pw@/reelgate?host=a.db:5433&host=b.db:5434",
        "postgresql+asyncpg://rg:pw@/reelgate?host=a.db,b.db&port=5433,5434",
        "postgresql+asyncpg://rg:pw@/reelgate?host=a.db:5433,b.db:5434",
        "postgresql+asyncpg://rg:pw@/reelgate?host=a.db:5433&host=b.db:5434"
        "&target_session_attrs=read-write",
    ],
)
def test_every_spelling_of_a_host_list_goes_to_the_primary(given: str) -> None:
    url = primary_url(given)
    parsed = make_url(url)
    assert parsed.query["host"] == PAIR
    assert parsed.query["target_session_attrs"] == "read-write"
    assert (parsed.username, parsed.password, parsed.database) == ("rg", "pw", "reelgate")
    kwargs = _connect_kwargs(url)
    assert kwargs["host"] == ["a.db", "b.db"]
    assert kwargs["port"] == [5433, 5434]
    assert kwargs["target_session_attrs"] == "read-write"
    assert primary_url(url) == url  # idempotent: make_engine may see it twice


def test_a_host_without_port_gets_postgres_default_and_primary_is_kept() -> None:
    url = make_url(primary_url("postgresql://rg@a.db,b.db:6000/x?target_session_attrs=primary"))
    assert url.query["host"] == ("a.db:5432", "b.db:6000")
    assert url.query["target_session_attrs"] == "primary"
    assert hosts_of(url) == [("a.db", 5432), ("b.db", 6000)]


@pytest.mark.parametrize(
    "single",
    [
        "postgresql+asyncpg://rg@127.0.0.1:5432/test",
        "postgresql+asyncpg://rg@/test?host=/var/run/postgresql",
        "sqlite+aiosqlite:///reelgate.db",
    ],
)
def test_a_single_host_or_sqlite_is_left_alone(single: str) -> None:
    assert primary_url(single) == single


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("postgresql://rg@/x?host=a,b&target_session_attrs=read-only", "needs the primary"),
        ("postgresql://rg@/x?host=a,b&target_session_attrs=prefer-standby", "needs the primary"),
        ("postgresql://rg@/x?host=a,b&target_session_attrs=any", "needs the primary"),
        ("postgresql://rg@h/x?target_session_attrs=standby", "needs the primary"),
        ("postgresql://rg@/x?host=a,b&target_session_attrs=rw", "use read-write"),
        ("postgresql://rg@/x?host=a,b,c&port=1,2", "3 hosts but 2 ports"),
        ("postgresql://rg@/x?host=a:1,b&port=1,2", "not both"),
        ("postgresql://rg@/x?host=a:99999,b:1", "not a port number"),
        ("postgresql://rg@/x?host=a:1,,b:2", "empty host"),
        ("postgresql://rg@/x?host=a:1&host=a:1", "named twice"),
        ("postgresql://rg@c:5/x?host=a:1&host=b:2", "not both"),
    ],
)
def test_what_could_reach_a_replica_is_one_line(given: str, says: str) -> None:
    with pytest.raises(HostListError, match=says) as caught:
        primary_url(given)
    assert "\n" not in str(caught.value)


def test_the_command_line_resolves_a_host_list_or_names_the_option() -> None:
    url = resolve("postgresql://rg:pw@a.db:5433,b.db:5434/reelgate")
    assert url.startswith("postgresql+asyncpg://rg:pw@/reelgate?")
    assert make_url(url).query["host"] == PAIR
    with pytest.raises(OperatorError, match=r"^--database .*\*\*\*.*needs the primary") as bad:
        resolve("postgresql://rg:pw@/x?host=a,b&target_session_attrs=read-only")
    assert "pw" not in str(bad.value)
    assert "\n" not in str(bad.value)
    with pytest.raises(OperatorError, match=r"^--database .*: host b\.db: port 'nope' is not a"):
        resolve("postgresql://rg@a.db:5433,b.db:nope/x")


def test_pg_dump_gets_libpq_host_and_port_lists() -> None:
    uri, env = libpq(primary_url("postgresql+asyncpg://rg:pw@a.db:5433,b.db:5434/reelgate"))
    assert env == {"PGPASSWORD": "pw"}
    parsed = make_url(uri)
    assert parsed.query["host"] == "a.db,b.db"
    assert parsed.query["port"] == "5433,5434"
    assert parsed.query["target_session_attrs"] == "read-write"
    assert "pw" not in uri
