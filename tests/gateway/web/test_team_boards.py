"""Team rows on the boards (house clauses H5–H12, docs/rules.md): the change reader
publishes a tournament's team standings beside its leaderboard (``tournament/<ID>/teams``)
with the team cut and the team prizes, and republishes them when a score comes in."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.team_prizes import set_team_schedule
from gateway.tournament.services.teams import register_team, set_team_scoring
from gateway.web.change_reader import ChangeReader
from gateway.web.fanout import FanoutFeed
from storage.db import make_sessionmaker
from storage.testing import Builder
from storage.tournament import Player, Tournament

NOW = datetime(2026, 12, 6, 21, 0, tzinfo=UTC)


async def test_h6_h10_h11_team_rows_cut_and_prizes_on_the_boards(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        b = Builder(session)
        await b.make_tournament()
        tid = b.t.id
        await set_team_scoring(session, tid, TeamScoring("sum", None, 1, 2, advance=1),
                               actor="director", now=NOW, reason="teams tonight")  # fmt: skip
        players: dict[str, int] = {}
        for team in ("Aces", "Kings"):
            p = await b.player(f"{team} captain")
            await b.entries(p)
            await register_team(session, tid, team, [p.id], p.id, actor="desk", now=NOW)
            players[team] = p.id
        await set_team_schedule(session, tid, Stage.QUALIFYING, {1: 40_000}, actor="director",
                                now=NOW)  # fmt: skip
    feed = FanoutFeed()
    reader = ChangeReader(sessions, feed, engine=engine, clock=lambda: NOW)
    await reader.start()
    await reader.close()  # stepped by hand below: no timing in this test
    topic = f"tournament/{tid}/teams"
    assert topic not in feed.retained()  # nothing played, no heat: no board yet

    async with sessions.begin() as session:
        b = Builder(session, tournament=await session.get(Tournament, tid))
        for team, credits in (("Kings", 900), ("Aces", 700)):
            player = await session.get(Player, players[team])
            assert player is not None
            await b.played(player, credits)
    assert await reader.step() > 0
    board = feed.retained()[topic]
    assert (board["stage"], board["advance"], board["scoring"]) == (
        "qualifying", 1, "sum of members",
    )  # fmt: skip
    assert [(r["place"], r["name"], r["total"], r["goes_on"]) for r in board["rows"]] == [
        (1, "Kings", 900, True), (2, "Aces", 700, False),
    ]  # fmt: skip
    assert board["cuts"] == [{"after": 1, "label": "Top team goes on (rule H10)"}]
    assert board["prizes"] == [{"place": 1, "cents": 40_000, "paid": False}]
    assert board["rows"][0]["members"] == ["Kings captain"]
