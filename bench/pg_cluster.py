"""A throw-away PostgreSQL primary with a streaming replica on loopback, for the
failover test (``tests/integration/test_pg_failover.py``) and ``bench/db_failover.py``.

Built from PostgreSQL's own tools (``initdb``, ``pg_basebackup -R``, ``pg_ctl``), taken
from the newest ``/usr/lib/postgresql/*/bin`` else ``$PATH``, in a temporary folder.
PostgreSQL refuses to run as root: as root every tool runs as the ``postgres`` user
(``runuser``) and the folder is given to it.

The replica is **synchronous** (``synchronous_standby_names``): a commit is acknowledged
only once the replica has its WAL on disk, so a promotion loses nothing that a client
was told is committed.  A commit in doubt (the primary died before answering) is the
client's to settle by its idempotency key or journal step.  The replica's own
``synchronous_standby_names`` is empty, so once promoted it commits alone.

:meth:`PgCluster.kill_primary` is a host dying: SIGKILL to the postmaster and every
backend at once, no shutdown, no goodbye to the clients.  :meth:`promote` is
``pg_ctl promote -w`` (what an operator or Patroni does).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

TOOLS = ("initdb", "pg_ctl", "pg_basebackup")


def bin_dir() -> Path | None:
    """The folder holding PostgreSQL's server tools, None when they are not installed."""
    for found in sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])
    )[::-1]:
        if all((Path(found) / t).exists() for t in TOOLS):
            return Path(found)
    on_path = shutil.which("pg_ctl")
    if on_path and all(shutil.which(t) for t in TOOLS):
        return Path(on_path).parent
    return None


def missing_reason() -> str | None:
    """Why a cluster cannot be made here (None: it can)."""
    if bin_dir() is None:
        return "PostgreSQL server tools (initdb, pg_ctl, pg_basebackup) are not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is not installed"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children_of(pid: int) -> list[int]:
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.split("/")[2]))
    return found


class Node:
    """One PostgreSQL server of the cluster."""

    def __init__(self, cluster: PgCluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self.data = cluster.base / name
        self.port = free_port()
        self.log = cluster.base / f"{name}.log"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def postmaster_pid(self) -> int | None:
        pid_file = self.data / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(pid_file.read_text().splitlines()[0])
        return None

    def start(self) -> None:
        self.cluster.run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "120", "start")

    def kill(self) -> None:
        """The host dies: the postmaster and every backend get SIGKILL together."""
        pid = self.postmaster_pid()
        if pid is None:
            return
        victims = [pid, *_children_of(pid)]
        for victim in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while any(Path(f"/proc/{v}").exists() for v in victims):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: processes {victims} outlived SIGKILL")
            time.sleep(0.01)

    def stop(self) -> None:
        if self.postmaster_pid() is not None:
            self.cluster.run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop",
                             check=False)  # fmt: skip


class PgCluster:
    """A primary and one synchronous streaming replica; :meth:`url` names both."""

    def __init__(self, database: str = "reelgate") -> None:
        found = bin_dir()
        if found is None:
            raise RuntimeError(missing_reason() or "no PostgreSQL tools")
        self.bin = found
        self.database = database
        self.as_postgres = os.geteuid() == 0
        self.base = Path(tempfile.mkdtemp(prefix="rg-pg-cluster-"))
        if self.as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.base, user.pw_uid, user.pw_gid)
        self.primary = Node(self, "primary")
        self.replica = Node(self, "replica")

    # -- tools -----------------------------------------------------------------------
    def run(self, tool: str, *args: object, check: bool = True) -> str:
        argv = [str(self.bin / tool), *(str(a) for a in args)]
        if self.as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, cwd=self.base, timeout=300
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def _conf(self, node: Node, lines: list[str], file: str = "postgresql.conf") -> None:
        path = node.data / file
        text = path.read_text() + "\n# rg-pg-cluster\n" + "\n".join(lines) + "\n"
        path.write_text(text)  # the file keeps its owner

    # -- life ------------------------------------------------------------------------
    def start(self) -> PgCluster:
        p, r = self.primary, self.replica
        self.run("initdb", "-D", p.data, "-U", "postgres", "--auth=trust", "-N", "-E", "UTF8")
        self._conf(p, [
            "listen_addresses = '127.0.0.1'",
            f"port = {p.port}",
            f"unix_socket_directories = '{self.base}'",
            "wal_level = replica",
            "max_wal_senders = 5",
            "hot_standby = on",
            "fsync = off",  # a killed process, not a dead disk: the OS keeps its writes
            "synchronous_standby_names = 'replica'",
            "synchronous_commit = on",
            "max_connections = 100",
        ])  # fmt: skip
        p.start()
        self.run("pg_basebackup", "-h", "127.0.0.1", "-p", p.port, "-U", "postgres",
                 "-D", r.data, "-X", "stream", "-R", "-c", "fast")  # fmt: skip
        self._conf(r, [
            f"port = {r.port}",
            "synchronous_standby_names = ''",  # promoted, it commits alone
        ])  # fmt: skip
        # After the one pg_basebackup -R wrote (auto.conf is read last): the name the
        # primary's synchronous_standby_names waits for.
        self._conf(r, [
            f"primary_conninfo = 'host=127.0.0.1 port={p.port} user=postgres "
            "application_name=replica'",
        ], "postgresql.auto.conf")  # fmt: skip
        r.start()
        self.run("createdb", "-h", "127.0.0.1", "-p", p.port, "-U", "postgres", self.database)
        return self

    def url(self, driver: str = "postgresql+asyncpg") -> str:
        """Both hosts, primary first; Reelgate adds ``target_session_attrs=read-write``."""
        hosts = f"{self.primary.host},{self.replica.host}"
        return f"{driver}://postgres@{hosts}/{self.database}"

    def kill_primary(self) -> None:
        self.primary.kill()

    def promote(self) -> None:
        self.run("pg_ctl", "-D", self.replica.data, "-w", "-t", "120", "promote")

    def close(self) -> None:
        for node in (self.primary, self.replica):
            with contextlib.suppress(Exception):
                node.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *_exc: object) -> None:
        self.close()
