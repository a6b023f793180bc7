"""Results under the audit chain: every result row is hashed into an audit row.

Theory of operation
-------------------
A *sealed* table (:data:`SEALED`: scores and the journal's heat results with their raw
tournament meters, seats, entries, purchases, refunds, heats, disqualifications, card
draws, prize payouts, and every Super 9 session, ticket, spin, claim, prize and jackpot
movement) is written through the ORM, or by a bulk insert that notes each row it wrote
(:func:`storage.seal_notes.note`: the journal's scores of a bank, a thousand rows in one
statement).  Two session events do the rest, so no service can forget:

* ``after_flush`` notes the (table, id) of every sealed row inserted, changed or deleted;
* ``before_commit`` reads those rows back *as stored* and appends one ``records.seal``
  audit row whose details list ``[table, id, digest]`` (``digest`` None for a delete),
  in the same transaction as the change.

The digest is SHA-256 over the canonical JSON of the table name and the row's non-null
columns as read back (so the verifier, reading the same way, computes the same text; a
later nullable column does not change old digests).  The digest is not keyed: the audit
row holding it is.  When the chain is first keyed (:mod:`storage.audit`'s genesis) every
existing row is sealed as it stands, so a database from before the key is covered from
that moment.  The verifier (:mod:`storage.audit_verify`) replays the seals and names
each row that differs, was deleted, or was inserted without an audit row.

Rows read back by a separate SELECT per table touched: a commit that stores a bank's
scores pays one SELECT, one HMAC and one insert, not one per row.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Table, bindparam, event, inspect, select
from sqlalchemy.orm import Session, SessionTransaction, UOWTransaction

from storage import audit
from storage.journal import HeatResult
from storage.prizes import PrizePayout
from storage.seal_notes import PENDING, note
from storage.super9 import (
    Super9Claim,
    Super9JackpotEntry,
    Super9Prize,
    Super9Session,
    Super9Spin,
    Super9Ticket,
)
from storage.tournament import (
    CardDraw,
    Disqualification,
    Entry,
    EntryPurchase,
    Heat,
    Refund,
    Score,
    Seat,
)

SEAL_ACTION = "records.seal"
_GENESIS = audit.GENESIS_INFO
_CHUNK = 500
_SEALED_READ = {audit.NOT_THE_LOG: True}
_MAX_SEAL_ROUNDS = 10  # a seal row never dirties a sealed table; bounded all the same

SEALED: dict[str, Table] = {
    model.__tablename__: model.__table__  # type: ignore[misc]
    for model in (
        Score,
        HeatResult,
        Seat,
        Entry,
        EntryPurchase,
        Refund,
        Heat,
        Disqualification,
        CardDraw,
        PrizePayout,
        Super9Session,
        Super9Ticket,
        Super9Spin,
        Super9Claim,
        Super9Prize,
        Super9JackpotEntry,
    )
}


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def row_digest(table: str, row: Mapping[Any, Any]) -> str:
    """SHA-256 of the table name and the row's non-null columns, as read back."""
    content = {name: _plain(value) for name, value in row.items() if value is not None}
    return hashlib.sha256(audit.canonical_json([table, content]).encode()).hexdigest()


@event.listens_for(Session, "after_flush")
def _collect(session: Session, _flush: UOWTransaction) -> None:
    for obj in session.new:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED:
            note(session, name, obj.id)
    for obj in session.dirty:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED and session.is_modified(obj, include_collections=False):
            note(session, name, obj.id)
    for obj in session.deleted:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED:
            identity = inspect(obj).identity
            if identity:
                note(session, name, identity[0])


# Built once: constructing a SELECT costs more CPU than its compiled-cache lookup.
_READ_BACK = {
    name: select(t)
    .where(t.c.id.in_(bindparam("ids", expanding=True)))
    .execution_options(**_SEALED_READ)
    for name, t in SEALED.items()
}


def _read(session: Session, table: str, ids: Sequence[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        for row in session.execute(_READ_BACK[table], {"ids": chunk}).mappings():
            found[int(row["id"])] = row_digest(table, row)
    return found


def _seal_rows(session: Session, rows: list[list[Any]], subject: str) -> None:
    actor = audit.last_actor(session) or audit.SYSTEM_ACTOR
    for start in range(0, len(rows), _CHUNK):
        audit.append_sync(
            session,
            actor=actor,
            action=SEAL_ACTION,
            subject=subject[:200],
            details={"rows": rows[start : start + _CHUNK]},
        )


def seal_pending(session: Session) -> None:
    pending: dict[tuple[str, int], object] = session.info.pop(PENDING, {})
    if not pending:
        return
    by_table: dict[str, list[int]] = {}
    for table, row_id in pending:
        by_table.setdefault(table, []).append(row_id)
    rows: list[list[Any]] = []
    for table, ids in sorted(by_table.items()):
        ids.sort()
        digests = _read(session, table, ids)
        rows.extend([table, i, digests.get(i)] for i in ids)
    _seal_rows(session, rows, "seal:" + ",".join(sorted(by_table)))


def _every_row(session: Session, table: str) -> Iterable[list[Any]]:
    t = SEALED[table]
    last = None
    for _ in range(1_000_000):  # keyset pages; bounded far above any venue's history
        query = select(t).order_by(t.c.id).limit(_CHUNK).execution_options(**_SEALED_READ)
        if last is not None:
            query = query.where(t.c.id > last)
        page = session.execute(query).mappings().all()
        for row in page:
            yield [table, int(row["id"]), row_digest(table, row)]
        if len(page) < _CHUNK:
            return
        last = page[-1]["id"]


def seal_everything(session: Session) -> None:
    for table in sorted(SEALED):
        rows = list(_every_row(session, table))
        if rows:
            _seal_rows(session, rows, f"seal:{table} (keyed from here)")


@event.listens_for(Session, "before_commit")
def _seal_at_commit(session: Session) -> None:
    if session.new or session.dirty or session.deleted:
        session.flush()  # the commit would flush next; do it now so its rows are noted
    if not (
        PENDING in session.info
        or _GENESIS in session.info
        or audit.wants_checkpoint(session)
        or audit.has_waiting(session)
    ):
        return
    _seal_noted(session)
    audit.write_pending(session)  # the head is locked here, just before COMMIT
    if session.info.get(_GENESIS):  # this transaction keyed the chain: seal every row
        _seal_noted(session)
        audit.write_pending(session)
    audit.write_requested_checkpoint(session)
    if session.info.pop(_GENESIS, False):  # the checkpoint was this database's first row
        seal_everything(session)
        audit.write_pending(session)


def _seal_noted(session: Session) -> None:
    for _ in range(_MAX_SEAL_ROUNDS):
        if session.info.pop(_GENESIS, False):
            session.info.pop(PENDING, None)  # every row is sealed below, these too
            seal_everything(session)
        elif session.info.get(PENDING):
            seal_pending(session)
        else:
            break
        session.flush()


def _forget(session: Session) -> None:
    session.info.pop(PENDING, None)
    session.info.pop(_GENESIS, None)
    audit.forget_transaction(session)


@event.listens_for(Session, "after_transaction_end")
def _ended(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # committed, rolled back or closed: all of it ends
        _forget(session)


@event.listens_for(Session, "after_soft_rollback")
def _rolled_back(session: Session, transaction: SessionTransaction) -> None:
    """A whole transaction rolled back forgets everything; a savepoint only what was done
    inside it (``after_rollback`` fires for both and cannot tell them apart).  A flush's
    own subtransaction failing is followed by the rollback of the one it belongs to."""
    if transaction.parent is None:
        _forget(session)  # at once: nothing of it may be written by a later flush
    elif transaction.nested:
        pending: dict[tuple[str, int], SessionTransaction | None] = session.info.get(PENDING, {})
        for key in [k for k, t in pending.items() if audit.within(t, transaction)]:
            del pending[key]
        audit.savepoint_rolled_back(session, transaction)
