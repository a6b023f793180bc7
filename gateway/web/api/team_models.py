"""Bodies and answers of the team endpoints (house format H1-H12, docs/rules.md#h1)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from gateway.tournament.rules.teams import MAX_ADVANCE, MAX_TEAM_SIZE
from gateway.tournament.services.teams import TeamStandings, TeamView
from gateway.web.api.director_models import PayIn, Place, Places, Ref
from gateway.web.api.models import Body, Name, PlayerRef, Reason, Stage

TeamName = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[^\x00-\x1f\x7f]+$")]
Size = Annotated[int, Field(ge=1, le=MAX_TEAM_SIZE)]


class TeamSettingsIn(Body):
    scoring: Literal["sum", "best-n"] = "sum"
    best_n: Size | None = None
    min_size: Size = 2
    max_size: Size = 4
    advance: Annotated[int, Field(ge=1, le=MAX_ADVANCE)] | None = None  # H10: the team cut
    reason: Reason


class TeamSettingsOut(BaseModel):
    scoring: str
    best_n: int | None
    min_size: int
    max_size: int
    advance: int | None


class TeamIn(Body):
    name: TeamName
    members: Annotated[list[PlayerRef], Field(min_length=1, max_length=MAX_TEAM_SIZE)]
    captain: PlayerRef


class MemberOut(BaseModel):
    player_id: int
    name: str
    captain: bool


class TeamOut(BaseModel):
    team_id: int
    name: str
    captain: int
    members: list[MemberOut]
    registered_by: str
    registered_at: datetime

    @classmethod
    def of(cls, team: TeamView) -> TeamOut:
        return cls(
            team_id=team.team_id,
            name=team.name,
            captain=team.captain.player_id,
            members=[MemberOut(player_id=m.player_id, name=m.name, captain=m.captain)
                     for m in team.members],
            registered_by=team.registered_by,
            registered_at=team.registered_at,
        )  # fmt: skip


class TeamsOut(BaseModel):
    teams: list[TeamOut]


class MemberScoreOut(BaseModel):
    player_id: int
    name: str
    score: int | None  # None: no score in the stage, or left out (H5, H8)
    counts: bool  # among the scores that make the team's (H6)


class TeamLineOut(BaseModel):
    place: int | None  # None: no member has a score yet, or out (H10)
    team_id: int
    name: str
    total: int
    tied: bool  # shares its place after countback (H7)
    goes_on: bool | None  # H10: through the qualifying team cut (None: no cut)
    out: bool  # H10: a later stage's team that did not go on, unplaced
    members: list[MemberScoreOut]


class TeamStandingsOut(BaseModel):
    stage: str
    scoring: str
    best_n: int | None
    advance: int | None  # H10
    lines: list[TeamLineOut]

    @classmethod
    def of(cls, table: TeamStandings) -> TeamStandingsOut:
        names = {m.player_id: m.name for t in table.teams.values() for m in t.members}
        return cls(
            stage=table.stage.value,
            scoring=table.scoring.scoring,
            best_n=table.scoring.best_n,
            advance=table.scoring.advance,
            lines=[
                TeamLineOut(
                    place=x.place, team_id=x.team_id, name=x.name, total=x.total, tied=x.tied,
                    goes_on=table.goes_on(x.team_id), out=x.out,
                    members=[
                        MemberScoreOut(player_id=p, name=names.get(p, ""), score=s,
                                       counts=p in dict(x.counted))
                        for p, s in x.scores.items()
                    ],
                )
                for x in table.lines
            ],
        )  # fmt: skip


class TeamPrizeLineOut(BaseModel):
    """H11, H12: an advertised team place, who holds it now, and its payout."""

    model_config = {"from_attributes": True}

    place: int
    cents: int
    team_id: int | None  # None: nobody yet, or a shared place (H7)
    team_name: str | None
    paid_cents: int | None
    paid_at: datetime | None
    paid_by: str | None
    signer: str | None
    witness: str | None


class TeamPrizesOut(BaseModel):
    stage: str
    prizes: list[TeamPrizeLineOut]


class TeamScheduleIn(Body):
    prizes: Annotated[Places, Field(min_length=1)]  # H11: the prize per team place
    reason: Reason | None = None  # needed to change an advertised schedule


class TeamPrizePay(PayIn):
    """H12: a team place's payout, replayed when the second account approves."""

    tournament: Ref
    stage: Stage
    place: Place
    witness: Name | None = None  # the approving account
