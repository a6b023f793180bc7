"""Amendments, not tampering (issue 24, problem 2): a change the rules allow after a
stage's cut was sealed — a manual score (T23) under dual control, an added heat (T10),
a restart (T20) — is chained as an amendment under a new signed checkpoint, and ``audit
verify`` reads "intact, N amendments"; a change the rules no longer allow is refused
naming the rule; a score row edited behind the gateway's back is still BROKEN."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.app.cli import main
from gateway.records import chain
from gateway.records.keys import SIGNING_KEY_ENV
from gateway.records.stage_export import stage_body
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.amendments import AMEND_ACTION, amended_entries
from gateway.tournament.services.signage import leaderboard
from storage.audit import AuditCheckpoint, AuditEntry
from storage.db import make_sessionmaker
from storage.migrate import head_revision
from storage.tournament import Tournament

from ..tournament.conftest import Desk, at, score
from .test_checkpoints import DAY, _journal, _season, _verify


@pytest.fixture
def signatures(record_keys: object) -> chain.SignatureChecker:
    """The public half of the session's signing key (tests/conftest.py)."""
    return chain.SignatureChecker(Path(os.environ[SIGNING_KEY_ENV]).with_suffix(".pub"))


async def _stage_body(session: AsyncSession, tournament_id: int) -> dict[str, Any]:
    tournament = await session.get(Tournament, tournament_id)
    assert tournament is not None
    return await stage_body(session, tournament, Stage.QUALIFYING)


async def _amendments(engine: AsyncEngine) -> list[AuditEntry]:
    async with make_sessionmaker(engine)() as session:
        rows = await session.scalars(
            select(AuditEntry).where(AuditEntry.action == AMEND_ACTION).order_by(AuditEntry.id)
        )
        return list(rows.all())


async def _seat_of(desk: Desk, heat: int) -> int:
    (seat,) = await desk.run(svc.heat_seats, heat)
    return int(seat.seat_id)


async def test_t23_manual_score_after_the_cut_is_one_amendment(
    desk: Desk, engine: AsyncEngine, signatures: chain.SignatureChecker
) -> None:
    first, _second = await _season(desk)
    seat = await _seat_of(desk, first)
    await desk.run(
        svc.enter_manual_score, seat, score(1234), reason="meter read by hand",
        actor="dora", approved_by="sam", at=at(DAY, 21),
    )  # fmt: skip
    result = await _verify(engine, signatures)
    assert result.ok, [f.line() for f in result.findings]
    (listed,) = result.amendments
    assert listed["kind"] == "score.manual"
    assert listed["rule"] == 23
    assert listed["change"]["old_credits"] == 1200
    assert listed["change"]["new_credits"] == 1234
    assert (listed["requested_by"], listed["approved_by"]) == ("dora", "sam")
    assert listed["reason"] == "meter read by hand"
    # Sealed again: a signed checkpoint at or after the amendment names the change.
    async with make_sessionmaker(engine)() as session:
        point = await session.get(AuditCheckpoint, listed["checkpoint"])
        assert point is not None
        assert "qualifying cut amended: score.manual" in point.reason
        assert "rule 23" in point.reason
        entries = await amended_entries(session, desk.tournament_id, Stage.QUALIFYING)
    (amend,) = await _amendments(engine)
    assert point.position >= amend.id
    assert [line[2] for line in amend.details_dict()["standings"]] == [1234, 900]
    assert entries == set(amend.details_dict()["entries"])
    board = await desk.run(leaderboard, desk.tournament_id, Stage.QUALIFYING, now=at(DAY, 22))
    assert [(r["credits"], r["amended"]) for r in board["rows"]] == [(1234, True), (900, False)]
    export = await desk.run(_stage_body, desk.tournament_id)
    assert [a["kind"] for a in export["amendments"]] == ["score.manual"]
    assert [line["amended"] for line in export["standings"]] == [True, False]


async def test_an_unauthorised_edit_after_an_amendment_is_still_broken(
    desk: Desk, engine: AsyncEngine
) -> None:
    first, _ = await _season(desk)
    await desk.run(
        svc.enter_manual_score, await _seat_of(desk, first), score(1234), reason="hand read",
        actor="dora", approved_by="sam", at=at(DAY, 21),
    )  # fmt: skip
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE scores SET final_credits = 5000 WHERE final_credits = 1234")
        )
    result = await _verify(engine, None)
    lines = [f.line() for f in result.findings]
    assert not result.ok
    assert any("differs from its seal" in line for line in lines)
    assert any("5000 credits now, 1234 at the cut" in line for line in lines)
    assert len(result.amendments) == 1  # the legitimate one is still listed


async def _added_heat(desk: Desk, hour: int) -> int:
    return int(
        (
            await desk.run(
                svc.schedule_heat, desk.tournament_id, stage=Stage.QUALIFYING,
                starts_at=at(DAY, hour), bank_name="A", duration_seconds=600,
                starting_credits=1000, actor="director", now=at(DAY, 20, 30),
                announced_via="MC announcement",
            )
        ).id
    )  # fmt: skip


async def test_t10_heat_added_after_the_cut_reopens_and_reseals_it(
    desk: Desk, engine: AsyncEngine, signatures: chain.SignatureChecker
) -> None:
    await _season(desk)
    cara = await desk.player("8203035009089", "Cara")
    (c,) = await desk.sell(cara, at(DAY, 9))
    added = await _added_heat(desk, 22)
    await desk.register(added, cara, at(DAY, 21), entry=c)
    reopened = await _verify(engine, signatures)  # before the added heat has scored
    assert reopened.ok, [f.line() for f in reopened.findings]
    await desk.run(_journal, added, 1500)
    await desk.play(added, {1: 1500}, at(DAY, 22))
    result = await _verify(engine, signatures)
    assert result.ok, [f.line() for f in result.findings]
    (listed,) = result.amendments
    assert (listed["kind"], listed["rule"]) == ("heat.added", 10)
    assert listed["reason"] == "heat added, announced via MC announcement"
    assert listed["checkpoint"] is not None
    # ...and the re-sealed cut is what the standings show.
    q = await desk.run(svc.stage_standings, desk.tournament_id, Stage.QUALIFYING)
    assert [line.credits for line in q.lines] == [1500, 1200, 900]


async def test_t10_heat_added_after_the_cut_must_be_announced(desk: Desk) -> None:
    await _season(desk)
    with pytest.raises(RuleViolation, match=r"^rule 10: .*announced"):
        await desk.heat(at(DAY, 22), now=at(DAY, 20, 30))


async def test_t20_restart_after_the_cut_is_an_amendment(
    desk: Desk, engine: AsyncEngine, signatures: chain.SignatureChecker
) -> None:
    await _season(desk)
    cara = await desk.player("8203035009089", "Cara")
    (c,) = await desk.sell(cara, at(DAY, 9))
    added = await _added_heat(desk, 22)
    await desk.register(added, cara, at(DAY, 21), entry=c)
    seat = await _seat_of(desk, added)
    await desk.run(svc.begin_heat, added, present_seats=[1], at=at(DAY, 22), actor="director")
    await desk.run(svc.record_machine_score, seat, score(700), at=at(DAY, 22, 5))
    heat = await desk.run(
        svc.restart_heat, added, failed_at=at(DAY, 22, 6), now=at(DAY, 22, 8),
        actor="director", reason="controller lost the bank",
    )  # fmt: skip
    assert heat.status is HeatStatus.RESTARTED
    await desk.run(_journal, added, 1100)
    await desk.play(added, {1: 1100}, at(DAY, 22, 30))
    result = await _verify(engine, signatures)
    assert result.ok, [f.line() for f in result.findings]
    kinds = [(a["kind"], a["rule"]) for a in result.amendments]
    assert kinds == [("heat.added", 10), ("heat.restart", 20)]
    assert result.amendments[1]["change"] == {"restarts": 1, "discarded": 1}
    assert result.amendments[1]["reason"] == "controller lost the bank"


async def test_a_change_once_the_semi_finals_are_drawn_is_refused_naming_rule_14(
    desk: Desk, engine: AsyncEngine
) -> None:
    first, _ = await _season(desk)
    await desk.heat(at(DAY + timedelta(days=7), 18), stage=Stage.SEMI_FINAL, now=at(DAY, 8))
    await desk.run(
        svc.seat_stage, desk.tournament_id, Stage.SEMI_FINAL, actor="director", at=at(DAY, 21)
    )
    seat = await _seat_of(desk, first)
    with pytest.raises(RuleViolation) as refused:
        await desk.run(
            svc.enter_manual_score, seat, score(1234), reason="late correction",
            actor="dora", approved_by="sam", at=at(DAY, 21, 30),
        )  # fmt: skip
    assert str(refused.value) == (
        "rule 14: the semi-final seats were drawn from the qualifying cut; it can no longer change"
    )
    with pytest.raises(RuleViolation, match=r"^rule 14: "):
        await _added_heat(desk, 23)
    assert await _amendments(engine) == []
    async with make_sessionmaker(engine)() as session:
        stored = await session.scalar(text("SELECT final_credits FROM scores ORDER BY id LIMIT 1"))
    assert stored == 1200  # nothing changed
    result = await _verify(engine, None)
    assert result.ok, [f.line() for f in result.findings]


async def test_verify_json_lists_the_amendments(desk: Desk, engine: AsyncEngine) -> None:
    first, _ = await _season(desk)
    await desk.run(
        svc.enter_manual_score, await _seat_of(desk, first), score(1234), reason="hand read",
        actor="dora", approved_by="sam", at=at(DAY, 21),
    )  # fmt: skip
    data = json.loads(json.dumps((await _verify(engine, None)).as_dict()))
    assert data["ok"] is True
    assert [a["kind"] for a in data["amendments"]] == ["score.manual"]


async def test_cli_audit_verify_counts_and_lists_the_amendments(
    desk: Desk, engine: AsyncEngine, db_backend: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    if db_backend != "sqlite":
        pytest.skip("the command opens the test's SQLite file")
    first, _ = await _season(desk)
    await desk.run(
        svc.enter_manual_score, await _seat_of(desk, first), score(1234), reason="hand read",
        actor="dora", approved_by="sam", at=at(DAY, 21),
    )  # fmt: skip
    async with engine.begin() as conn:  # created from the models: stamp it as upgraded
        await conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32))"))
        await conn.execute(text(f"INSERT INTO alembic_version VALUES ('{head_revision()}')"))
    capsys.readouterr()
    argv = ["audit", "verify", "--database", f"sqlite:///{tmp_path / 'test.db'}"]
    code = await asyncio.to_thread(main, argv)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    first_line, listed, *_ = out.splitlines()
    assert first_line.startswith("audit log intact, 1 amendment(s): ")
    assert listed.startswith("  amendment (audit row ")
    assert "tournament 1 qualifying score.manual (rule 23; entry 1, new_credits 1234, " in listed
    assert listed.endswith("by dora, approved by sam — hand read")
