"""Audit log: the keyed chain, its genesis row, tamper detection, concurrent writers, the CLI.

Row 1 of a fresh database is the genesis row (``audit.chain_keyed``); the rows a test
appends start at 2.
"""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.engine.default import CACHE_HIT
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.cli import main as cli_main
from storage import audit, audit_verify, migrate
from storage.audit import GENESIS_ACTION, GENESIS_HASH, AuditEntry, ChainKeys
from storage.db import make_engine, make_sessionmaker
from storage.tournament import Stage


async def _append(engine: AsyncEngine, n: int, *, prefix: str = "s") -> list[AuditEntry]:
    made = []
    async with make_sessionmaker(engine).begin() as session:
        for i in range(n):
            made.append(
                await audit.record(
                    session,
                    actor="director:anna",
                    action="score.correct",
                    subject=f"{prefix}:{i}",
                    reason="rule 23: meter misread",
                    details={"old": 1000 + i, "new": 1100 + i, "stage": Stage.QUALIFYING},
                )
            )
    return made


async def _verify(engine: AsyncEngine) -> audit.VerifyResult:
    async with make_sessionmaker(engine)() as session:
        return await audit_verify.verify(session)


async def test_empty_log_verifies(engine: AsyncEngine) -> None:
    result = await _verify(engine)
    assert result.ok
    assert result.rows_checked == 0
    assert result.last_hash == GENESIS_HASH


async def test_append_links_rows_and_verifies(engine: AsyncEngine) -> None:
    made = await _append(engine, 5)
    assert [e.id for e in made] == [2, 3, 4, 5, 6]
    async with make_sessionmaker(engine)() as session:
        genesis = await session.get(AuditEntry, 1)
    assert genesis is not None
    assert genesis.action == GENESIS_ACTION
    assert genesis.prev_hash == GENESIS_HASH
    assert genesis.details_dict()["legacy_rows"] == 0
    assert made[0].prev_hash == genesis.hash
    assert all(made[i].prev_hash == made[i - 1].hash for i in range(1, 5))
    # Enums and dates in details are stored as canonical JSON text.
    assert made[0].details == '{"new":1100,"old":1000,"stage":"qualifying"}'
    result = await _verify(engine)
    assert result.ok, result.problem
    assert (result.rows_checked, result.last_id, result.last_hash) == (6, 6, made[-1].hash)
    assert result.keyed_from == 1


async def test_rows_read_back_hash_the_same(engine: AsyncEngine, record_keys: ChainKeys) -> None:
    """The stored instant must round-trip exactly, or every row would look tampered."""
    await _append(engine, 3)
    async with make_sessionmaker(engine)() as session:
        rows = (await session.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars()
        prev = GENESIS_HASH
        for row in rows:
            assert row.at.tzinfo is not None
            assert row.keyed
            assert audit._hash_of(row, prev, record_keys.mac_key) == row.hash
            prev = row.hash


@pytest.mark.parametrize(
    ("sql", "bad_id", "problem"),
    [
        ("UPDATE audit_log SET reason = 'rule 23: nothing to see' WHERE id = 4", 4, "altered"),
        ("UPDATE audit_log SET details = '{}' WHERE id = 3", 3, "altered"),
        ("UPDATE audit_log SET actor = 'cashier:bob' WHERE id = 2", 2, "altered"),
        ("UPDATE audit_log SET at = at - INTERVAL '1 hour' WHERE id = 5", 5, "altered"),
        ("DELETE FROM audit_log WHERE id = 3", 3, "deleted"),
        ("DELETE FROM audit_log WHERE id = 6", 6, "chain head"),
    ],
)
async def test_tampering_is_named(engine: AsyncEngine, sql: str, bad_id: int, problem: str) -> None:
    await _append(engine, 5)
    if engine.dialect.name == "sqlite":
        sql = sql.replace("at - INTERVAL '1 hour'", "'2020-01-01 00:00:00.000000'")
    async with engine.begin() as conn:
        await conn.execute(text(sql))
    result = await _verify(engine)
    assert not result.ok
    assert result.first_bad_id == bad_id
    assert result.problem is not None
    assert problem in result.problem
    assert len(result.findings) == 1, result.findings


async def test_forgery_without_the_key_is_named(engine: AsyncEngine) -> None:
    """Recomputing a row's hash (plain SHA-256, or a MAC under another key) does not help."""
    made = await _append(engine, 3)
    forged = made[1]
    body = audit.row_body(
        forged.id, forged.at, forged.actor, forged.action, forged.subject, "forged", forged.details
    )
    for new_hash in (
        audit.row_mac(b"k" * 32, forged.prev_hash, body),
        audit.row_hash(
            prev_hash=forged.prev_hash, id=forged.id, at=forged.at, actor=forged.actor,
            action=forged.action, subject=forged.subject, reason="forged", details=forged.details,
        ),
    ):  # fmt: skip
        async with engine.begin() as conn:
            await conn.execute(
                text("UPDATE audit_log SET reason = 'forged', hash = :h WHERE id = 3"),
                {"h": new_hash},
            )
        result = await _verify(engine)
        lines = [f.line() for f in result.findings]
        assert not result.ok
        assert "audit_log 3: altered: its MAC does not match its content" in lines
        assert "audit_log 4: does not link to the row before it" in lines


async def test_unkeyed_rewrite_is_refused(engine: AsyncEngine) -> None:
    """Flipping rows back to the legacy scheme and re-hashing them is named too."""
    await _append(engine, 2)
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE audit_log SET keyed = false WHERE id = 3"))
    lines = [f.line() for f in (await _verify(engine)).findings]
    assert "audit_log 3: unkeyed row after the chain was keyed" in lines


async def test_verify_with_another_key_says_so(engine: AsyncEngine, record_keys: ChainKeys) -> None:
    await _append(engine, 2)
    audit.bind_keys(engine, ChainKeys(b"x" * 32))
    try:
        result = await _verify(engine)
    finally:
        audit.bind_keys(engine, record_keys)
    assert not result.ok
    assert result.findings[0].row_id == 1
    assert "not this key" in result.findings[0].problem
    assert len(result.findings) == 1


async def test_write_without_a_key_is_refused(engine: AsyncEngine, record_keys: ChainKeys) -> None:
    audit.bind_keys(engine, None)
    try:
        async with make_sessionmaker(engine)() as session:
            with pytest.raises(audit.AuditKeyMissing, match="REELGATE_AUDIT_KEY_FILE"):
                await audit.record(session, actor="a:b", action="x.y", subject="z")
    finally:
        audit.bind_keys(engine, record_keys)
    async with make_sessionmaker(engine)() as session:
        assert await session.scalar(select(func.count()).select_from(AuditEntry)) == 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"actor": ""}, ValueError),
        ({"action": "   "}, ValueError),
        ({"subject": "x" * 201}, ValueError),
        ({"details": {"when": object()}}, TypeError),
        ({"details": {"credits": float("nan")}}, ValueError),
    ],
)
async def test_bad_input_raises_and_writes_nothing(
    engine: AsyncEngine, kwargs: dict[str, object], error: type[Exception]
) -> None:
    await _append(engine, 1)
    values: dict[str, object] = {"actor": "tech:sipho", "action": "bank.enable", "subject": "b"}
    values.update(kwargs)
    async with make_sessionmaker(engine)() as session:
        with pytest.raises(error):
            await audit.record(session, **values)  # type: ignore[arg-type]
        await session.commit()
    async with make_sessionmaker(engine)() as session:
        assert await session.scalar(select(func.count()).select_from(AuditEntry)) == 2
    assert (await _verify(engine)).ok


async def test_details_accept_dates(engine: AsyncEngine) -> None:
    async with make_sessionmaker(engine).begin() as session:
        entry = await audit.record(
            session,
            actor="director:anna",
            action="heat.reschedule",
            subject="heat:7",
            reason="rule 10",
            details={"new_start": datetime(2026, 11, 26, 17, 0, tzinfo=UTC)},
        )
    assert entry.details_dict() == {"new_start": "2026-11-26T17:00:00+00:00"}


async def test_rolled_back_change_leaves_no_gap(engine: AsyncEngine) -> None:
    await _append(engine, 2)
    async with make_sessionmaker(engine)() as session:
        await audit.record(session, actor="a", action="b", subject="c")
        await session.rollback()
    made = await _append(engine, 1, prefix="after")
    assert made[0].id == 4
    assert (await _verify(engine)).ok


def _head_reads(engine: AsyncEngine) -> list[str]:
    """The statements that read the chain head, as they are sent (a list that grows)."""
    seen: list[str] = []

    def note(_c: object, _cur: object, statement: str, *_rest: object) -> None:
        if statement.lstrip().startswith("SELECT") and "FROM audit_chain_head" in statement:
            seen.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", note)
    return seen


async def test_a_transaction_locks_the_head_once(engine: AsyncEngine) -> None:
    await _append(engine, 1)  # the genesis row is written: the head exists
    reads = _head_reads(engine)
    made = await _append(engine, 3, prefix="one-lock")
    assert len(reads) == 1
    assert [e.id for e in made] == [3, 4, 5]
    assert (await _verify(engine)).ok


async def test_a_savepoint_rolled_back_keeps_the_chain_gapless(engine: AsyncEngine) -> None:
    """Rows recorded in a rolled-back savepoint vanish (a dual-control trial run does
    this); the rest are chained at commit, under one lock of the head."""
    await _append(engine, 1)
    reads = _head_reads(engine)
    async with make_sessionmaker(engine).begin() as session:
        trial = await session.begin_nested()
        await audit.record(session, actor="desk:ann", action="trial", subject="x:1")
        await trial.rollback()
        after_trial = await audit.record(session, actor="desk:ann", action="kept", subject="x:2")
        nested = await session.begin_nested()
        await audit.record(session, actor="desk:ann", action="trial", subject="x:3")
        await nested.rollback()
        last = await audit.record(session, actor="desk:ann", action="kept", subject="x:4")
    assert len(reads) == 1  # at commit, after both savepoints
    assert (after_trial.id, last.id) == (3, 4)
    result = await _verify(engine)
    assert result.ok, result.problem
    assert result.rows_checked == 4


def _statements(engine: AsyncEngine) -> list[str]:
    """Every statement sent, in order (a list that grows)."""
    seen: list[str] = []

    def note(_c: object, _cur: object, statement: str, *_rest: object) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(engine.sync_engine, "before_cursor_execute", note)
    return seen


async def test_rows_are_chained_as_the_last_statements(engine: AsyncEngine) -> None:
    """The head is locked just before COMMIT, after the transaction's own work, so other
    writers wait on it for the commit only, not the whole request."""
    await _append(engine, 1)
    sent = _statements(engine)
    async with make_sessionmaker(engine).begin() as session:
        entry = await audit.record(session, actor="desk:ann", action="first", subject="x:1")
        assert entry.id is None  # not chained yet
        await session.execute(text("SELECT 1"))
        await audit.record(session, actor="desk:ann", action="second", subject="x:2")
        await session.execute(text("SELECT 2"))
        work = len(sent)
        assert not any("audit" in line for line in sent)
    assert "FROM audit_chain_head" in sent[work]
    assert entry.id == 3
    assert (await _verify(engine)).ok


def _audit_inserts(engine: AsyncEngine) -> list[bool]:
    """For each statement that inserts audit rows: whether its compiled form was reused."""
    reused: list[bool] = []

    def note(_c: object, _cur: object, statement: str, _p: object, context: Any, _m: bool) -> None:
        if "INSERT INTO audit_log" in statement:
            reused.append(context.cache_hit is CACHE_HIT)

    event.listen(engine.sync_engine, "before_cursor_execute", note)
    return reused


async def test_the_rows_insert_is_built_once(engine: AsyncEngine) -> None:
    """A transaction's few rows go in by a statement built once and compiled once (a
    multi-row INSERT with its values inline missed the compiled cache every time)."""
    await _append(engine, 2, prefix="genesis")  # three rows: the genesis row first
    await _append(engine, 2, prefix="warm")
    reused = _audit_inserts(engine)
    await _append(engine, 2, prefix="again")
    await _append(engine, 2, prefix="and again")
    assert reused == [True, True]
    assert (await _verify(engine)).ok


async def test_many_rows_in_one_transaction_are_chained(engine: AsyncEngine) -> None:
    """More rows than the kept statements cover are written by one built for them."""
    made = await _append(engine, audit._KEPT_ROWS + 3)
    assert [e.id for e in made] == list(range(2, audit._KEPT_ROWS + 5))
    result = await _verify(engine)
    assert result.ok, result.problem
    assert result.rows_checked == audit._KEPT_ROWS + 4


async def test_a_transaction_reads_its_own_rows(engine: AsyncEngine) -> None:
    await _append(engine, 1)
    async with make_sessionmaker(engine).begin() as session:
        await audit.record(session, actor="desk:ann", action="mine", subject="x:1")
        count = select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "mine")
        assert await session.scalar(count) == 1
        await audit.record(session, actor="desk:ann", action="mine", subject="x:2")
        assert await session.scalar(count) == 2
    result = await _verify(engine)
    assert result.ok, result.problem
    assert result.rows_checked == 4


async def test_rows_written_in_a_savepoint_rolled_back_are_written_again(
    engine: AsyncEngine,
) -> None:
    """A row recorded before a savepoint but inserted inside it (the log was read there)
    is undone with the savepoint's inserts, and chained again at commit."""
    await _append(engine, 1)
    async with make_sessionmaker(engine).begin() as session:
        await audit.record(session, actor="desk:ann", action="kept", subject="x:1")
        trial = await session.begin_nested()
        await audit.record(session, actor="desk:ann", action="trial", subject="x:2")
        assert await session.scalar(select(func.count()).select_from(AuditEntry)) == 4
        await trial.rollback()
        await audit.record(session, actor="desk:ann", action="kept", subject="x:3")
    async with make_sessionmaker(engine)() as session:
        rows = (await session.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars()
        assert [(r.id, r.subject) for r in rows][2:] == [(3, "x:1"), (4, "x:3")]
    result = await _verify(engine)
    assert result.ok, result.problem


async def test_concurrent_writers_keep_one_chain(engine: AsyncEngine) -> None:
    """Writers in separate sessions/connections serialise on the chain head."""
    writers, per_writer = 6, 8

    async def writer(w: int) -> None:
        for i in range(per_writer):
            async with make_sessionmaker(engine).begin() as session:
                await audit.record(
                    session, actor=f"cashier:{w}", action="entry.sell", subject=f"entry:{w}-{i}"
                )
                await asyncio.sleep(0)  # let the others queue on the lock

    await asyncio.gather(*(writer(w) for w in range(writers)))
    result = await _verify(engine)
    assert result.ok, result.problem
    assert result.rows_checked == writers * per_writer + 1
    async with make_sessionmaker(engine)() as session:
        ids = (await session.execute(select(AuditEntry.id).order_by(AuditEntry.id))).scalars()
        assert list(ids) == list(range(1, writers * per_writer + 2))


def test_cli_verify_and_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record_keys: ChainKeys
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    migrate.upgrade(url)

    async def seed() -> None:
        engine = make_engine(url)
        audit.bind_keys(engine, record_keys)
        try:
            await _append(engine, 4)
        finally:
            await engine.dispose()

    asyncio.run(seed())
    assert cli_main(["audit", "verify", "--database", url]) == 0
    out = capsys.readouterr().out
    assert "intact: 5 rows, keyed from row 1" in out
    assert "signed" in out

    assert cli_main(["audit", "show", "--database", url, "--json", "--limit", "2"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in shown] == [4, 5]
    assert shown[0]["details"]["stage"] == "qualifying"

    async def tamper() -> None:
        engine = make_engine(url)
        try:
            async with engine.begin() as conn:
                await conn.execute(text("UPDATE audit_log SET subject = 's:x' WHERE id = 3"))
        finally:
            await engine.dispose()

    asyncio.run(tamper())
    assert cli_main(["audit", "verify", "--database", url, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["first_bad_id"] == 3

    assert cli_main(["audit", "show", "--database", url, "--limit", "0"]) == 2
    assert "--limit" in capsys.readouterr().err


def test_cli_bad_database_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{port}/none"
    assert cli_main(["audit", "verify", "--database", url]) == 2
    assert "cannot open" in capsys.readouterr().err
    assert cli_main(["audit", "verify", "--database", "not a url"]) == 2
    assert "not a database URL" in capsys.readouterr().err


@pytest.mark.parametrize(
    "awkward",
    [
        'quote " and backslash \\ and slash /',
        "new\nline\ttab\rreturn\bback\fform",
        "control \x01\x1f and del \x7f",
        "naïve café — 日本語 😀 \u2028 separator",
        "{'json': [1, 2]}",
    ],
)
async def test_any_text_verifies(engine: AsyncEngine, awkward: str) -> None:
    """The verifier's body text (built by PostgreSQL itself there) is the writer's, byte
    for byte, whatever the text holds; and an edit of such a row is still named."""
    async with make_sessionmaker(engine).begin() as session:
        await audit.record(
            session,
            actor=f"director:{awkward}"[:100],
            action="note.add",
            subject=awkward[:200],
            reason=awkward,
            details={"text": awkward, "none": None},
        )
        await audit.record(session, actor="a:b", action="note.add", subject="plain")
    result = await _verify(engine)
    assert result.ok, [f.line() for f in result.findings]
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE audit_log SET reason = :r WHERE id = 2"), {"r": awkward + "!"}
        )
    lines = [f.line() for f in (await _verify(engine)).findings]
    assert lines == ["audit_log 2: altered: its MAC does not match its content"]
