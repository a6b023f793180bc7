"""One valid request per team endpoint (house format H1-H12) and the scene each needs, for
the generated permission tests (:mod:`.test_permissions`).  On the seeded desk Pieter
(p2) holds an unplayed entry, so he can make a one-player team once the director allows
teams of one; Thandi (p1) has played, so her team ("Lions", for the team prize H12) is
put straight into the tables as it would stand had it registered before her heat."""

from __future__ import annotations

from typing import Any

from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.team_prizes import set_team_schedule
from gateway.tournament.services.teams import register_team, set_team_scoring
from storage.teams import Team, TeamMember
from tests.gateway.web.api import director_scenes as scene
from tests.gateway.web.api.conftest import NOW, Desk

T = "/api/v1/tournaments/{ref}"
SPRING = "/api/v1/tournaments/Spring"


async def teams_allowed(d: Desk) -> None:
    """H1: the director has set Spring up for teams of 1 to 3, summed."""
    async with svc.unit_of_work(d.sessions) as s:
        await set_team_scoring(s, "Spring", TeamScoring("sum", None, 1, 3), actor="director",
                               now=NOW, reason="house format")  # fmt: skip


async def pieter_s_team(d: Desk) -> None:
    """Teams allowed, and Pieter registered as team "Aces" (captain)."""
    await teams_allowed(d)
    async with svc.unit_of_work(d.sessions) as s:
        team = await register_team(s, "Spring", "Aces", [f"id:{d.ids['p2']}"],
                                   f"id:{d.ids['p2']}", actor="desk", now=NOW)  # fmt: skip
        d.ids["team"] = team.team_id


async def team_place_due(d: Desk) -> None:
    """H12: Thandi's team "Lions" holds team place 1 of an over qualifying, R300."""
    await teams_allowed(d)
    async with svc.unit_of_work(d.sessions) as s:
        team = Team(tournament_id=d.ids["tournament"], name="Lions", registered_by="desk",
                    registered_at=NOW)  # fmt: skip
        s.add(team)
        await s.flush()
        s.add(TeamMember(team_id=team.id, player_id=d.ids["p1"], tournament_id=team.tournament_id,
                         captain=True, added_by="desk", added_at=NOW))  # fmt: skip
    await scene.qualifying_over(d)
    async with svc.unit_of_work(d.sessions) as s:
        await set_team_schedule(s, "Spring", Stage.QUALIFYING, {1: 30000}, actor="director",
                                now=NOW)  # fmt: skip


PRIZES = f"{T}/team-prizes/{{stage}}"
SAMPLES: dict[tuple[str, str], Any] = {
    ("get", PRIZES): lambda d: (f"{SPRING}/team-prizes/qualifying", None),
    ("put", PRIZES): lambda d: (
        f"{SPRING}/team-prizes/final",
        {"prizes": [{"place": 1, "cents": 50000}]},
    ),
    ("post", f"{PRIZES}/places/{{place}}/receipt"): lambda d: (
        f"{SPRING}/team-prizes/qualifying/places/1/receipt",
        {"signer": "8001015009087", "signature": "slip 31"},
    ),
    ("put", f"{T}/team-settings"): lambda d: (
        f"{SPRING}/team-settings",
        {
            "scoring": "best-n",
            "best_n": 2,
            "min_size": 1,
            "max_size": 4,
            "advance": 2,
            "reason": "teams",
        },
    ),
    ("get", f"{T}/teams"): lambda d: (f"{SPRING}/teams", None),
    ("post", f"{T}/teams"): lambda d: (
        f"{SPRING}/teams",
        {"name": "Kings", "members": [f"id:{d.ids['p2']}"], "captain": f"id:{d.ids['p2']}"},
    ),
    ("get", f"{T}/teams/{{team}}"): lambda d: (f"{SPRING}/teams/Aces", None),
    ("post", f"{T}/teams/{{team}}/withdraw"): lambda d: (
        f"{SPRING}/teams/{d.ids['team']}/withdraw",
        None,
    ),
    ("get", f"{T}/team-standings/{{stage}}"): lambda d: (
        f"{SPRING}/team-standings/qualifying",
        None,
    ),
}
PREPARE = {
    ("put", PRIZES): teams_allowed,
    ("post", f"{PRIZES}/places/{{place}}/receipt"): team_place_due,
    ("post", f"{T}/teams"): teams_allowed,
    ("get", f"{T}/teams/{{team}}"): pieter_s_team,
    ("post", f"{T}/teams/{{team}}/withdraw"): pieter_s_team,
    ("get", f"{T}/team-standings/{{stage}}"): pieter_s_team,
}
