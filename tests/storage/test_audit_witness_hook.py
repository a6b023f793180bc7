"""Storage hands each committed chain head to the witness bound to the engine (issue
25.1): after the COMMIT, once per transaction, with its last position and MAC; never for
a transaction rolled back; flagged when the transaction wrote a signed checkpoint."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from storage import audit
from storage.audit import AuditChainHead
from storage.db import make_sessionmaker


class Recorder:
    def __init__(self) -> None:
        self.heads: list[tuple[int, str, bool]] = []

    def committed(self, position: int, mac: str, *, checkpointed: bool) -> None:
        self.heads.append((position, mac, checkpointed))


async def _head(engine: AsyncEngine) -> tuple[int, str]:
    async with make_sessionmaker(engine)() as s:
        head = await s.get(AuditChainHead, 1)
        assert head is not None
        return head.last_id, head.last_hash


async def _refused(engine: AsyncEngine) -> None:
    async with make_sessionmaker(engine)() as s, s.begin():
        await audit.record(s, actor="director:anna", action="t.three", subject="x")
        raise RuntimeError("refused")


async def test_the_witness_hears_each_committed_head_once(engine: AsyncEngine) -> None:
    seen = Recorder()
    audit.bind_witness(engine, seen)
    sessions = make_sessionmaker(engine)
    async with sessions() as s, s.begin():
        await audit.record(s, actor="director:anna", action="t.one", subject="x")
        await audit.record(s, actor="director:anna", action="t.two", subject="x")
    first = await _head(engine)
    assert seen.heads == [(*first, False)]  # genesis + two rows: one head, the last
    with pytest.raises(RuntimeError, match="refused"):
        await _refused(engine)
    assert await _head(engine) == first
    assert len(seen.heads) == 1  # nothing committed, nothing witnessed
    async with sessions() as s, s.begin():
        await audit.record(s, actor="director:anna", action="t.close", subject="x")
        audit.request_checkpoint(s, "heat close")
    assert seen.heads[-1] == (*(await _head(engine)), True)
    async with sessions() as s, s.begin():
        await s.get(AuditChainHead, 1)  # a read: the head does not move
    assert len(seen.heads) == 2
    audit.bind_witness(engine, None)
    assert audit.witness_of_engine(engine) is None


async def test_a_session_joined_as_a_savepoint_is_never_witnessed(engine: AsyncEngine) -> None:
    """A session joined to another's transaction (the Super 9 desk inside an API
    request, gateway/web/api/super9_desk.py) commits only a savepoint: the transaction
    around it may roll back (a dual-control trial, S9-29's manual spin), so its head is
    never told to the witness; the outer transaction's own commit still is."""
    from sqlalchemy.ext.asyncio import async_sessionmaker

    seen = Recorder()
    audit.bind_witness(engine, seen)
    sessions = make_sessionmaker(engine)
    async with sessions() as outer, outer.begin():
        await audit.record(outer, actor="director:anna", action="t.outer", subject="x")
    assert len(seen.heads) == 1
    before = await _head(engine)
    async with sessions() as outer:
        await outer.begin()
        joined = async_sessionmaker(
            bind=await outer.connection(), join_transaction_mode="create_savepoint"
        )
        async with joined() as inner, inner.begin():
            await audit.record(inner, actor="dealer:sam", action="t.trial", subject="x")
        await outer.rollback()  # the trial: undone
    assert await _head(engine) == before
    assert len(seen.heads) == 1  # the undone head was never witnessed
    audit.bind_witness(engine, None)
