"""Tournament settings live in tables (``tournaments``, ``tournament_settings``,
``tournament_packages``); the audit log records every change but is not read back."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament import services as svc
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.settings import Package, TournamentSettings, Validity
from storage import audit_verify
from storage.audit import AuditEntry
from storage.tournament import EntryPurchase, TournamentPackage

from .conftest import Desk, at

DAY = date(2026, 11, 21)


async def _settings(desk: Desk, tid: int) -> TournamentSettings:
    async def read(session: AsyncSession) -> TournamentSettings:
        return await load_settings(session, await find_tournament(session, tid))

    result: TournamentSettings = await desk.run(read)
    return result


async def test_created_settings_round_trip_through_the_tables(desk: Desk) -> None:
    wanted = TournamentSettings(
        packages=(Package("single", 5000, 1), Package("R300", 30000, 6, 2500)),
        validity=Validity.HOURS_48,
        semi_final_qualifiers=20,
        finalists_from_semis=6,
        prize_places=4,  # T19
        postpone_after=timedelta(minutes=45),  # T20
        reschedule_notice=timedelta(hours=2),  # T10
    )
    tid = await desk.tournament(wanted)
    assert await _settings(desk, tid) == wanted


async def test_settings_do_not_come_from_the_audit_log(desk: Desk) -> None:
    tid = await desk.tournament()
    await desk.run(
        svc.change_settings,
        tid,
        {"prize_places": 5, "postpone_after_s": 2700},
        reason="rule 23: five prizes advertised",
        actor="director",
    )

    async def tamper(session: AsyncSession) -> None:
        # Someone edits the newest settings row of the audit log by hand.
        newest = await session.scalar(
            select(AuditEntry.id).where(AuditEntry.action == "tournament.settings")
        )
        forged = '{"settings":{"prize_places":1}}'
        await session.execute(
            update(AuditEntry).where(AuditEntry.id == newest).values(details=forged)
        )

    await desk.run(tamper)
    settings = await _settings(desk, tid)
    assert (settings.prize_places, settings.postpone_after) == (5, timedelta(minutes=45))
    # ...and the chain shows the forgery.
    result = await desk.run(audit_verify.verify)
    assert not result.ok


async def test_settings_change_replaces_packages_and_is_audited_with_before(desk: Desk) -> None:
    tid = await desk.tournament()
    packages = [
        {"code": "R200", "price_cents": 20000, "seats": 4},  # kept code, new position
        {"code": "single", "price_cents": 5000, "seats": 1},
        {"code": "R500", "price_cents": 50000, "seats": 10, "casino_credit_cents": 5000},
    ]
    await desk.run(
        svc.change_settings, tid, {"packages": packages}, reason="new POS", actor="director"
    )

    async def stored(session: AsyncSession) -> list[tuple[int, str]]:
        rows = await session.execute(
            select(TournamentPackage.position, TournamentPackage.code)
            .where(TournamentPackage.tournament_id == tid)
            .order_by(TournamentPackage.position)
        )
        return [(r.position, r.code) for r in rows.all()]

    assert await desk.run(stored) == [(1, "R200"), (2, "single"), (3, "R500")]
    assert [p.code for p in (await _settings(desk, tid)).packages] == ["R200", "single", "R500"]

    async def last_change(session: AsyncSession) -> dict[str, Any]:
        row = await session.scalar(
            select(AuditEntry)
            .where(AuditEntry.action == "tournament.settings")
            .order_by(AuditEntry.id.desc())
        )
        assert row is not None
        assert row.reason == "new POS"
        return row.details_dict()

    details = await desk.run(last_change)
    assert details["changed"] == ["packages"]
    assert [p["code"] for p in details["before"]["packages"]] == ["single", "R200"]


async def test_a_refused_change_leaves_settings_as_they_were(desk: Desk) -> None:
    tid = await desk.tournament()
    before = await _settings(desk, tid)
    refusals = {
        "rule 6: packages must be a non-empty": {"packages": []},
        "rule 19: prize_places": {"prize_places": 0},
        "rule 20: postpone_after": {"postpone_after_s": 0},
    }
    for message, bad in refusals.items():
        with pytest.raises(RuleViolation, match=message):
            await desk.run(svc.change_settings, tid, bad, reason="x", actor="director")
    assert await _settings(desk, tid) == before


async def test_rules_5_8_the_purchase_keeps_the_package_sold(desk: Desk) -> None:
    tid = await desk.tournament()
    player = await desk.player("8001015009087", "Ann")
    (first, *_rest) = await desk.sell(player, at(DAY, 12), package="R200")

    async def code(session: AsyncSession) -> str | None:
        return await session.scalar(
            select(EntryPurchase.package_code).where(EntryPurchase.tournament_id == tid)
        )

    assert await desk.run(code) == "R200"
    assert first > 0


def test_rule_5_a_single_seat_package_costs_the_seat_price() -> None:
    with pytest.raises(RuleViolation, match=r"rule 5: package 'single' is one seat"):
        TournamentSettings(seat_price_cents=6000)  # the default single is still R50
    settings = TournamentSettings(
        seat_price_cents=6000, packages=(Package("single", 6000, 1), Package("R200", 20000, 4))
    )
    assert settings.package("single").price_cents == 6000
    # A one-seat package that bundles casino credit (T6) may cost more.
    TournamentSettings(packages=(Package("single", 5000, 1), Package("promo", 8000, 1, 3000)))
