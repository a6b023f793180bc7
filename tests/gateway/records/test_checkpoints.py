"""Signed checkpoints at every heat close and stage close, and the standings chained at
each cut (recomputed by ``audit verify`` from the sealed scores)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.records import chain
from gateway.records.keys import SIGNING_KEY_ENV, KeyPaths, create_keys
from gateway.records.verify import verify as records_verify
from gateway.tournament.services.stage_close import STAGE_CLOSE_ACTION
from storage.audit import AuditCheckpoint, AuditEntry, VerifyResult
from storage.db import make_sessionmaker
from storage.journal import HeatResult, HeatRun, RunState

from ..tournament.conftest import Desk, at, score

DAY = date(2026, 11, 20)


@pytest.fixture
def signatures(record_keys: object) -> chain.SignatureChecker:
    """The public half of the session's signing key (tests/conftest.py)."""
    return chain.SignatureChecker(Path(os.environ[SIGNING_KEY_ENV]).with_suffix(".pub"))


async def _season(desk: Desk) -> tuple[int, int]:
    """Two qualifying heats of one seat each: the second closes the qualifying stage."""
    await desk.tournament()
    anna = await desk.player("8001015009087", "Anna")
    bongi = await desk.player("8102025009088", "Bongi")
    first, second = await desk.heat(at(DAY, 18)), await desk.heat(at(DAY, 19))
    sale = at(DAY, 9)
    (a,) = await desk.sell(anna, sale)
    (b,) = await desk.sell(bongi, sale)
    await desk.register(first, anna, sale, entry=a)
    await desk.register(second, bongi, sale, entry=b)
    for heat, credits in ((first, 1200), (second, 900)):
        await desk.run(_journal, heat, credits)
        await desk.play(heat, {1: credits}, at(DAY, heat_hour(heat, first)))
    return first, second


def heat_hour(heat: int, first: int) -> int:
    return 18 if heat == first else 19


async def _journal(session: AsyncSession, heat: int, credits: int) -> None:
    """The heat journal's run and machine result the score comes from (as collect stores)."""
    run = HeatRun(
        bank_name="A", heat_id=heat, credits=1000, seconds=600, state=RunState.CLOSED,
        created_at=at(DAY, 17), updated_at=at(DAY, 17), settled=True,
    )  # fmt: skip
    session.add(run)
    await session.flush()
    expected = score(credits)
    session.add(
        HeatResult(
            run_id=run.id, machine_id="A-01", score=credits,
            games_played=expected.meters.games_played, games_won=expected.meters.games_won,
            credits_wagered=expected.meters.credits_wagered,
            credits_won=expected.meters.credits_won, collected_at=at(DAY, 20),
        )
    )  # fmt: skip


async def _verify(engine: AsyncEngine, checker: chain.SignatureChecker | None) -> VerifyResult:
    async with make_sessionmaker(engine)() as session:
        return await records_verify(session, check_signature=checker)


async def test_heat_and_stage_close_are_signed(
    desk: Desk, engine: AsyncEngine, signatures: chain.SignatureChecker
) -> None:
    await _season(desk)
    async with make_sessionmaker(engine)() as session:
        points = (await session.scalars(select(AuditCheckpoint).order_by(AuditCheckpoint.id))).all()
        closes = (
            await session.scalars(select(AuditEntry).where(AuditEntry.action == STAGE_CLOSE_ACTION))
        ).all()
    reasons = [p.reason for p in points]
    assert len(reasons) == 2
    assert reasons[0].endswith("closed")
    assert "stage closed" not in reasons[0]
    assert reasons[1].endswith("closed; qualifying stage closed")
    assert all(p.key_fingerprint == signatures.fingerprint for p in points)
    (close,) = closes
    standings = close.details_dict()["standings"]
    assert [line[2] for line in standings] == [1200, 900]
    result = await _verify(engine, signatures)
    assert result.ok, [f.line() for f in result.findings]
    assert result.checkpoints == 2


async def test_checkpoint_forged_deleted_or_other_key_is_named(
    desk: Desk,
    engine: AsyncEngine,
    signatures: chain.SignatureChecker,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    await _season(desk)
    other = KeyPaths.in_directory(tmp_path_factory.mktemp("other-keys"))
    create_keys(other)
    lines = [
        f.line() for f in (await _verify(engine, chain.SignatureChecker(other.public_key))).findings
    ]
    assert lines == [
        "audit_checkpoint 1: signature does not verify",
        "audit_checkpoint 2: signature does not verify",
    ]
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE audit_checkpoint SET signature = :s WHERE id = 1"), {"s": "00" * 64}
        )
        await conn.execute(text("DELETE FROM audit_checkpoint WHERE id = 2"))
    lines = [f.line() for f in (await _verify(engine, signatures)).findings]
    assert "audit_checkpoint 1: signature does not verify" in lines
    assert "audit_checkpoint 1: differs from its audit row" in lines
    assert "audit_checkpoint 2: deleted" in lines


async def test_a_score_edited_after_the_cut_is_named_in_the_standings(
    desk: Desk, engine: AsyncEngine
) -> None:
    """The issue's auditor: ``UPDATE scores SET final_credits=99999`` after the stage closed."""
    await _season(desk)
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE scores SET final_credits = 99999 WHERE final_credits = 900")
        )
    result = await _verify(engine, None)
    lines = [f.line() for f in result.findings]
    assert not result.ok
    assert any(line.startswith("scores ") and "differs from its seal" in line for line in lines)
    assert any(
        line.startswith("standings tournament") and "99999 credits now, 900 at the cut" in line
        for line in lines
    )
