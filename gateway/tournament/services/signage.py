"""What the signs show of a tournament beside a heat: the stage's leaderboard with its
cuts and advertised prizes, the stage's team standings with the team cut and team
prizes (H5–H12), and the next heat of each bank (``docs/signage.md``).

All are plain JSON-ready payloads for the live feed (``tournament/<ID>/leaderboard``,
``tournament/<ID>/teams``, ``bank/<BANK>/next``); publishing them is the heats' and the
change reader's business (``gateway.heats.live_feed``, ``gateway.web.change_reader``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.tournament.rules.enums import HeatStatus, Stage
from gateway.tournament.services.amendments import amended_entries
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.services.prizes import prize_lines
from gateway.tournament.services.standings import stage_cuts, stage_over, top_standings
from gateway.tournament.services.team_prizes import team_prize_lines
from gateway.tournament.services.teams import team_scoring, team_standings
from gateway.tournament.settings import TournamentSettings
from storage.tournament import Heat, Tournament

STAGE_TITLES = {
    Stage.QUALIFYING: "Qualifying",
    Stage.SEMI_FINAL: "Semi-final",
    Stage.FINAL: "Final",
}
# Lines past the last cut, so a sign shows who is just below it.
_BELOW_CUT = 10
MAX_ROWS = 200


def cut_lines(
    settings: TournamentSettings, stage: Stage, cuts: tuple[int, ...] | None = None
) -> list[dict[str, Any]]:
    """The boundaries a leaderboard draws, each after the last place that makes it.

    ``cuts``: the standings' own cut places (qualifying: the one qualifier rule's, the
    semi-final cut widened past the top qualifier's other entries under T14a)."""
    if stage is Stage.QUALIFYING:
        direct, semis = cuts if cuts is not None else stage_cuts(settings, stage)
        top = "Top entry" if direct == 1 else f"Top {direct}"
        return [
            {"after": direct, "label": f"{top}: straight to the Final (rule 13)"},
            {"after": semis, "label": f"Qualifying cut: to place {semis}, semi-final (rule 14)"},
        ]
    if stage is Stage.SEMI_FINAL:
        n = settings.finalists_from_semis
        return [{"after": n, "label": f"Top {n}: to the Final (rule 17)"}]
    return []  # the Final: the prize column says it all


async def leaderboard(
    session: AsyncSession, tournament_ref: int | str, stage: Stage, *, now: datetime
) -> dict[str, Any]:
    """The stage's leaderboard as a sign shows it: places (ties share one and are flagged:
    rule 19, a card draw decides), the cuts, each scheduled place's prize (rule 15, the
    advertised minimum plus any apportioned surplus), and whether it is official (every
    heat of the stage run or cancelled, no tie left to draw) or still provisional."""
    tournament = await find_tournament(session, tournament_ref)
    settings = await load_settings(session, tournament)
    reach = max([c["after"] for c in cut_lines(settings, stage)] + [settings.prize_places, 10])
    limit = min(MAX_ROWS, reach + _BELOW_CUT)
    table = await top_standings(session, tournament.id, stage, limit=limit, as_of=now)
    widest = max(table.cuts, default=0) + _BELOW_CUT
    if len(table.lines) >= limit and limit < min(MAX_ROWS, widest):
        # T14a widened the cut past the top qualifier's other entries: read down to it.
        limit = min(MAX_ROWS, widest)
        table = await top_standings(session, tournament.id, stage, limit=limit, as_of=now)
    cuts = cut_lines(settings, stage, table.cuts)
    amended = await amended_entries(session, tournament.id, stage)
    prizes = await prize_lines(session, tournament.id, stage, table.lines)
    official = not table.ties_to_draw and await stage_over(session, tournament.id, stage)
    return {
        "tournament": tournament.id,
        "name": tournament.name,
        "stage": stage.value,
        "stage_title": STAGE_TITLES[stage],
        "official": official,
        "rows": [
            {
                "place": line.place,
                "entry": line.entry_id,
                "player": line.player_name,
                "credits": line.credits,
                "tie": line.tied,
                "heat": line.heat_number,
                "manual": line.manual,  # T23: keyed in or corrected by a director
                "goes_on": table.goes_on(line.entry_id),  # the one qualifier rule (T13, T14a)
                "amended": line.entry_id in amended,  # changed after the cut was sealed
            }
            for line in table.lines
        ],
        "cuts": cuts,
        "prizes": [{"place": p.place, "cents": p.total_cents} for p in prizes],
        "at": now,
    }


TEAM_ROWS = 100  # a sign's team list: more pages than any venue's teams


async def team_board(
    session: AsyncSession, tournament_ref: int | str, stage: Stage, *, now: datetime
) -> dict[str, Any] | None:
    """The stage's team standings as a sign shows them (H5–H8): each team's place
    (shared places flagged, H7), score and members; in the qualifying the team cut (H10)
    and in a later stage the teams that did not go on, unplaced; each advertised team
    place's prize (H11) and whether it is paid (H12).  None: the tournament runs no
    teams (H1)."""
    tournament = await find_tournament(session, tournament_ref)
    scoring = await team_scoring(session, tournament.id)
    if scoring is None:
        return None
    table = await team_standings(session, tournament.id, stage, as_of=now)
    prizes = await team_prize_lines(session, tournament.id, stage, table)
    names = {m.player_id: m.name for t in table.teams.values() for m in t.members}
    cuts = []
    if stage is Stage.QUALIFYING and scoring.advance is not None:
        n = scoring.advance
        label = "Top team goes on (rule H10)" if n == 1 else f"Top {n} teams go on (rule H10)"
        cuts.append({"after": n, "label": label})
    how = "sum of members" if scoring.best_n is None else f"best {scoring.best_n} of members"
    return {
        "tournament": tournament.id,
        "name": tournament.name,
        "stage": stage.value,
        "stage_title": STAGE_TITLES[stage],
        "scoring": how,
        "advance": scoring.advance,
        "official": await stage_over(session, tournament.id, stage),
        "rows": [
            {
                "place": x.place,
                "team": x.team_id,
                "name": x.name,
                "total": x.total,
                "tie": x.tied,
                "out": x.out,  # H10: did not go on, unplaced in this stage
                "goes_on": table.goes_on(x.team_id),
                "members": [names.get(p, "") for p in x.scores],
            }
            for x in table.lines[:TEAM_ROWS]
        ],
        "cuts": cuts,
        "prizes": [
            {"place": p.place, "cents": p.cents, "paid": p.paid_at is not None} for p in prizes
        ],
        "at": now,
    }


async def next_heats(
    session: AsyncSession, banks: Iterable[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each bank's next scheduled heat (the earliest not yet started), by bank name."""
    query = (
        select(Heat, Tournament.name)
        .join(Tournament, Tournament.id == Heat.tournament_id)
        .where(Heat.status == HeatStatus.SCHEDULED)
        .order_by(Heat.scheduled_start, Heat.id)
    )
    if banks is not None:
        query = query.where(Heat.bank_name.in_(list(banks)))
    out: dict[str, dict[str, Any]] = {}
    for heat, name in (await session.execute(query)).all():
        if heat.bank_name in out:
            continue
        out[heat.bank_name] = {
            "heat": str(heat.id),
            "tournament": str(heat.tournament_id),
            "name": f"{name} - heat {heat.number}",
            "stage": STAGE_TITLES.get(Stage(heat.stage), str(heat.stage)),
            "starts_at": heat.scheduled_start,
        }
    return out
