"""What a restore must not overwrite, checked before anything is touched.

* A heat in progress (a journal run not yet closed, aborted or restarted): its machines
  are locked or in tournament mode and the journal is what recovery needs to finish it.
* A heat ended but not settled (its machines not yet back in normal play): the same.
* A live bank lease: a gateway is serving this database and would go on writing into it.
* A backup at a schema revision this Reelgate does not know (newer than its head, or not
  one of its revisions): its tables are not the ones this code reads.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.database import VERSIONS, head_revision
from gateway.errors import OperatorError
from storage.journal import TERMINAL_STATES, HeatRun
from storage.lease import BankLease


def known_revisions() -> set[str]:
    return {p.name.split("_", 1)[0] for p in VERSIONS.glob("[0-9]*_*.py")}


def check_backup_revision(found: str | None, source: str) -> None:
    head = head_revision()
    if found is None:
        raise OperatorError(f"{source}: not a Reelgate backup (no schema revision in it)")
    if found not in known_revisions():
        newer = found.isdigit() and head.isdigit() and int(found) > int(head)
        why = "newer than this reelgate" if newer else "not a revision this reelgate knows"
        raise OperatorError(
            f"{source}: backup at schema revision {found}, {why} (head {head}); "
            "restore it with the reelgate that made it"
        )


def _busy(conn: Connection) -> str | None:
    """Why the database must not be overwritten, or None."""
    tables = set(inspect(conn).get_table_names())
    if "heat_run" in tables:
        runs = conn.execute(
            select(HeatRun.id, HeatRun.bank_name, HeatRun.state, HeatRun.settled)
            .where(HeatRun.settled.is_(False))
            .order_by(HeatRun.id)
        ).all()
        for run_id, bank, state, _ in runs:
            if state not in TERMINAL_STATES:
                return f"heat run {run_id} on bank {bank} is in progress ({state.value})"
        if runs:
            run_id, bank, state, _ = runs[0]
            return (
                f"heat run {run_id} on bank {bank} is {state.value} but its machines are "
                "not back in normal play yet"
            )
    if "bank_lease" in tables:
        now = datetime.now(UTC)
        leases = conn.execute(
            select(
                BankLease.bank_name, BankLease.holder, BankLease.host, BankLease.pid,
                BankLease.released, BankLease.expires_at,
            ).order_by(BankLease.bank_name)
        ).all()  # fmt: skip
        for bank, holder, host, pid, released, expires_at in leases:
            if not released and expires_at > now:
                return f"bank {bank} is held by {holder} on {host} pid {pid}: stop it first"
    return None


async def refuse_busy_target(engine: AsyncEngine) -> None:
    async with engine.connect() as conn:
        why = await conn.run_sync(_busy)
    if why is not None:
        raise OperatorError(f"restore refused, nothing changed: {why}")
