"""PostgreSQL backups through PostgreSQL's own tools: ``pg_dump -Fc`` and ``pg_restore``.

The database URL (SQLAlchemy's ``postgresql+asyncpg://``) becomes a libpq connection
URI (``postgresql://user@host:port/db``); the password travels in ``PGPASSWORD``, never
on a command line another user's ``ps`` would show.  asyncpg's ``ssl=`` becomes libpq's
``sslmode=``; a host list (a primary and its replicas) becomes libpq's ``host=h1,h2&
port=p1,p2`` with its ``target_session_attrs``; other libpq parameters pass through, and
anything else is refused in one line.  The tools are taken from ``$PATH``, else from the newest
``/usr/lib/postgresql/*/bin`` (Debian's layout); ``pg_dump`` must be at least as new as
the server, which it says itself when it is not.

A dump is the custom format (``-Fc``: compressed, restorable table by table), in a file
of mode 0600 from its creation (:mod:`.private`).  A restore
runs ``pg_restore --clean --if-exists --no-owner --no-privileges --single-transaction``:
every object of the dump is dropped and made again in one transaction, so a restore that
fails part-way leaves the database as it was.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

from sqlalchemy.engine import URL, make_url

from gateway.app.backups import private
from gateway.errors import OperatorError
from storage.pg_hosts import hosts_of

DUMP_MAGIC = b"PGDMP"
LIBPQ_PARAMS = frozenset({
    "sslmode", "sslrootcert", "sslcert", "sslkey", "sslcrl", "connect_timeout",
    "application_name", "options", "target_session_attrs", "gssencmode",
})  # fmt: skip


def is_dump(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(DUMP_MAGIC)) == DUMP_MAGIC


def libpq(url: str) -> tuple[str, dict[str, str]]:
    """The libpq URI for ``url`` and the environment that carries its password."""
    u = make_url(url)
    query: dict[str, str] = {}
    for key, value in u.query.items():
        text = value if isinstance(value, str) else value[-1]
        if key == "host":  # a primary and its replicas: libpq's own host and port lists
            pairs = hosts_of(u)
            query["host"] = ",".join(h for h, _ in pairs)
            query["port"] = ",".join(str(p) for _, p in pairs)
        elif key == "port":
            continue  # with host= above
        elif key == "ssl":
            query["sslmode"] = "require" if text in ("true", "1") else text
        elif key in LIBPQ_PARAMS:
            query[key] = text
        else:
            raise OperatorError(f"--database: parameter {key!r} has no libpq equivalent")
    plain = URL.create(
        "postgresql", username=u.username, host=u.host, port=u.port, database=u.database,
        query=query,
    )  # fmt: skip
    env = {"PGPASSWORD": u.password} if u.password else {}
    return plain.render_as_string(hide_password=False), env


def tool(name: str) -> str:
    """The path of ``pg_dump`` / ``pg_restore`` (see the module docstring)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(Path(p).parents[1].name) if Path(p).parents[1].name.isdigit() else 0,
    )
    if candidates:
        return candidates[-1]
    raise OperatorError(
        f"{name} not found on PATH or in /usr/lib/postgresql/*/bin: install the PostgreSQL "
        "client tools (Debian: postgresql-client)"
    )


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(  # our own arguments, no shell
        args, capture_output=True, text=True, env={**os.environ, **env}, check=False
    )
    if done.returncode != 0:
        lines = [x for x in done.stderr.splitlines() if x.strip()]
        first = lines[0] if lines else f"exit status {done.returncode}"
        name = Path(args[0]).name
        raise OperatorError(f"{name}: {first.removeprefix(name + ': ')}")
    return done.stdout


def dump(url: str, target: Path) -> None:
    """``pg_dump -Fc`` of the whole database into the new file ``target``."""
    uri, env = libpq(url)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        private.create(partial)  # 0600 before pg_dump writes into it (it keeps the mode)
        _run([tool("pg_dump"), "--format=custom", f"--file={partial}", f"--dbname={uri}"], env)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def dump_revision(dump_file: Path) -> str | None:
    """The Alembic revision inside a dump (None: no ``alembic_version`` data in it)."""
    sql = _run(
        [tool("pg_restore"), "--data-only", "--table=alembic_version", "--file=-", str(dump_file)],
        {},
    )
    lines = iter(sql.splitlines())
    for line in lines:
        if line.startswith("COPY ") and "alembic_version" in line:
            value = next(lines, "\\.")
            return None if value == "\\." else value.strip()
    return None


def restore(dump_file: Path, url: str) -> None:
    uri, env = libpq(url)
    _run(
        [tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--no-privileges",
         "--single-transaction", f"--dbname={uri}", str(dump_file)],
        env,
    )  # fmt: skip
