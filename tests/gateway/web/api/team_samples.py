"""One valid request per team endpoint (house format H1-H9) and the scene each needs, for
the generated permission tests (:mod:`.test_permissions`).  On the seeded desk Pieter
(p2) holds an unplayed entry, so he can make a one-player team once the director allows
teams of one."""

from __future__ import annotations

from typing import Any

from gateway.tournament import services as svc
from gateway.tournament.rules.teams import TeamScoring
from gateway.tournament.services.teams import register_team, set_team_scoring
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


SAMPLES: dict[tuple[str, str], Any] = {
    ("put", f"{T}/team-settings"): lambda d: (
        f"{SPRING}/team-settings",
        {"scoring": "best-n", "best_n": 2, "min_size": 1, "max_size": 4, "reason": "teams"},
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
    ("post", f"{T}/teams"): teams_allowed,
    ("get", f"{T}/teams/{{team}}"): pieter_s_team,
    ("post", f"{T}/teams/{{team}}/withdraw"): pieter_s_team,
    ("get", f"{T}/team-standings/{{stage}}"): pieter_s_team,
}
