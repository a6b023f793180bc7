"""The readiness checks: can this process do its work right now?

Each check is one :class:`~gateway.web.api.ops.Check` (a name, ok, one line of detail),
bounded in time and never raising, so ``/readyz`` always answers:

``database``  the database answers a read of its Alembic revision, at the revision this
              Reelgate needs (a SQLite file must still be on disk: a file deleted or moved
              under a running process keeps "working" on an inode nobody will read).
``spool``     journal writes kept during an outage are fewer than the limit.
``broker``    the MQTT live feed is connected (only when one is configured).
``recovery``  every bank's recovery from the journal is done.
``bank:NAME`` every active machine of an enabled bank this process drives has its link
              up: the supervisor's last poll answered (machines a heat holds are polled
              by the heat, so their driver's connection state is used).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeGuard

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.database import head_revision
from gateway.floor.model import Floor
from gateway.heats.spool import JournalWriter
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.capabilities import ConnectedLink
from gateway.machines.links import MachineLink
from gateway.web.api.ops import Check
from protocols.mqtt.client import MqttSession
from storage.db import READ_ONLY

CHECK_TIMEOUT_S = 2.0
SPOOL_LIMIT = 10_000  # journal writes: hours of heats; past it the outage needs a person


def _first_line(exc: BaseException) -> str:
    words = str(getattr(exc, "orig", None) or exc).strip()
    return f"{type(exc).__name__}: {words.splitlines()[0]}" if words else type(exc).__name__


def sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    name = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not name or name == ":memory:":
        return None
    return None if name.startswith("file:") else Path(name).expanduser()


async def database_check(
    url: str, engine: AsyncEngine, timeout_s: float = CHECK_TIMEOUT_S
) -> Check:
    file = sqlite_file(url)
    if file is not None and not file.is_file():
        return Check("database", False, f"database file {file} is gone")
    try:
        async with asyncio.timeout(timeout_s), engine.connect() as conn:
            read = await conn.execution_options(**READ_ONLY)  # SQLite: no write lock taken
            found = (await read.execute(text("SELECT version_num FROM alembic_version"))).scalar()
    except TimeoutError:
        return Check("database", False, f"no answer in {timeout_s:g} s")
    except Exception as exc:  # any way of not reaching it is "not ready", in one line
        return Check("database", False, _first_line(exc))
    head = head_revision()
    if found != head:
        return Check("database", False, f"at revision {found}, this reelgate needs {head}")
    return Check("database", True, f"revision {found}")


def spool_check(writer: JournalWriter, limit: int = SPOOL_LIMIT) -> Check:
    depth = writer.spool_depth()
    if depth > limit:
        return Check("spool", False, f"{depth} journal writes waiting (limit {limit})")
    return Check("spool", True, f"{depth} journal writes waiting")


def broker_check(session: MqttSession) -> Check:
    if session.connected.is_set():
        return Check("broker", True, f"connected to {_where(session)}")
    why = f": {session.last_error}" if session.last_error else ""
    return Check("broker", False, f"not connected to {_where(session)}{why}")


def _where(session: MqttSession) -> str:
    return f"{session.settings.host}:{session.settings.port}"


def recovery_check(busy: Mapping[str, asyncio.Task[None]]) -> Check:
    recovering = sorted(bank for bank, task in busy.items() if not task.done())
    if recovering:
        return Check("recovery", False, f"recovering bank(s) {', '.join(recovering)}")
    return Check("recovery", True, "done")


_CONNECTED: dict[type, bool] = {}


def knows_connection(driver: object) -> TypeGuard[ConnectedLink]:
    """``isinstance(driver, ConnectedLink)``, decided once per driver class (a protocol
    check walks every member each time; a scrape asks it of every machine)."""
    kind = type(driver)
    known = _CONNECTED.get(kind)
    if known is None:
        known = _CONNECTED[kind] = isinstance(driver, ConnectedLink)
    return known


def link_up(link: MachineLink, supervisor: BankSupervisor | None) -> bool:
    driver = link.driver
    connected = driver.link_connected() if knows_connection(driver) else link.opened
    if supervisor is None or link.machine_id in supervisor.claimed:
        return connected  # a heat (or recovery) polls it: the connection is what we know
    status = supervisor.status.get(link.machine_id)
    return connected and status is not None and status.online


def bank_checks(
    floor: Floor,
    links: Mapping[str, Mapping[str, MachineLink]],
    supervisors: Mapping[str, BankSupervisor],
) -> Sequence[Check]:
    """One check per enabled bank this process drives (``links`` has the driven ones)."""
    checks = []
    for name in sorted(links):
        bank = floor.banks.get(name)
        if bank is None or not bank.enabled:
            continue
        bank_links = links[name]
        supervisor = supervisors.get(name)
        active = [m.id for m in bank.active]
        down = [m for m in active if m not in bank_links or not link_up(bank_links[m], supervisor)]
        if down:
            checks.append(Check(f"bank:{name}", False, f"links down: {', '.join(down)}"))
        else:
            checks.append(Check(f"bank:{name}", True, f"{len(active)} machine link(s) up"))
    return checks


def witness_check(engine: AsyncEngine) -> Check | None:
    """The chain head's witness (gateway.records.witness): its last write went through."""
    from gateway.records.witness import witness_of

    found = witness_of(engine)
    if found is None:
        return None
    if found.last_error is not None:
        return Check("audit witness", False, found.last_error)
    return Check("audit witness", True, f"{found.batches} writes")
