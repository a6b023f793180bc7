"""Append-only audit log under a keyed chain: every change a person makes, every result.

Theory of operation
-------------------
Each row carries ``hash = HMAC-SHA256(key, prev_hash + "\\n" + body)`` (hex), where
``body`` is the canonical JSON of the row's position, instant, actor, action, subject,
reason and details.  The key lives outside the database (``gateway.records.keys``), so
someone who can write the database but lacks the key cannot re-sign an edited,
inserted or deleted row: :mod:`storage.audit_verify` names the first row that no longer
checks out.  A single chain-head row (``audit_chain_head``, id 1) holds the last
position and MAC; writers serialise on it (``SELECT ... FOR UPDATE`` on PostgreSQL;
SQLite transactions are already ``BEGIN IMMEDIATE``), so positions are gapless and the
chain never forks.  The head also reveals a truncated tail.

**Rows are chained at commit.**  :func:`record` only checks a row and keeps it with the
transaction; the session's ``before_commit`` (:mod:`storage.seals`, after the result
seals) locks the head, numbers, MACs and inserts the transaction's rows as its last
statements (:func:`write_pending`).  So the head is locked from just before COMMIT,
not for the whole request, and desks writing at once queue for microseconds.  A row
recorded in a savepoint that is rolled back is dropped with it; one recorded before a
savepoint but written inside it (a query of ``audit_log`` in the same transaction
writes the rows waiting first, so a transaction reads its own rows) waits again.  Its
``at`` is the instant it is chained, so instants grow along the chain.

**Where the key comes from.**  Storage never reads a key file or the environment.  The
gateway's one database opener binds a :class:`ChainKeys` to the engine
(:func:`bind_keys`, an engine execution option), so every session on that engine finds
it (:func:`keys_of`) without each of the many callers of :func:`record` passing it.  A
write with no key bound raises :class:`AuditKeyMissing`: Reelgate never writes an
unkeyed row.

**Databases from before the key** (the plain SHA-256 chain, ``keyed`` false) are never
rewritten: re-signing old rows would launder any edit made before.  The first keyed
write appends a *genesis* row, ``audit.chain_keyed``, whose details hold the legacy
chain's length and last hash and the key's id; from there on every row is keyed.  The
legacy rows are then sealed by the genesis row's MAC (their SHA-256 chain must still end
at the recorded hash), and the verifier reports "keyed from position N".  A fresh
database's first row is its genesis row.

**Checkpoints.**  :func:`request_checkpoint` asks for a signed checkpoint when the
transaction commits (heat close, stage close, Super 9 session close; the gateway's
witness also asks a minute after any write and at shutdown): after the
transaction's result seals (:mod:`storage.seals`) the head position and MAC and the
instant are signed with the venue's Ed25519 key (the signer is part of
:class:`ChainKeys`; storage only calls it), stored in ``audit_checkpoint`` and chained
by an ``audit.checkpoint`` row, so a deleted checkpoint is missed by the verifier.

**The witness.**  A chain can be cut short by someone who deletes the last rows and sets
the head back (or restores an older backup): what is left still verifies.  So the head
must also be known outside the database.  The gateway binds a :class:`HeadWitness` to
the engine (:func:`bind_witness`, like the keys); after every commit that moved the
head, the session hands it the new position and MAC (:func:`_witness_commit`), and the
gateway writes it where the database cannot reach (``gateway.records.witness``).
"""

from __future__ import annotations

import enum
import functools
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date, datetime
from json.encoder import encode_basestring
from typing import Any, Protocol

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Index,
    Insert,
    Integer,
    Select,
    String,
    Table,
    Text,
    Update,
    bindparam,
    event,
    false,
    insert,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import Mapped, ORMExecuteState, Session, SessionTransaction, mapped_column
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.util import find_tables

from storage.chain_errors import AuditKeyMissing as AuditKeyMissing  # re-exported
from storage.db import Base
from storage.types import UTCDateTime, utcnow

GENESIS_HASH = "0" * 64
GENESIS_ACTION = "audit.chain_keyed"
CHECKPOINT_ACTION = "audit.checkpoint"
SYSTEM_ACTOR = "system:records"
_MAX_TEXT = {"actor": 100, "action": 100, "subject": 200}
_KEYS_OPTION = "reelgate_chain_keys"
_CHECKPOINT_INFO = "reelgate_checkpoint"
_LAST_ACTOR_INFO = "reelgate_last_actor"
_HEAD_INFO = "reelgate_chain_head"  # (transaction that locked it, the head row)
_WAITING_INFO = "reelgate_audit_waiting"  # [(transaction recorded in, row)] to chain
_WRITTEN_INFO = "reelgate_audit_written"  # [(written in, recorded in, row)] in savepoints
_MOVED_INFO = "reelgate_chain_moved"  # (position, MAC) this transaction moved the head to
_SIGNED_INFO = "reelgate_chain_signed"  # this transaction wrote a signed checkpoint
_WITNESS_OPTION = "reelgate_chain_witness"
GENESIS_INFO = "reelgate_seal_everything"  # storage.seals seals every result row then
# More the genesis row states: storage.seals names the tables it seals from there on.
GENESIS_FACTS: dict[str, Any] = {}
_KEY_ID_LABEL = b"reelgate audit key id"
# Execution option of a query that never reads ``audit_log`` (the seals' read-backs):
# it needs no waiting rows written first, nor the search of its FROM that tells.
NOT_THE_LOG = "reelgate_not_the_audit_log"


@dataclass(frozen=True)
class ChainKeys:
    """The keys a session writes with: the HMAC key and, optionally, the checkpoint signer.

    ``sign`` maps the bytes of a checkpoint to an Ed25519 signature; ``fingerprint``
    names the public key that verifies it.  Without a signer no checkpoint is written
    (a database copied without the signing key can be read, not re-signed).
    """

    mac_key: bytes = field(repr=False)
    sign: Callable[[bytes], bytes] | None = field(default=None, repr=False)
    fingerprint: str | None = None

    @property
    def key_id(self) -> str:
        """A public name for the MAC key (an HMAC of a fixed label): tells keys apart."""
        return hmac.digest(self.mac_key, _KEY_ID_LABEL, "sha256").hex()[:16]


# Facts about *how* a change was made that belong in every audit row it writes — e.g.
# a keyed time: ``{"clock": {"keyed_at": ..., "real_at": ..., "reason": ...}}``.  Set
# by the command around its work (:func:`annotated`), merged into ``details``.
ANNOTATION: ContextVar[dict[str, Any] | None] = ContextVar("audit_annotation", default=None)


@contextmanager
def annotated(**facts: Any) -> Iterator[None]:
    """Every row recorded inside the block carries ``facts`` in its details."""
    token = ANNOTATION.set({**(ANNOTATION.get() or {}), **facts})
    try:
        yield
    finally:
        ANNOTATION.reset(token)


class AuditEntry(Base):
    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_subject", "subject"),
        Index("ix_audit_log_at", "at"),
    )

    # The chain position, assigned under the head lock (not a sequence: no gaps).
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(100))
    subject: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str | None] = mapped_column(Text)
    details: Mapped[str] = mapped_column(Text)  # canonical JSON text, hashed as stored
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64), unique=True)  # the MAC of a keyed row
    # False only for rows written before the chain was keyed (plain SHA-256).
    keyed: Mapped[bool] = mapped_column(Boolean, default=True, server_default=false())

    def details_dict(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.details)
        return loaded


class AuditChainHead(Base):
    __tablename__ = "audit_chain_head"
    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_id: Mapped[int] = mapped_column(BigInteger)
    last_hash: Mapped[str] = mapped_column(String(64))
    # The position of the genesis row; None while the chain is not keyed yet.
    keyed_from: Mapped[int | None] = mapped_column(BigInteger)


class AuditCheckpoint(Base):
    """A signed statement "the chain stood at position P with MAC M at instant T"."""

    __tablename__ = "audit_checkpoint"
    __table_args__ = (Index("ix_audit_checkpoint_position", "position"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    position: Mapped[int] = mapped_column(BigInteger)
    mac: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    reason: Mapped[str] = mapped_column(String(200))
    signature: Mapped[str] = mapped_column(String(128))  # Ed25519, hex
    key_fingerprint: Mapped[str] = mapped_column(String(64))


class HeadWitness(Protocol):
    """Told of every committed move of the chain head (called inside ``after_commit``:
    it must only note the head and return; the writing is the witness's own)."""

    def committed(self, position: int, mac: str, *, checkpointed: bool) -> None: ...


def bind_witness(engine: AsyncEngine, witness: HeadWitness | None) -> None:
    """Tell ``witness`` of every head that a session on ``engine`` commits."""
    engine.sync_engine.update_execution_options(**{_WITNESS_OPTION: witness})


def witness_of_engine(engine: AsyncEngine) -> HeadWitness | None:
    found: HeadWitness | None = engine.sync_engine.get_execution_options().get(_WITNESS_OPTION)
    return found


@event.listens_for(Session, "after_commit")
def _witness_commit(session: Session) -> None:
    """The head this transaction committed, to the witness bound to the engine (if any).
    Only the outermost commit fires this, after the database said COMMIT succeeded.

    A session bound to a connection whose transaction is still open after the session's
    commit (one joined to another session's transaction as a savepoint, e.g. the Super 9
    desk inside an API request) committed nothing to the database: the transaction
    around it may still roll back (a dual-control trial, a refused console form), so its
    head is not witnessed — the witness is never told of a head that could be undone."""
    moved = session.info.pop(_MOVED_INFO, None)
    signed = session.info.pop(_SIGNED_INFO, False)
    if moved is None:
        return
    bind = session.get_bind()
    if isinstance(bind, Connection) and bind.in_transaction():
        return
    witness = session.get_bind().get_execution_options().get(_WITNESS_OPTION)
    if witness is not None:
        witness.committed(moved[0], moved[1], checkpointed=signed)


def bind_keys(engine: AsyncEngine, keys: ChainKeys | None) -> None:
    """Make every session on ``engine`` write (and verify) with ``keys``."""
    engine.sync_engine.update_execution_options(**{_KEYS_OPTION: keys})


def keys_of_engine(engine: AsyncEngine) -> ChainKeys | None:
    found = engine.sync_engine.get_execution_options().get(_KEYS_OPTION)
    return found if isinstance(found, ChainKeys) else None


def keys_of(session: Session | AsyncSession) -> ChainKeys | None:
    sync = session.sync_session if isinstance(session, AsyncSession) else session
    found = sync.get_bind().get_execution_options().get(_KEYS_OPTION)
    return found if isinstance(found, ChainKeys) else None


def require_keys(session: Session | AsyncSession) -> ChainKeys:
    keys = keys_of(session)
    if keys is None:
        raise AuditKeyMissing(
            "no audit key: set REELGATE_AUDIT_KEY_FILE (create one with "
            "`reelgate audit keys-init`); nothing saved"
        )
    return keys


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    raise TypeError(f"audit details: {type(value).__name__} is not JSON-serialisable")


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8, no NaN: one text per value, so one hash."""
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_json_default,
    )


# The row body in canonical JSON, built by format rather than by dumping a dict: the
# verifier computes it a million times.  Keys in sorted order; tests check it against
# canonical_json.
_quote = encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses


def row_body(
    id: int, at: datetime, actor: str, action: str, subject: str, reason: str | None, details: str
) -> str:
    """``canonical_json`` of the row's hashed fields (``details`` is the stored text)."""
    return (
        f'{{"action":{_quote(action)},"actor":{_quote(actor)},'
        f'"at":"{at.isoformat(timespec="microseconds")}","details":{_quote(details)},'
        f'"id":{id},"reason":{"null" if reason is None else _quote(reason)},'
        f'"subject":{_quote(subject)}}}'
    )


def row_hash(
    *,
    prev_hash: str,
    id: int,
    at: datetime,
    actor: str,
    action: str,
    subject: str,
    reason: str | None,
    details: str,
) -> str:
    """The legacy (unkeyed, before the key) SHA-256 hash of one row."""
    body = row_body(id, at, actor, action, subject, reason, details)
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def row_mac(mac_key: bytes, prev_hash: str, body: str) -> str:
    """The keyed chain: HMAC-SHA256 over the previous MAC and this row's body."""
    return hmac.digest(mac_key, f"{prev_hash}\n{body}".encode(), "sha256").hex()


def _hash_of(entry: AuditEntry, prev_hash: str, mac_key: bytes | None = None) -> str:
    body = row_body(
        entry.id, entry.at, entry.actor, entry.action, entry.subject, entry.reason, entry.details
    )
    if entry.keyed and mac_key is not None:
        return row_mac(mac_key, prev_hash, body)
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def _check_text(field_name: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"audit {field_name} must be a non-empty string")
    if len(value) > _MAX_TEXT[field_name]:
        raise ValueError(f"audit {field_name} longer than {_MAX_TEXT[field_name]} characters")


def _innermost(session: Session) -> SessionTransaction | None:
    return session.get_nested_transaction() or session.get_transaction()


def _still_locked(session: Session) -> AuditChainHead | None:
    """The head this transaction locked already, if the lock is still its own: taken in
    the transaction in progress or one enclosing it (a savepoint rolled back releases the
    row locks taken inside it), and the row still in the session.  Nobody else can have
    changed it since; its attributes are our own (reloaded if a rollback expired them)."""
    held = session.info.get(_HEAD_INFO)
    if held is None:
        return None
    taken_in, head = held
    transaction = _innermost(session)
    while transaction is not None:
        if transaction is taken_in:
            return head if taken_in.is_active and head in session else None
        transaction = transaction.parent
    return None


def _lock_head(session: Session) -> AuditChainHead:
    """Lock the chain head for this transaction, creating it on the very first record.
    A transaction recording several rows (a change and its seal) locks it once."""
    head = _still_locked(session)
    if head is None:
        head = _select_head(session)
        session.info[_HEAD_INFO] = (_innermost(session), head)
    return head


_LOCK_HEAD = (
    select(AuditChainHead)
    .where(AuditChainHead.id == 1)
    .with_for_update()
    .execution_options(populate_existing=True)
)


def _select_head(session: Session) -> AuditChainHead:
    locked = _LOCK_HEAD
    head = session.execute(locked).scalar_one_or_none()
    if head is not None:
        return head
    # Two first writers may race here: ON CONFLICT lets the loser fall through to the lock.
    dialect = session.get_bind().dialect.name
    values = {"id": 1, "last_id": 0, "last_hash": GENESIS_HASH, "keyed_from": None}
    if dialect == "postgresql":
        session.execute(postgresql.insert(AuditChainHead).values(**values).on_conflict_do_nothing())
    elif dialect == "sqlite":
        session.execute(sqlite.insert(AuditChainHead).values(**values).on_conflict_do_nothing())
    else:  # pragma: no cover - only the two supported backends
        raise RuntimeError(f"audit log: unsupported database {dialect}")
    return session.execute(locked).scalar_one()


def _chain(head: AuditChainHead, keys: ChainKeys, entry: AuditEntry) -> None:
    """Give ``entry`` the next position and MAC under the locked head (:func:`_insert`
    writes both)."""
    entry.id = head.last_id + 1
    entry.at = utcnow()
    entry.prev_hash = head.last_hash
    entry.hash = _hash_of(entry, head.last_hash, keys.mac_key)
    set_committed_value(head, "last_id", entry.id)
    set_committed_value(head, "last_hash", entry.hash)


_AUDIT_COLUMNS = ("id", "at", "actor", "action", "subject", "reason", "details")
_ROW_COLUMNS = (*_AUDIT_COLUMNS, "prev_hash", "hash", "keyed")
_INSERT_CHUNK = 500  # rows per INSERT: 11 parameters a row, far below PostgreSQL's 32767
# A transaction writes one to a few rows.  A multi-row INSERT has no compiled-cache key,
# so building and compiling it cost about a millisecond of CPU on every commit, under the
# head lock (and a registration's heat lock).  Up to this many rows the statement is
# built once, of single-row INSERTs (each cacheable); more (a genesis seal, a schedule)
# are rare and built each time.
_KEPT_ROWS = 8


def _table(model: type[Base]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


def _one_row(i: int) -> Insert:
    """``INSERT INTO audit_log`` of one row, bound parameters ``row<i>_<column>``."""
    log = _table(AuditEntry)
    return insert(log).values(
        {c: bindparam(f"row{i}_{c}", type_=log.c[c].type) for c in _ROW_COLUMNS}
    )


def _head_move() -> Update:
    head = _table(AuditChainHead)
    return (
        update(head)
        .where(head.c.id == 1)
        .values(
            last_id=bindparam("head_last_id", type_=head.c.last_id.type),
            last_hash=bindparam("head_last_hash", type_=head.c.last_hash.type),
            keyed_from=bindparam("head_keyed_from", type_=head.c.keyed_from.type),
        )
    )


_HEAD_MOVE = _head_move()
_ROW = insert(_table(AuditEntry))  # SQLite: executemany, one hand-off for all rows


@functools.cache
def _rows_and_head(count: int) -> Update:
    """PostgreSQL: the head's move with ``count`` rows inserted in its WITH."""
    both = _head_move()
    for i in range(count):
        both = both.add_cte(_one_row(i).cte(f"chained_{i}"))
    return both


def _values(entry: AuditEntry) -> dict[str, Any]:
    return {c: getattr(entry, c) for c in _ROW_COLUMNS}


def _insert(session: Session, head: AuditChainHead, entries: list[AuditEntry]) -> None:
    """Insert chained rows and move the head to the last of them, by Core statements, so
    the ORM neither re-reads nor re-sends them.  On PostgreSQL the last rows and the head
    go in one statement (INSERTs in a WITH), so the head is held for one round trip
    and the COMMIT; SQLite (no DML in WITH) runs its own process's two statements."""
    session.info[_MOVED_INFO] = (head.last_id, head.last_hash)
    moved = {
        "head_last_id": head.last_id,
        "head_last_hash": head.last_hash,
        "head_keyed_from": head.keyed_from,
    }
    if session.get_bind().dialect.name != "postgresql":
        session.execute(_ROW, [_values(e) for e in entries])
        session.execute(_HEAD_MOVE, moved)
        return
    if len(entries) <= _KEPT_ROWS:
        params = {f"row{i}_{c}": v for i, e in enumerate(entries) for c, v in _values(e).items()}
        session.execute(_rows_and_head(len(entries)), {**params, **moved})
        return
    log = _table(AuditEntry)
    chunks = [entries[i : i + _INSERT_CHUNK] for i in range(0, len(entries), _INSERT_CHUNK)]
    last = chunks.pop()
    for chunk in chunks:
        session.execute(insert(log).values([_values(e) for e in chunk]))
    rows = insert(log).values([_values(e) for e in last])
    session.execute(_HEAD_MOVE.add_cte(rows.cte("chained")), moved)


def _genesis(session: Session, head: AuditChainHead, keys: ChainKeys) -> AuditEntry:
    """Key the chain from here on, sealing whatever legacy chain came before."""
    details = {
        **GENESIS_FACTS,
        "legacy_rows": head.last_id,
        "legacy_head": head.last_hash,
        "key_id": keys.key_id,
    }
    entry = AuditEntry(
        actor=SYSTEM_ACTOR,
        action=GENESIS_ACTION,
        subject="audit",
        reason="audit chain keyed from this position on",
        details=canonical_json(details),
        keyed=True,
    )
    _chain(head, keys, entry)
    set_committed_value(head, "keyed_from", head.last_id)
    session.info[GENESIS_INFO] = True
    return entry


def key_legacy_chain(session: Session) -> int | None:
    """Key a chain written before the key (genesis row now); the legacy row count."""
    keys = require_keys(session)
    head = _lock_head(session)
    if head.keyed_from is not None or head.last_id == 0:
        return None
    legacy = head.last_id
    _insert(session, head, [_genesis(session, head, keys)])
    return legacy


def append_sync(
    session: Session,
    *,
    actor: str,
    action: str,
    subject: str,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """:func:`record` for a synchronous session (ORM event handlers use it).  The row
    gets its position, instant and MAC when the transaction commits."""
    _check_text("actor", actor)
    _check_text("action", action)
    _check_text("subject", subject)
    details_text = canonical_json(details or {})
    require_keys(session)
    entry = AuditEntry(
        actor=actor,
        action=action,
        subject=subject,
        reason=reason,
        details=details_text,
        keyed=True,
    )
    session.info.setdefault(_WAITING_INFO, []).append((_innermost(session), entry))
    if action != CHECKPOINT_ACTION and not actor.startswith("system:"):
        session.info[_LAST_ACTOR_INFO] = actor
    return entry


def has_waiting(session: Session) -> bool:
    return bool(session.info.get(_WAITING_INFO))


def write_pending(session: Session) -> None:
    """Chain and insert the rows this transaction recorded, under the head lock (taken
    here, once per transaction): the last statements before COMMIT."""
    waiting: list[tuple[SessionTransaction | None, AuditEntry]] = session.info.pop(
        _WAITING_INFO, []
    )
    if not waiting:
        return
    keys = require_keys(session)
    head = _lock_head(session)
    chained = [] if head.keyed_from is not None else [_genesis(session, head, keys)]
    written_in = _innermost(session)
    for recorded_in, entry in waiting:
        _chain(head, keys, entry)
        chained.append(entry)
        if written_in is not None and written_in.nested:  # undone if the savepoint is
            session.info.setdefault(_WRITTEN_INFO, []).append((written_in, recorded_in, entry))
    _insert(session, head, chained)


def within(transaction: SessionTransaction | None, outer: SessionTransaction) -> bool:
    while transaction is not None:
        if transaction is outer:
            return True
        transaction = transaction.parent
    return False


def savepoint_rolled_back(session: Session, savepoint: SessionTransaction) -> None:
    """Forget the rows recorded inside ``savepoint``; rows recorded before it but written
    inside it (their inserts are undone) wait to be chained again."""
    again, kept = [], []
    written = session.info.get(_WRITTEN_INFO, [])
    for written_in, recorded_in, entry in written:
        if not within(written_in, savepoint):
            kept.append((written_in, recorded_in, entry))
        elif not within(recorded_in, savepoint):
            again.append((recorded_in, entry))
    waiting = session.info.get(_WAITING_INFO, [])
    # those written were recorded before those still waiting: recording order kept
    session.info[_WAITING_INFO] = again + [(t, e) for t, e in waiting if not within(t, savepoint)]
    session.info[_WRITTEN_INFO] = kept
    if len(kept) != len(written):
        # the head's row was moved inside it (by Core, so the ORM does not expire it):
        # read it again, under the lock this transaction may still hold; the witness is
        # told only of a head written again after (never of one undone)
        session.info.pop(_HEAD_INFO, None)
        session.info.pop(_MOVED_INFO, None)
    checkpoint = session.info.get(_CHECKPOINT_INFO)
    if checkpoint is not None and within(checkpoint[0], savepoint):
        session.info.pop(_CHECKPOINT_INFO)


@event.listens_for(Session, "do_orm_execute")
def _read_own_rows(state: ORMExecuteState) -> None:
    """A query of the log sees the rows this transaction recorded: write them first.
    (Only its FROM is searched, not the whole statement: this runs for every query
    between a record and the commit.)"""
    session = state.session
    if not (state.is_select and has_waiting(session)):
        return
    if state.execution_options.get(NOT_THE_LOG, False):  # searching its FROM costs ~1 ms
        return
    statement = state.statement
    if isinstance(statement, Select) and any(
        AuditEntry.__table__ in find_tables(f, include_joins=True, include_selects=True)
        for f in statement.get_final_froms()
    ):
        write_pending(session)


async def record(
    session: AsyncSession,
    *,
    actor: str,
    action: str,
    subject: str,
    reason: str | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append one row to the audit chain inside the caller's transaction.

    Bad input (empty actor, unserialisable details) raises before anything is written;
    no key bound raises :class:`AuditKeyMissing`.
    """

    # read here, in the caller's context (the sync half runs in SQLAlchemy's greenlet)
    merged = {**(details or {}), **(ANNOTATION.get() or {})}

    # no I/O until the commit: no need to hop into SQLAlchemy's greenlet
    return append_sync(
        session.sync_session,
        actor=actor,
        action=action,
        subject=subject,
        reason=reason,
        details=merged,
    )


def last_actor(session: Session) -> str | None:
    """The person whose audit row this transaction wrote last (seal rows name them)."""
    found = session.info.get(_LAST_ACTOR_INFO)
    return found if isinstance(found, str) else None


def forget_transaction(session: Session) -> None:
    session.info.pop(_LAST_ACTOR_INFO, None)
    session.info.pop(_CHECKPOINT_INFO, None)
    session.info.pop(_HEAD_INFO, None)
    session.info.pop(_WAITING_INFO, None)
    session.info.pop(_WRITTEN_INFO, None)
    session.info.pop(_MOVED_INFO, None)
    session.info.pop(_SIGNED_INFO, None)


def request_checkpoint(session: AsyncSession | Session, reason: str) -> None:
    """Sign the chain head when this transaction commits (after its result seals)."""
    sync = session.sync_session if isinstance(session, AsyncSession) else session
    sync.info[_CHECKPOINT_INFO] = (_innermost(sync), reason[:200])


def wants_checkpoint(session: Session) -> bool:
    return _CHECKPOINT_INFO in session.info


def checkpoint_payload(position: int, mac: str, at: datetime) -> bytes:
    """The bytes a checkpoint signature covers."""
    instant = at.isoformat(timespec="microseconds")
    return f"reelgate-audit-checkpoint\n{position}\n{mac}\n{instant}".encode()


def write_requested_checkpoint(session: Session) -> AuditCheckpoint | None:
    """Called at commit: write the checkpoint this transaction asked for, if it can sign."""
    asked = session.info.pop(_CHECKPOINT_INFO, None)
    if asked is None:
        return None
    reason = asked[1]
    keys = require_keys(session)
    if keys.sign is None or keys.fingerprint is None:
        return None  # no signing key configured: the chain is still keyed, just unsigned
    write_pending(session)  # the checkpoint signs the head after this transaction's rows
    head = _lock_head(session)
    at = utcnow()
    point = AuditCheckpoint(
        position=head.last_id,
        mac=head.last_hash,
        at=at,
        reason=str(reason),
        signature=keys.sign(checkpoint_payload(head.last_id, head.last_hash, at)).hex(),
        key_fingerprint=keys.fingerprint,
    )
    session.add(point)
    session.flush()
    append_sync(
        session,
        actor=last_actor(session) or SYSTEM_ACTOR,  # the close that asked for it
        action=CHECKPOINT_ACTION,
        subject=f"checkpoint:{point.id}",
        reason=str(reason),
        details={
            "checkpoint": point.id,
            "position": point.position,
            "mac": point.mac,
            "at": at,
            "signature": point.signature,
            "key": point.key_fingerprint,
        },
    )
    write_pending(session)
    session.info[_SIGNED_INFO] = True
    return point


@dataclass(frozen=True)
class Finding:
    table: str
    row_id: int | str
    problem: str

    def line(self) -> str:
        return f"{self.table} {self.row_id}: {self.problem}"

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "id": self.row_id, "problem": self.problem}


@dataclass
class VerifyResult:
    ok: bool
    rows_checked: int
    last_id: int
    last_hash: str
    keyed_from: int | None = None
    checkpoints: int = 0
    sealed_rows: int = 0
    findings: list[Finding] = field(default_factory=list)
    # Documented changes after a sealed cut (the gateway's stage amendments), listed.
    amendments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first_bad_id(self) -> int | None:
        ids = [int(f.row_id) for f in self.findings if f.table == "audit_log"]
        return min(ids) if ids else None

    @property
    def problem(self) -> str | None:
        return self.findings[0].line() if self.findings else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "rows_checked": self.rows_checked,
            "last_id": self.last_id,
            "last_hash": self.last_hash,
            "keyed_from": self.keyed_from,
            "checkpoints": self.checkpoints,
            "sealed_rows": self.sealed_rows,
            "first_bad_id": self.first_bad_id,
            "problem": self.problem,
            "findings": [f.as_dict() for f in self.findings],
            "amendments": self.amendments,
        }
