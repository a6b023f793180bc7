"""Results, money, identities, roles and rule settings under the audit chain: every row
of a sealed table is hashed into an audit row.

Theory of operation
-------------------
A *sealed* table (:data:`SEALED`, the table below) is written through the ORM, by a bulk
UPDATE/DELETE through the session, or by a bulk insert that notes each row it wrote
(:func:`storage.seal_notes.note`: the journal's scores of a bank, a thousand rows in one
statement).  Session events do the rest, so no service can forget:

* ``after_flush`` notes the (table, key) of every sealed row inserted, changed or deleted;
* ``do_orm_execute`` notes, before a bulk UPDATE or DELETE of a sealed table runs, the
  keys of the rows its WHERE matches (a settings change replaces a tournament's packages
  with one DELETE);
* ``before_commit`` reads those rows back *as stored* and appends one ``records.seal``
  audit row whose details list ``[table, key, digest]`` (``digest`` None for a delete),
  in the same transaction as the change.

A row's key is its primary key: the id, or the one column that is the key (a bank's
name, a Super 9 setting's key), or the list of the key's columns (a tournament's prize
surplus per stage).  The digest is SHA-256 over the canonical JSON of the table name and
the row's non-null columns as read back (so the verifier, reading the same way, computes
the same text; a later nullable column does not change old digests).  The digest is not
keyed: the audit row holding it is.  The verifier (:mod:`storage.audit_verify`) replays
the seals and names each row that differs, was deleted, or was inserted without an
audit row.

**Which tables.**  Everything that holds a result, money, a person's identity, an
account, a role or permission, or a rule setting.  Out: tables that change without a
person's decision, where a seal per change would only be noise, and what is checked
another way:

=============================  =========================================================
sealed                         why
=============================  =========================================================
scores, heat_result            results (and the journal's raw meters they came from)
seats, seat_attendance         who plays where; present or absent at the roll call (T22)
entries, entry_purchases,      money and the seats it bought (T5-T8)
refunds
heats, heat_notices            the schedule and its announced changes (T10, T20)
disqualifications, card_draws  results: who is out, how ties were broken (T24)
proxies                        who plays for whom in a final (T16)
tournaments,                   rule settings: seat price, stage sizes, minimum age,
tournament_settings,           prize places, postponement, the roll call's default,
tournament_attendance,         the packages on sale and their prices
tournament_packages
prize_schedule, prize_surplus, money: the prize schedule and what was paid, to whom
prize_payouts
players, exclusions            identity: name, ID and card number, date of birth; the
                               exclusion register (T2/T3)
users, api_tokens,             accounts, roles, lock-outs, tokens and their expiry,
account_sessions,              signed-in sessions (a forged row is a login), the
pending_actions                dual-control requests replayed on approval
floor_bank, floor_machine      which machines play in which bank, which are excluded
super9_*                       Super 9 settings, calendar, sessions, tickets, spins,
                               claims, prizes and the jackpot ledger
=============================  =========================================================

Not sealed: ``audit_*`` (the chain itself), ``heat_run``, ``heat_run_step``,
``heat_run_machine`` (the journal's working state: its results are sealed),
``heat_effect`` (the effects outbox), ``heat_director_command`` (a queue; each command
is an audit row), ``bank_lease`` (leases renewed every few seconds),
``machine_trap_mark`` and ``machine_aft_registration`` (what the machines last said,
rewritten by pollers), ``database_mark`` (written once by ``db init``, before a key
need exist) and ``alembic_version``.

**The scope.**  The tables sealed are listed in a ``records.seal_scope`` audit row.  When
the chain is first keyed (:mod:`storage.audit`'s genesis) every row of every sealed table
is sealed as it stands and the scope written; a database keyed before a table joined
:data:`SEALED` has it sealed by :func:`extend_scope` (``reelgate db upgrade``: every
existing row of the new tables sealed as it stands, in one audited transaction).  Until
then the verifier names such a table once, not each of its rows.

Rows read back by a separate SELECT per table touched: a commit that stores a bank's
scores pays one SELECT, one HMAC and one insert, not one per row.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Column, Select, Table, bindparam, event, inspect, select
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction, UOWTransaction

from storage import audit
from storage.accounts import AccountSession, ApiToken, PendingAction, User
from storage.attendance import SeatAttendance, TournamentAttendance
from storage.floor import FloorBank, FloorMachine
from storage.journal import HeatResult
from storage.prizes import PrizePayout, PrizePlace, PrizeSurplus
from storage.seal_notes import PENDING, Key, note
from storage.super9 import (
    Super9CalendarChange,
    Super9Claim,
    Super9JackpotEntry,
    Super9Prize,
    Super9Session,
    Super9Setting,
    Super9Spin,
    Super9Ticket,
)
from storage.tournament import (
    CardDraw,
    Disqualification,
    Entry,
    EntryPurchase,
    Exclusion,
    Heat,
    HeatNotice,
    Player,
    Proxy,
    Refund,
    Score,
    Seat,
    Tournament,
    TournamentPackage,
    TournamentSetting,
)

SEAL_ACTION = "records.seal"
SCOPE_ACTION = "records.seal_scope"
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
        # Issue 25.2: identity, accounts and roles, settings, schedules, the floor.
        Tournament,
        TournamentSetting,
        TournamentPackage,
        TournamentAttendance,
        SeatAttendance,
        HeatNotice,
        Proxy,
        Player,
        Exclusion,
        PrizePlace,
        PrizeSurplus,
        User,
        ApiToken,
        AccountSession,
        PendingAction,
        FloorBank,
        FloorMachine,
        Super9Setting,
        Super9CalendarChange,
    )
}
# The tables the genesis sealed before issue 25.2: a database keyed then, with no
# ``records.seal_scope`` row yet, has exactly these under the seals.
FIRST_SCOPE = frozenset({
    "scores", "heat_result", "seats", "entries", "entry_purchases", "refunds", "heats",
    "disqualifications", "card_draws", "prize_payouts", "super9_session", "super9_ticket",
    "super9_spin", "super9_claim", "super9_prize", "super9_jackpot_entry",
})  # fmt: skip
_PK: dict[str, tuple[Column[Any], ...]] = {
    name: tuple(t.primary_key.columns) for name, t in SEALED.items()
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


def _key_part(value: Any) -> int | str:
    plain = _plain(value)
    if isinstance(plain, date):
        return plain.isoformat()
    return plain if isinstance(plain, str) else int(plain)


def key_of(table: str, row: Mapping[Any, Any]) -> Key:
    """The row's key in a seal: its one key column's value, or a tuple of its key's."""
    cols = _PK[table]
    if len(cols) == 1:
        return _key_part(row[cols[0].name])
    return tuple(_key_part(row[c.name]) for c in cols)


def key_from_json(value: Any) -> Key:
    """A key as a seal row's details hold it (JSON: a list for a composite key)."""
    if isinstance(value, list):
        return tuple(_key_part(v) for v in value)
    return _key_part(value)


def key_label(key: Key) -> int | str:
    """A key as a finding names it."""
    return "/".join(str(k) for k in key) if isinstance(key, tuple) else key


def row_digest(table: str, row: Mapping[Any, Any]) -> str:
    """SHA-256 of the table name and the row's non-null columns, as read back."""
    content = {name: _plain(value) for name, value in row.items() if value is not None}
    return hashlib.sha256(audit.canonical_json([table, content]).encode()).hexdigest()


def page_query(table: str, last: Any, done: int, size: int) -> Select[Any]:
    """Page ``done // size`` of ``table`` in key order: keyset on a one-column key
    (``last``: the previous page's last key value, as stored), else by offset (the
    composite keys are a few rows per tournament)."""
    t, cols = SEALED[table], _PK[table]
    query = select(t).order_by(*cols).limit(size)
    if len(cols) == 1:
        return query if last is None else query.where(cols[0] > last)
    return query.offset(done)


def _identity_key(obj: object, *, deleted: bool) -> Key | None:
    state = inspect(obj)
    # A row inserted by this flush has no identity yet (given after the flush): its key
    # columns are set; a deleted row's attributes may be expired: its identity holds.
    values = state.identity if deleted else state.mapper.primary_key_from_instance(obj)
    if not values or any(v is None for v in values):
        return None
    if len(values) == 1:
        return _key_part(values[0])
    return tuple(_key_part(v) for v in values)


@event.listens_for(Session, "after_flush")
def _collect(session: Session, _flush: UOWTransaction) -> None:
    for obj in session.new:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED:
            _note_obj(session, name, obj, deleted=False)
    for obj in session.dirty:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED and session.is_modified(obj, include_collections=False):
            _note_obj(session, name, obj, deleted=False)
    for obj in session.deleted:
        name = getattr(type(obj), "__tablename__", None)
        if name in SEALED:
            _note_obj(session, name, obj, deleted=True)


def _note_obj(session: Session, table: str, obj: object, *, deleted: bool) -> None:
    key = _identity_key(obj, deleted=deleted)
    if key is not None:
        note(session, table, key)


@event.listens_for(Session, "do_orm_execute")
def _bulk_write(state: ORMExecuteState) -> None:
    """A bulk UPDATE or DELETE of a sealed table: note the rows its WHERE matches now
    (a DELETE's are gone at commit: sealed as deleted; an UPDATE's read back then)."""
    if not (state.is_update or state.is_delete):
        return
    table = getattr(state.statement, "table", None)
    name = getattr(table, "name", None)
    if name not in SEALED:
        return
    query = select(*_PK[name]).execution_options(**_SEALED_READ)
    where = getattr(state.statement, "whereclause", None)
    if where is not None:
        query = query.where(where)
    for row in state.session.execute(query).mappings():
        note(state.session, name, key_of(name, row))


# Built once: constructing a SELECT costs more CPU than its compiled-cache lookup.  A
# composite key is looked up by its first column, the rest filtered here.
_READ_BACK = {
    name: select(t)
    .where(_PK[name][0].in_(bindparam("ids", expanding=True)))
    .execution_options(**_SEALED_READ)
    for name, t in SEALED.items()
}


def _read(session: Session, table: str, keys: Sequence[Key]) -> dict[Key, str]:
    wanted = set(keys)
    firsts = sorted({k[0] if isinstance(k, tuple) else k for k in keys}, key=str)
    found: dict[Key, str] = {}
    for start in range(0, len(firsts), _CHUNK):
        chunk = firsts[start : start + _CHUNK]
        for row in session.execute(_READ_BACK[table], {"ids": chunk}).mappings():
            key = key_of(table, row)
            if key in wanted:
                found[key] = row_digest(table, row)
    return found


def _json_key(key: Key) -> Any:
    return list(key) if isinstance(key, tuple) else key


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


def _sort_key(key: Key) -> tuple[Any, ...]:
    return tuple(str(k) for k in key) if isinstance(key, tuple) else (key,)


def seal_pending(session: Session) -> None:
    pending: dict[tuple[str, Key], object] = session.info.pop(PENDING, {})
    if not pending:
        return
    by_table: dict[str, list[Key]] = {}
    for table, key in pending:
        by_table.setdefault(table, []).append(key)
    rows: list[list[Any]] = []
    for table, keys in sorted(by_table.items()):
        keys.sort(key=_sort_key)
        digests = _read(session, table, keys)
        rows.extend([table, _json_key(k), digests.get(k)] for k in keys)
    _seal_rows(session, rows, "seal:" + ",".join(sorted(by_table)))


def _every_row(session: Session, table: str) -> Iterable[list[Any]]:
    last: Any = None
    done = 0
    for _ in range(1_000_000):  # pages; bounded far above any venue's history
        query = page_query(table, last, done, _CHUNK).execution_options(**_SEALED_READ)
        page = session.execute(query).mappings().all()
        for row in page:
            yield [table, _json_key(key_of(table, row)), row_digest(table, row)]
        if len(page) < _CHUNK:
            return
        done += len(page)
        last = page[-1][_PK[table][0].name]


def _seal_tables(session: Session, tables: Iterable[str], why: str) -> None:
    for table in sorted(tables):
        rows = list(_every_row(session, table))
        if rows:
            _seal_rows(session, rows, f"seal:{table} ({why})")


def seal_everything(session: Session) -> None:
    _seal_tables(session, SEALED, "keyed from here")


def scope_of(lists: Sequence[Sequence[str]]) -> frozenset[str]:
    """The tables under the seals, from the lists the log states in order (the genesis
    row's ``sealed_tables``, then each ``records.seal_scope`` row's ``tables``): the last
    one, or, for a chain keyed before the genesis named them, :data:`FIRST_SCOPE`."""
    return frozenset(str(t) for t in lists[-1]) if lists else FIRST_SCOPE


def stated_scope(action: str, details: Mapping[str, Any]) -> list[str] | None:
    """The tables a genesis or ``records.seal_scope`` row states (None: it states none)."""
    found = details.get("tables" if action == SCOPE_ACTION else "sealed_tables")
    if not isinstance(found, list):
        return None
    return [str(t) for t in found]


def extend_scope(session: Session) -> list[str]:
    """Seal, as they stand, every row of the sealed tables a keyed chain does not cover
    yet (a database keyed before they joined :data:`SEALED`), and record the new scope in
    a ``records.seal_scope`` row.  Run by ``reelgate db upgrade``; the tables added (none:
    nothing written)."""
    head = audit.AuditChainHead.__table__
    keyed_from = session.execute(select(head.c.keyed_from).where(head.c.id == 1)).scalar()
    if keyed_from is None:
        return []  # not keyed yet: the genesis will seal every table
    log = audit.AuditEntry.__table__
    rows = session.execute(
        select(log.c.action, log.c.details)
        .where(log.c.action.in_([SCOPE_ACTION, audit.GENESIS_ACTION]))
        .order_by(log.c.id)
    ).all()
    lists = [found for a, d in rows if (found := stated_scope(a, json.loads(d))) is not None]
    added = sorted(set(SEALED) - scope_of(lists))
    if added:
        _seal_tables(session, added, "under the seals from here")
        audit.append_sync(
            session,
            actor=audit.SYSTEM_ACTOR,
            action=SCOPE_ACTION,
            subject="records",
            reason="tables put under the seals by reelgate db upgrade",
            details={"tables": sorted(SEALED), "added": added},
        )
    return added


# The genesis row names the tables it seals from there on (storage.audit keeps no list).
audit.GENESIS_FACTS["sealed_tables"] = sorted(SEALED)


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
        pending: dict[tuple[str, Key], SessionTransaction | None] = session.info.get(PENDING, {})
        for key in [k for k, t in pending.items() if audit.within(t, transaction)]:
            del pending[key]
        audit.savepoint_rolled_back(session, transaction)
