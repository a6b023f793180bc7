"""The team cut and team prizes (docs/rules.md#h10 to #h12): the top N teams of the
qualifying go on and a later stage places only them; a stored team prize schedule;
a team place paid to its captain once the stage is over, once, in the cash-up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.records.cashup import cashup_body
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import (
    TeamFacts,
    TeamScoring,
    advancing,
    rank_stage,
    rank_teams,
)
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.team_prizes import (
    pay_team_prize,
    set_team_schedule,
    team_prize_lines,
)
from gateway.tournament.services.teams import (
    register_team,
    set_team_scoring,
    standings_facts,
    team_standings,
)
from storage.audit import AuditEntry
from storage.db import make_sessionmaker
from storage.testing import T0, Builder
from storage.tournament import HeatStatus, Player


@pytest.fixture
async def session(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    async with make_sessionmaker(engine)() as s:
        yield s
        await s.rollback()


@pytest.fixture
async def b(session: AsyncSession) -> Builder:
    builder = Builder(session)
    await builder.make_tournament()
    return builder


async def _teams(b: Builder, advance: int | None) -> dict[str, list[Player]]:
    """Three teams of two; qualifying: Aces 1100, Kings 900, Jacks 500."""
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 2, advance),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    out: dict[str, list[Player]] = {}
    for name, scores in (("Aces", (600, 500)), ("Kings", (450, 450)), ("Jacks", (300, 200))):
        members = [await b.player(f"{name} {i}") for i in (1, 2)]
        for p in members:
            await b.entries(p)
        await register_team(b.session, b.t.id, name, [p.id for p in members], members[0].id,
                            actor="desk:lebo", now=T0)  # fmt: skip
        for p, credits in zip(members, scores, strict=True):
            await b.played(p, credits)
        out[name] = members
    return out


def test_h10_a_shared_place_at_the_line_goes_on_whole() -> None:
    scoring = TeamScoring("sum", None, 1, 2, advance=1)
    facts = [TeamFacts(1, "Aces", (1,)), TeamFacts(2, "Kings", (2,)), TeamFacts(3, "Jacks", (3,))]
    lines = rank_teams(facts, {1: 500, 2: 500, 3: 100}, scoring)
    assert advancing(lines, scoring.advance) == frozenset({1, 2})  # tied at 1st: both go on
    assert advancing(lines, None) is None  # no cut
    later = rank_stage(facts, {3: 900, 1: 10}, scoring, frozenset({1, 2}))
    assert [(x.name, x.place, x.out) for x in later] == [
        ("Aces", 1, False), ("Kings", None, False), ("Jacks", None, True),
    ]  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H10: advance: 1 to 500 teams, got 0"):
        TeamScoring(advance=0)


async def test_h10_top_n_teams_go_on_and_a_later_stage_places_only_them(b: Builder) -> None:
    teams = await _teams(b, advance=2)
    table = await team_standings(b.session, b.t.id, Stage.QUALIFYING)
    assert [(x.name, x.place, table.goes_on(x.team_id)) for x in table.lines] == [
        ("Aces", 1, True), ("Kings", 2, True), ("Jacks", 3, False),
    ]  # fmt: skip
    for name, credits in (("Jacks", 2000), ("Kings", 800), ("Aces", 100)):
        await b.played(teams[name][0], credits, stage=Stage.SEMI_FINAL)
    semi = await team_standings(b.session, b.t.id, Stage.SEMI_FINAL)
    assert [(x.name, x.place, x.total, x.out) for x in semi.lines] == [
        ("Kings", 1, 800, False),
        ("Aces", 2, 100, False),
        ("Jacks", None, 0, True),
    ]  # fmt: skip; Jacks' 2000 does not place a team that did not go on (H10)
    facts = standings_facts(semi)
    assert facts["advance"] == 2
    assert [(x["name"], x["goes_on"], x["out"]) for x in facts["lines"]] == [
        ("Kings", True, False), ("Aces", True, False), ("Jacks", False, True),
    ]  # fmt: skip
    (row,) = await b.session.scalars(select(AuditEntry).where(AuditEntry.action == "team.settings"))
    assert json.loads(row.details)["advance"] == 2


async def test_h11_schedule_only_rises_and_is_fixed_once_a_place_is_paid(b: Builder) -> None:
    await _teams(b, advance=None)
    s, tid = b.session, b.t.id
    first = {1: 30_000, 2: 10_000}
    assert await set_team_schedule(s, tid, Stage.QUALIFYING, first, actor="director:sipho",
                                   now=T0) == first  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H11: place 1 was advertised at 30000 c"):
        await set_team_schedule(s, tid, Stage.QUALIFYING, {1: 20_000, 2: 10_000},
                                actor="director:sipho", now=T0, reason="less")  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H11: place 1: the advertised prize must"):
        await set_team_schedule(s, tid, Stage.FINAL, {1: 0}, actor="director:sipho", now=T0)
    await set_team_schedule(s, tid, Stage.QUALIFYING, {1: 30_000, 2: 10_000, 3: 5_000},
                            actor="director:sipho", now=T0, reason="a third place")  # fmt: skip
    lines = await team_prize_lines(s, tid, Stage.QUALIFYING)
    assert [(x.place, x.cents, x.team_name) for x in lines] == [
        (1, 30_000, "Aces"), (2, 10_000, "Kings"), (3, 5_000, "Jacks"),
    ]  # fmt: skip


async def test_h12_a_team_place_is_paid_to_its_captain_once_the_stage_is_over(
    b: Builder,
) -> None:
    teams = await _teams(b, advance=None)
    s, tid = b.session, b.t.id
    await set_team_schedule(s, tid, Stage.QUALIFYING, {1: 30_000}, actor="director:sipho",
                            now=T0)  # fmt: skip
    captain, member = teams["Aces"]
    pay = {"signature": "slip 4", "witness": "Floor Lee", "actor": "cashier:thandi"}
    later = T0 + timedelta(hours=3)
    with pytest.raises(RuleViolation, match=r"^rule H12: the qualifying is not over"):
        await pay_team_prize(s, tid, Stage.QUALIFYING, 1, signer=captain.id_number, now=later,
                             **pay)  # fmt: skip
    (await b.heat()).status = HeatStatus.CLOSED
    await s.flush()
    with pytest.raises(RuleViolation, match=r"^rule H12: prizes are not transferable"):
        await pay_team_prize(s, tid, Stage.QUALIFYING, 1, signer=member.id_number, now=later,
                             **pay)  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H11: team place 2 of the qualifying has no"):
        await pay_team_prize(s, tid, Stage.QUALIFYING, 2, signer=captain.id_number, now=later,
                             **pay)  # fmt: skip
    paid = await pay_team_prize(s, tid, Stage.QUALIFYING, 1, signer=captain.id_number,
                                now=later, **pay)  # fmt: skip
    assert (paid.player_id, paid.amount_cents, paid.paid_by) == (captain.id, 30_000,
                                                                 "cashier:thandi")  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H12: team place 1 was paid at"):
        await pay_team_prize(s, tid, Stage.QUALIFYING, 1, signer=captain.id_number, now=later,
                             **pay)  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H11: qualifying team prizes are being paid"):
        await set_team_schedule(s, tid, Stage.QUALIFYING, {1: 40_000}, actor="director:sipho",
                                now=later, reason="more")  # fmt: skip
    (row,) = await s.scalars(select(AuditEntry).where(AuditEntry.action == "team.prizes.paid"))
    assert json.loads(row.details)["amount_cents"] == 30_000
    day = await cashup_body(s, later.date(), zone=ZoneInfo("UTC"))
    by = {x["cashier"]: x for x in day["by_cashier"]}
    assert by["cashier:thandi"]["team_prizes_paid"] == {"prizes": 1, "amount_cents": 30_000}
    assert not [m for m in day["reconciliation"]["mismatches"] if "team" in m]
    assert day["liability_carried_forward"]["team_prizes_unpaid"] == []


async def test_h7_h12_a_shared_team_place_is_not_paid_here(b: Builder) -> None:
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 1, 2),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    for name in ("Aces", "Kings"):
        p = await b.player(name)
        await b.entries(p)
        await register_team(b.session, b.t.id, name, [p.id], p.id, actor="desk:lebo", now=T0)
        await b.played(p, 700)
    (await b.heat()).status = HeatStatus.CLOSED
    await set_team_schedule(b.session, b.t.id, Stage.QUALIFYING, {1: 100},
                            actor="director:sipho", now=T0)  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H7: team place 1 is shared by \['Aces', 'K"):
        await pay_team_prize(b.session, b.t.id, Stage.QUALIFYING, 1, signer="x", signature="s",
                             witness="w", actor="cashier", now=T0 + timedelta(hours=3))  # fmt: skip
