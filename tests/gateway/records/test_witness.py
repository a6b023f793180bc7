"""The chain head's witness (issue 25.1): a sale deleted with its audit rows and the head
set back, a truncated tail, a rewritten tail, a forged witness line; the witness under
concurrent commits (one write per batch); the checkpoint a minute after a write, by an
injected clock, and at shutdown.  Both backends."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records import witness_check
from gateway.records.witness import (
    CHECKPOINT_WITHIN,
    PERIODIC_REASON,
    POLL_S,
    SHUTDOWN_REASON,
    CheckpointSchedule,
    Witness,
)
from gateway.records.witness_sinks import FileSink
from storage import audit, audit_verify
from storage.audit import AuditChainHead, AuditCheckpoint, AuditEntry, ChainKeys
from storage.db import make_sessionmaker
from storage.tournament import Entry, EntryPurchase

from ..tournament.conftest import SAST, Desk


class Clock:
    """The witness's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def witnessed(engine: AsyncEngine, tmp_path: Path, record_keys: ChainKeys, clock: Clock):  # type: ignore[no-untyped-def]
    found = Witness(engine, FileSink(tmp_path / "audit.witness"), record_keys, clock=clock)
    audit.bind_witness(engine, found)
    yield found
    audit.bind_witness(engine, None)
    await found.close()


async def _head(engine: AsyncEngine) -> tuple[int, str]:
    async with make_sessionmaker(engine)() as s:
        head = await s.get(AuditChainHead, 1)
        assert head is not None
        return head.last_id, head.last_hash


async def _check(engine: AsyncEngine, path: Path, keys: ChainKeys) -> witness_check.WitnessReport:
    async with make_sessionmaker(engine)() as s:
        return await witness_check.check(s, keys, await _read(path), f"file {path}")


async def _read(path: Path) -> str:
    return await asyncio.to_thread(path.read_text)


async def _two_sales(engine: AsyncEngine) -> tuple[Desk, int, int]:
    """Two sales; the head after the first and after the second."""
    desk = Desk(make_sessionmaker(engine))
    await desk.tournament()
    ann = await desk.player("8001015009087", "Ann")
    ben = await desk.player("8101015009086", "Ben")
    await desk.sell(ann, datetime(2026, 12, 2, 10, tzinfo=SAST))
    before, _ = await _head(engine)
    await desk.sell(ben, datetime(2026, 12, 2, 11, tzinfo=SAST))
    after, _ = await _head(engine)
    return desk, before, after


async def _delete_last_sale(engine: AsyncEngine, keep_upto: int, *, reset_head: bool) -> None:
    """The audit's attack: the last sale, its audit rows, and (rollback) the head set back."""
    async with engine.begin() as conn:
        last = (await conn.execute(select(func.max(EntryPurchase.id)))).scalar_one()
        await conn.execute(delete(Entry).where(Entry.purchase_id == last))
        await conn.execute(delete(EntryPurchase).where(EntryPurchase.id == last))
        await conn.execute(delete(AuditEntry).where(AuditEntry.id > keep_upto))
        if reset_head:
            mac = (
                await conn.execute(select(AuditEntry.hash).where(AuditEntry.id == keep_upto))
            ).scalar_one()
            await conn.execute(update(AuditChainHead).values(last_id=keep_upto, last_hash=mac))


async def test_a_deleted_sale_with_the_head_set_back_is_a_rollback_with_rows_missing(
    engine: AsyncEngine, witnessed: Witness, tmp_path: Path, record_keys: ChainKeys
) -> None:
    """25.1: delete the last sale and its audit rows, set the head back: the chain alone
    verifies (the failure found), the witness names the rollback and the rows missing."""
    _, before, after = await _two_sales(engine)
    await witnessed.settled()
    assert after > before
    await _delete_last_sale(engine, before, reset_head=True)
    async with make_sessionmaker(engine)() as s:
        alone = await audit_verify.verify(s)
    assert alone.ok, alone.findings  # what the audit found: the chain alone cannot tell
    report = await _check(engine, tmp_path / "audit.witness", record_keys)
    assert report.verdict == "ROLLED BACK"
    assert report.missing == (before + 1, after)
    missing = after - before
    assert report.headline is not None
    assert f"witness saw position {after}" in report.headline
    assert f"database ends at {before} ({missing} rows missing: {before + 1}..{after})" in (
        report.headline
    )
    assert [f.row_id for f in report.findings] == [f"{before + 1}..{after}"]


async def test_rows_deleted_with_the_head_left_are_a_truncation(
    engine: AsyncEngine, witnessed: Witness, tmp_path: Path, record_keys: ChainKeys
) -> None:
    _, before, after = await _two_sales(engine)
    await witnessed.settled()
    await _delete_last_sale(engine, before, reset_head=False)
    report = await _check(engine, tmp_path / "audit.witness", record_keys)
    assert report.verdict == "TRUNCATED"
    assert report.missing == (before + 1, after)
    assert report.headline is not None
    assert f"its head still says {after}" in report.headline


async def test_a_rewritten_tail_is_a_rollback_even_when_longer(
    engine: AsyncEngine, witnessed: Witness, tmp_path: Path, record_keys: ChainKeys
) -> None:
    """After the rollback new rows are written at the lost positions (as after an older
    backup put back by hand): the witness's MACs there differ."""
    desk, before, after = await _two_sales(engine)
    await witnessed.settled()
    await _delete_last_sale(engine, before, reset_head=True)
    cat = await desk.player("8201015009085", "Cat")
    await desk.sell(cat, datetime(2026, 12, 2, 12, tzinfo=SAST))
    await desk.sell(cat, datetime(2026, 12, 2, 13, tzinfo=SAST))
    await witnessed.settled()
    assert (await _head(engine))[0] > after  # the database is longer than the witness saw
    report = await _check(engine, tmp_path / "audit.witness", record_keys)
    assert report.verdict == "ROLLED BACK"
    assert report.missing is not None
    assert report.missing[1] == after
    assert report.missing[0] <= before + 1
    assert report.headline is not None
    assert "others stand in their place" in report.headline


async def test_an_intact_chain_passes_and_a_forged_line_is_named(
    engine: AsyncEngine, witnessed: Witness, tmp_path: Path, record_keys: ChainKeys
) -> None:
    _, _, after = await _two_sales(engine)
    await witnessed.settled()
    path = tmp_path / "audit.witness"
    report = await _check(engine, path, record_keys)
    assert (report.verdict, report.findings, report.last_witnessed) == (None, [], after)
    # Someone without the key appends a "head" far ahead (or edits a MAC): named, not
    # believed.
    line = (await _read(path)).splitlines()[-1].split(" ")
    line[2] = str(after + 50)
    await asyncio.to_thread(_append, path, " ".join(line))
    report = await _check(engine, path, record_keys)
    assert report.verdict is None
    assert [f.problem for f in report.findings] == ["tag does not verify (forged or altered)"]


def _append(path: Path, line: str) -> None:
    with path.open("a") as f:
        f.write(line + "\n")


class SlowSink:
    """Holds each write until the test lets it go; counts the lines written."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.gate = threading.Event()

    def write(self, lines: list[str], at: datetime) -> None:
        self.gate.wait(10)
        self.lines.extend(lines)

    def sync(self) -> None:
        return None

    def close(self) -> None:
        self.gate.set()


async def test_concurrent_commits_share_witness_writes(
    engine: AsyncEngine, record_keys: ChainKeys, clock: Clock
) -> None:
    """Twenty desks committing while a witness write is under way: their heads go out
    together in the next write, and every desk's answer waits for its head."""
    sink = SlowSink()
    found = Witness(engine, sink, record_keys, clock=clock)
    audit.bind_witness(engine, found)
    try:
        desk = Desk(make_sessionmaker(engine))
        await desk.tournament()
        await asyncio.sleep(0)  # the writer takes the first head and waits on the gate
        players = [await desk.player(f"80010150{i:05d}", f"P{i}") for i in range(20)]

        async def sale(player: int) -> None:
            await desk.sell(player, datetime(2026, 12, 2, 10, tzinfo=SAST))
            await found.settled()

        desks = [asyncio.create_task(sale(p)) for p in players]
        await asyncio.sleep(0.05)
        assert not any(d.done() for d in desks)  # no answer before the witness has it
        sink.gate.set()
        await asyncio.wait_for(asyncio.gather(*desks), 30)
        last, mac = await _head(engine)
        assert sink.lines[-1].split(" ")[2:4] == [str(last), mac]
        assert len(sink.lines) < 22 + 20  # 1 + 20 players + 20 sales: batched
        assert found.batches == len(sink.lines)
    finally:
        audit.bind_witness(engine, None)
        await found.close()


def test_checkpoint_schedule_is_due_a_minute_after_the_first_unsigned_write() -> None:
    plan = CheckpointSchedule(60.0)
    assert plan.deadline() is None
    plan.committed(5, checkpointed=False, now=100.0)
    plan.committed(9, checkpointed=False, now=130.0)  # still due at the first write's minute
    assert plan.deadline() == 160.0
    assert not plan.due(159.9)
    assert plan.due(160.0)
    plan.committed(11, checkpointed=True, now=161.0)  # the checkpoint's own commit
    assert plan.deadline() is None
    assert not plan.unsigned
    plan.committed(12, checkpointed=False, now=200.0)
    assert plan.deadline() == 260.0
    plan.failed(261.0)  # the database was away: again a minute later
    assert plan.deadline() == 321.0


async def _checkpoints(engine: AsyncEngine) -> list[tuple[int, str]]:
    async with make_sessionmaker(engine)() as s:
        rows = await s.execute(
            select(AuditCheckpoint.position, AuditCheckpoint.reason).order_by(AuditCheckpoint.id)
        )
        return [(int(p), str(r)) for p, r in rows.all()]


async def test_a_checkpoint_follows_a_write_within_a_minute(
    engine: AsyncEngine, tmp_path: Path, record_keys: ChainKeys, clock: Clock
) -> None:
    found = Witness(engine, FileSink(tmp_path / "w"), record_keys, clock=clock)
    audit.bind_witness(engine, found)
    desk = Desk(make_sessionmaker(engine))
    await desk.tournament()
    first, _ = await _head(engine)
    clock.t += 59.0
    await found.tick()
    assert await _checkpoints(engine) == []
    clock.t += 1.0
    await found.tick()
    assert await _checkpoints(engine) == [(first, PERIODIC_REASON)]
    clock.t += 600.0  # nothing written since: no checkpoint of a checkpoint
    await found.tick()
    await found.close()  # a one-shot command: its checkpoint is the gateway's to sign
    audit.bind_witness(engine, None)
    assert await _checkpoints(engine) == [(first, PERIODIC_REASON)]
    async with make_sessionmaker(engine)() as s:
        assert (await audit_verify.verify(s)).ok
    # the checkpoint's own head reached the witness before the file was closed
    last, mac = await _head(engine)
    assert (await _read(tmp_path / "w")).splitlines()[-1].split(" ")[2:4] == [str(last), mac]


async def test_serve_signs_a_one_shot_commands_write_within_a_minute_and_at_shutdown(
    engine: AsyncEngine, tmp_path: Path, record_keys: ChainKeys, clock: Clock
) -> None:
    found = Witness(engine, FileSink(tmp_path / "w"), record_keys, clock=clock)
    audit.bind_witness(engine, found)
    found.watch()  # serve / api
    await found.tick()
    desk = Desk(make_sessionmaker(engine))
    audit.bind_witness(engine, None)  # another process's write: this witness is not told
    await desk.tournament()
    audit.bind_witness(engine, found)
    written, _ = await _head(engine)
    clock.t += POLL_S  # the next read of the head finds it, at most POLL_S after the write
    await found.tick()
    clock.t += CHECKPOINT_WITHIN - POLL_S - 1
    await found.tick()
    assert await _checkpoints(engine) == []
    clock.t += 1.0  # a minute after the write, counted from the earliest it can have been
    await found.tick()
    assert await _checkpoints(engine) == [(written, PERIODIC_REASON)]
    clock.t += 600.0
    await found.tick()  # its own checkpoint row is no write to sign again
    assert len(await _checkpoints(engine)) == 1
    await desk.player("8001015009087", "Ann")
    second, _ = await _head(engine)
    await found.close()
    audit.bind_witness(engine, None)
    assert await _checkpoints(engine) == [
        (written, PERIODIC_REASON),
        (second, SHUTDOWN_REASON),
    ]


async def test_no_witness_entry_for_a_head_undone_in_a_savepoint(
    engine: AsyncEngine, record_keys: ChainKeys, clock: Clock
) -> None:
    sink = SlowSink()
    sink.gate.set()
    found = Witness(engine, sink, record_keys, clock=clock)
    audit.bind_witness(engine, found)
    try:
        async with make_sessionmaker(engine)() as s, s.begin():
            nested = await s.begin_nested()
            await audit.record(s, actor="director:anna", action="t.x", subject="x")
            await s.execute(select(AuditEntry.id))  # writes the row inside the savepoint
            await nested.rollback()
        await found.settled()
        assert sink.lines == []
        assert not found.pending
        async with make_sessionmaker(engine)() as s:
            assert await s.scalar(text("SELECT count(*) FROM audit_log")) == 0
    finally:
        audit.bind_witness(engine, None)
        await found.close()


class BrokenSink:
    def write(self, lines: list[str], at: datetime) -> None:
        raise OSError(28, "No space left on device")

    def sync(self) -> None:
        return None

    def close(self) -> None:
        return None


async def test_a_witness_that_cannot_be_written_holds_no_answer_and_shows_in_readyz(
    engine: AsyncEngine, tmp_path: Path, record_keys: ChainKeys, clock: Clock
) -> None:
    from gateway.app.monitoring.checks import witness_check

    found = Witness(engine, BrokenSink(), record_keys, clock=clock)
    audit.bind_witness(engine, found)
    try:
        desk = Desk(make_sessionmaker(engine))
        await desk.tournament()
        await asyncio.wait_for(found.settled(), 10)  # the sale stands; the desk is answered
        head, _ = await _head(engine)
        check = witness_check(engine)
        assert check is not None
        assert (check.ok, check.detail) == (
            False,
            f"cannot write head {head}: [Errno 28] No space left on device",
        )
        found.sink = FileSink(tmp_path / "w")  # the disk has room again
        await desk.player("8001015009087", "Ann")
        await found.settled()
        check = witness_check(engine)
        assert check is not None
        assert check.ok
    finally:
        await found.close()
        audit.bind_witness(engine, None)
