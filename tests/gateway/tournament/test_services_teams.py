"""Teams over storage (docs/rules.md#h1 to #h9): registration at the desk, the director's
team settings, team standings from the individual standings, and the audit of each."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services import disqualify
from gateway.tournament.services.teams import (
    list_teams,
    register_team,
    set_team_scoring,
    show_team,
    team_standings,
    withdraw_team,
)
from storage.audit import AuditEntry
from storage.db import make_sessionmaker
from storage.teams import Team, TeamMember
from storage.testing import T0, Builder
from storage.tournament import HeatStatus, Player, SeatStatus


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


async def holders(b: Builder, *names: str) -> list[Player]:
    out = []
    for name in names:
        p = await b.player(name)
        await b.entries(p)
        out.append(p)
    return out


async def audit_rows(session: AsyncSession, action: str) -> list[AuditEntry]:
    rows = await session.scalars(select(AuditEntry).where(AuditEntry.action == action))
    return list(rows)


async def test_h1_teams_need_the_director_s_settings_first(b: Builder) -> None:
    ann, ben = await holders(b, "Ann", "Ben")
    with pytest.raises(RuleViolation, match=r"^rule H1: teams: the director has not set"):
        await register_team(b.session, b.t.id, "Aces", [ann.id, ben.id], ann.id,
                            actor="desk:lebo", now=T0)  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule 23: a reason is required"):
        await set_team_scoring(b.session, b.t.id, TeamScoring(), actor="director:sipho",
                               now=T0, reason=" ")  # fmt: skip
    await set_team_scoring(b.session, b.t.id, TeamScoring("best-n", 2, 2, 3),
                           actor="director:sipho", now=T0, reason="house format")  # fmt: skip
    (row,) = await audit_rows(b.session, "team.settings")
    assert (row.actor, row.reason) == ("director:sipho", "house format")
    assert json.loads(row.details)["best_n"] == 2


async def test_h2_h3_register_audit_list_and_one_team_per_player(b: Builder) -> None:
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 3),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    ann, ben, cas, dee = await holders(b, "Ann", "Ben", "Cas", "Dee")
    nobody = await b.player("No entry")
    team = await register_team(b.session, b.t.id, " Aces ", [ann.id, f"id:{ben.id}"],
                               f"id:{ben.id}", actor="desk:lebo", now=T0)  # fmt: skip
    assert (team.name, team.captain.name) == ("Aces", "Ben")
    assert [m.name for m in team.members] == ["Ben", "Ann"]  # the captain first
    (row,) = await audit_rows(b.session, "team.register")
    assert (row.actor, row.subject) == ("desk:lebo", f"team:{team.team_id}")
    assert json.loads(row.details)["members"] == [ann.id, ben.id]
    refusals = [
        (("Kings", [ann.id, cas.id], cas.id), "H2"),  # Ann is in Aces already
        (("Kings", [cas.id, nobody.id], cas.id), "H2"),  # no entry in the tournament
        (("Aces", [cas.id, dee.id], cas.id), "H1"),  # the name is taken
        (("Kings", [cas.id, dee.id], ann.id), "H3"),  # captain outside the team
        (("Kings", [cas.id], cas.id), "H4"),  # too small
        (("", [cas.id, dee.id], cas.id), "H1"),  # no name
    ]
    for (name, members, captain), clause in refusals:
        with pytest.raises(RuleViolation, match=f"^rule {clause}:"):
            await register_team(b.session, b.t.id, name, members, captain,
                                actor="desk:lebo", now=T0)  # fmt: skip
    assert [t.name for t in await list_teams(b.session, b.t.id)] == ["Aces"]
    assert (await show_team(b.session, b.t.id, "Aces")).team_id == team.team_id
    assert len(await audit_rows(b.session, "team.register")) == 1


async def test_h5_h6_h8_team_standings_from_the_individual_standings(b: Builder) -> None:
    """H5: a member counts with their best single entry; H6: sum or best-n; H8: a
    disqualified member's score drops out of the team as out of the standings."""
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 3),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    ann, ben, cas, dee, eve = await holders(b, "Ann", "Ben", "Cas", "Dee", "Eve")
    await register_team(b.session, b.t.id, "Aces", [ann.id, ben.id, eve.id], ann.id,
                        actor="desk:lebo", now=T0)  # fmt: skip
    await register_team(b.session, b.t.id, "Kings", [cas.id, dee.id], cas.id,
                        actor="desk:lebo", now=T0)  # fmt: skip
    await b.played(ann, 300)
    await b.played(ann, 700, heat_no=2)  # Ann's best single entry: 700 (H5)
    await b.played(ben, 200)
    await b.played(cas, 600)
    await b.played(dee, 500)  # Eve has not played: she counts nothing
    table = await team_standings(b.session, b.t.id, Stage.QUALIFYING)
    assert [(x.name, x.place, x.total) for x in table.lines] == [
        ("Kings", 1, 1100), ("Aces", 2, 900),
    ]  # fmt: skip
    aces = table.lines[1]
    assert aces.scores == {ann.id: 700, ben.id: 200, eve.id: None}
    await disqualify(b.session, b.t.id, f"id:{cas.id}", rule=20, reason="negligence",
                     actor="director:sipho", now=T0)  # fmt: skip
    after = await team_standings(b.session, b.t.id, Stage.QUALIFYING)
    assert [(x.name, x.place, x.total) for x in after.lines] == [
        ("Aces", 1, 900), ("Kings", 2, 500),
    ]  # fmt: skip
    assert after.lines[1].scores[cas.id] is None


async def test_h9_a_team_is_fixed_once_a_member_has_played(b: Builder) -> None:
    """H9: settings, withdrawal and a player who has played joining are refused once
    scores exist; before play the desk may withdraw a team (audited)."""
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 3),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    ann, ben, cas, dee = await holders(b, "Ann", "Ben", "Cas", "Dee")
    first = await register_team(b.session, b.t.id, "Aces", [ann.id, ben.id], ann.id,
                                actor="desk:lebo", now=T0)  # fmt: skip
    await withdraw_team(b.session, b.t.id, "Aces", actor="desk:lebo")
    assert await list_teams(b.session, b.t.id) == []
    (row,) = await audit_rows(b.session, "team.withdraw")
    assert json.loads(row.details)["members"] == [ann.id, ben.id]
    assert first.team_id not in {t.id for t in await b.session.scalars(select(Team))}
    await register_team(b.session, b.t.id, "Aces", [ann.id, ben.id], ann.id,
                        actor="desk:lebo", now=T0)  # fmt: skip
    await b.played(ann, 400)
    await b.played(cas, 100)
    with pytest.raises(RuleViolation, match=r"^rule H9: withdraw: player"):
        await withdraw_team(b.session, b.t.id, "Aces", actor="desk:lebo")
    with pytest.raises(RuleViolation, match=r"^rule H9: team settings:"):
        await set_team_scoring(b.session, b.t.id, TeamScoring("best-n", 1, 2, 3),
                               actor="director:sipho", now=T0, reason="change")  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H9: members: player"):
        await register_team(b.session, b.t.id, "Kings", [cas.id, dee.id], dee.id,
                            actor="desk:lebo", now=T0)  # fmt: skip
    members = await b.session.scalars(select(TeamMember.player_id))
    assert sorted(members) == sorted([ann.id, ben.id])


async def test_h4_h8_h9_sizes_a_disqualified_player_and_a_seat_in_a_started_heat(
    b: Builder,
) -> None:
    """H4: sizes may not shrink under a registered team; H8: a disqualified player does
    not join; H9: a player present in a heat that has started has played, scored or not."""
    await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 3),
                           actor="director:sipho", now=T0, reason="teams tonight")  # fmt: skip
    ann, ben, cas, dee, eve, fay = await holders(b, "Ann", "Ben", "Cas", "Dee", "Eve", "Fay")
    await register_team(b.session, b.t.id, "Aces", [ann.id, ben.id, cas.id], ann.id,
                        actor="desk:lebo", now=T0)  # fmt: skip
    with pytest.raises(RuleViolation, match=r"^rule H4: team size: a registered team"):
        await set_team_scoring(b.session, b.t.id, TeamScoring("sum", None, 2, 2),
                               actor="director:sipho", now=T0, reason="smaller")  # fmt: skip
    await disqualify(b.session, b.t.id, f"id:{dee.id}", rule=20, reason="negligence",
                     actor="director:sipho", now=T0, forfeit_entries=False)  # fmt: skip
    with pytest.raises(RuleViolation, match=rf"^rule H8: members: player {dee.id} is disq"):
        await register_team(b.session, b.t.id, "Kings", [dee.id, eve.id], eve.id,
                            actor="desk:lebo", now=T0)  # fmt: skip
    (entry,) = await b.entries(eve)
    seat = await b.seat(entry, await b.heat(number=3))
    seat.status = SeatStatus.PRESENT
    heat = await b.heat(number=3)
    heat.status = HeatStatus.RUNNING  # under way, no score yet
    await b.session.flush()
    with pytest.raises(RuleViolation, match=rf"^rule H9: members: player {eve.id} has"):
        await register_team(b.session, b.t.id, "Kings", [fay.id, eve.id], fay.id,
                            actor="desk:lebo", now=T0)  # fmt: skip
