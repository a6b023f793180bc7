"""Request and response bodies of the cash desk and Guest Relations (players, exclusion
registers, disqualifications, entries), bounded to their columns (:mod:`storage.tournament`)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, Field

from gateway.web.api.models import Body, Id, Label, Note, PlayerRef, Reason, Zone

Cell = Annotated[str, Field(max_length=40, pattern=r"^[^\x00-\x1f\x7f]*$")]


def _known_zone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a time zone (e.g. Africa/Johannesburg)") from None
    return name


class PlayerRow(BaseModel):
    id: int
    id_number: str
    name: str
    date_of_birth: date
    card: str | None


class ExclusionRowIn(Body):
    """One row of an exclusion register, its cells as the file has them (T2, T3):
    dates YYYY-MM-DD (venue-local days; ``valid_until`` the last excluded day) or
    date-times with an offset; an empty ``valid_until`` is indefinite."""

    kind: Cell  # self-exclusion, refusal-of-entry, excluded-category, staff, connected-person
    id_number: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[^\x00-\x1f\x7f]+$")]
    name: Annotated[str, Field(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")] = ""
    valid_from: Cell
    valid_until: Cell = ""
    note: Note = ""


class ExclusionImportIn(Body):
    source: Label  # where the register came from (audit log, each row)
    zone: Annotated[Zone, AfterValidator(_known_zone)] = "Africa/Johannesburg"
    rows: Annotated[list[ExclusionRowIn], Field(min_length=1, max_length=20_000)]


class Disqualified(BaseModel):
    tournament: int
    player: int


class ExclusionImportOut(BaseModel):
    added: int
    disqualified: list[Disqualified]  # players the register bars now, per tournament


class DisqualifyIn(Body):
    player: PlayerRef
    rule: Literal[1, 2, 3, 12, 20, 23]
    reason: Reason
    entry: Id | None = None  # only this entry


class DisqualificationOut(BaseModel):
    disqualification: int
    player: int
    rule: int


class EntryOut(BaseModel):
    entry: int
    player: int
    player_name: str
    status: str
    kind: str
    package: str | None
    purchase: int
    purchased_at: datetime
    valid_until: datetime
