"""A restore is itself an audited event: the witness is told, then the chain records it.

Putting back an older backup cuts the audit chain short, exactly as an attacker's
rollback would; done through ``reelgate db restore`` it must read as a restore.  So,
once the backup is in place:

1. the restored chain's end D is read, and the last position the witness saw, W;
2. a ``restore`` entry (D, W) is appended to the witness (tagged under the audit key);
3. an ``audit.restore`` row is chained at D+1, naming the backup (its name and SHA-256),
   who restored it, D and W, and the positions lost — its head reaches the witness as
   any commit's does — and a checkpoint signs it.

``audit verify`` pairs the two (:mod:`gateway.records.witness_check`): the heads the
witness saw beyond D before the restore are reported as lost by this restore, not as
tampering.  Either half without the other is a finding; a restore behind Reelgate's
back (a file copied, ``pg_restore`` by hand) has neither and reads as a rollback.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select

from gateway.app import database
from gateway.app.identity import host_actor
from gateway.errors import OperatorError
from gateway.records import witness
from gateway.records.witness_check import read_witness, span
from gateway.records.witness_entry import RESTORE_ACTION, Entry, format_entry, parse
from gateway.records.witness_sinks import WitnessSpec, open_sink
from storage import audit
from storage.db import make_engine, make_sessionmaker


@dataclass(frozen=True)
class Restored:
    restored_to: int
    lost_to: int
    audit_row: int

    def line(self) -> str:
        lost = (
            f"rows {span(self.restored_to + 1, self.lost_to)} as witnessed are lost"
            if self.lost_to > self.restored_to
            else "no witnessed row lost"
        )
        return f"restore recorded at audit row {self.audit_row}: {lost}"


def _sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _witnessed(spec: WitnessSpec, keys: audit.ChainKeys) -> int:
    """The last position the witness saw (0 when it cannot be read here: syslog)."""
    if spec.kind != "file" or spec.path is None:
        return 0
    text, _ = read_witness(spec.path)
    if text is None:
        return 0
    entries, _bad, _other = parse(text, keys.mac_key, keys.key_id)
    return max((e.position for e in entries if e.kind == "head"), default=0)


async def record_restore(url: str, backup: Path) -> Restored | None:
    """Steps 1-3 above; None when the database has no audit key (nothing can be chained)."""
    engine = make_engine(url)
    try:
        database.bind_keys(engine, url)
        keys = audit.keys_of_engine(engine)
        if keys is None:
            return None
        spec = witness.spec_for(url)
        sessions = make_sessionmaker(engine)
        async with sessions() as session:
            end = int(
                await database.guarded(
                    url, session.scalar(select(func.coalesce(func.max(audit.AuditEntry.id), 0)))
                )
                or 0
            )
        lost_to = max(end, _witnessed(spec, keys))
        sink = open_sink(spec)
        if sink is not None:
            now = datetime.now(UTC)
            entry = Entry("restore", end, "", now, keys.key_id, lost_to)
            try:
                sink.write([format_entry(keys.mac_key, entry)], now)
            except OSError as exc:
                raise OperatorError(
                    f"restored, but the witness ({spec.describe()}) cannot be written: {exc}; "
                    "audit verify will report a rollback"
                ) from None
            finally:
                sink.close()
        async with sessions() as session, session.begin():
            row = await audit.record(
                session,
                actor=host_actor(),
                action=RESTORE_ACTION,
                subject=f"backup:{backup.name}"[:200],
                reason="database restored from a backup",
                details={
                    "backup": str(backup),
                    "backup_sha256": _sha256(backup),
                    "restored_to": end,
                    "lost_to": lost_to,
                    "lost_rows": lost_to - end,
                    "witness": spec.describe(),
                },
            )
        chained = witness.witness_of(engine)
        if chained is not None:
            await chained.checkpoint("restore")  # the restore signed at once
        return Restored(end, lost_to, row.id)
    finally:
        await database.close_engine(engine)
