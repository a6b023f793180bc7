"""Request and response bodies of the director's desk: a heat's day (T10, T16, T20–T23),
the tournament's decisions and draws (T14, T19, T23), and its prizes (T15).  Bounded
like :mod:`.models`, so no input reaches a column it does not fit."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from gateway.web.api.models import (
    BIG,
    INT32,
    REF_PATTERN,
    Body,
    Day,
    Finding,
    HeatOut,
    IdNumber,
    Label,
    Name,
    PlayerRef,
    Reason,
    SeatRow,
    Stage,
    Time,
)
from gateway.web.api.technician_models import MachineName

SeatNumber = Annotated[int, Field(ge=1, le=10_000)]
Place = Annotated[int, Field(ge=1, le=10_000)]
Cents = Annotated[int, Field(ge=0, le=BIG)]
Credits = Annotated[int, Field(ge=0, le=INT32)]
# A recorded seed (T19, T14, T21): hex, 16 to 64 bytes.
Seed = Annotated[str, Field(pattern=r"^[0-9A-Fa-f]{32,128}$")]
Ref = Annotated[str, Field(pattern=REF_PATTERN)]
FinalStage = Literal["semi-final", "final"]


def _once(places: list[PlaceCents]) -> list[PlaceCents]:
    seen = [p.place for p in places]
    if len(set(seen)) != len(seen):
        raise ValueError("each place once")
    return places


def _each_entry_once(cards: list[CardIn]) -> list[CardIn]:
    seen = [c.entry for c in cards]
    if len(set(seen)) != len(seen):
        raise ValueError("one card per entry: an entry is given twice")
    return cards


# -- heats -------------------------------------------------------------------------------


class HeatShowOut(BaseModel):
    heat: HeatOut
    seats: list[SeatRow]


class RescheduleIn(Body):
    starts_at: Time
    announced_via: Name  # MC, POS, marketing ...
    announced_at: Time | None = None  # default: now
    reason: Reason


class CancelIn(Body):
    announced_via: Name
    reason: Reason


class CancelOut(BaseModel):
    heat: int
    status: str
    entries_released: list[int]


class ReasonIn(Body):
    reason: Reason


class HeatStateOut(BaseModel):
    heat: int
    status: str
    restarts: int | None = None
    ended_at: datetime | None = None


class RestartIn(Body):
    failed_at: Time  # when the difficulties began (T20: the reasonable period runs from it)
    reason: Reason


class MarkIn(Body):
    """The floor attendant's marks before the start (T22)."""

    seats: Annotated[list[SeatNumber], Field(min_length=1, max_length=1000)]
    present: bool


class RollCallSeatOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    seat_id: int
    seat_number: int
    machine_id: str
    played_by: str
    status: str
    mark: bool | None
    marked_at: datetime | None
    marked_by: str | None
    counts_present: bool


class RollCallOut(BaseModel):
    heat: int
    label: str
    status: str
    roll_call_taken: bool
    unmarked_at_start: str
    present: list[int]
    forfeit_at_start: list[int]
    seats: list[RollCallSeatOut]


class BeginIn(Body):
    # The seat numbers present; none given: the roll call and the setting decide (T22).
    present: Annotated[list[SeatNumber], Field(max_length=1000)] | None = None


class BeginOut(BaseModel):
    heat: int
    present: list[int]
    forfeited: list[int]


class SeatStateOut(BaseModel):
    seat: int
    status: str


class MalfunctionIn(Body):
    reason: Reason
    negligence: bool = False  # the player caused it: disqualified, buy-in forfeited (T20)


class MalfunctionOut(BaseModel):
    outcome: str
    new_seat_id: int | None
    new_heat_id: int | None
    new_seat_number: int | None
    refund_cents: int | None


class ProxyIn(Body):
    name: Name
    id_number: IdNumber
    date_of_birth: Day
    received_at: Time | None = None  # when the signed form arrived (default: now)


class ProxyOut(BaseModel):
    proxy: int
    seat: int
    nominee: str


class SeedIn(Body):
    seed: Seed | None = None  # default: a fresh random one


class AddedHeatDrawOut(BaseModel):
    seed: str
    seats: dict[int, int]  # entry id -> seat number


# -- the tournament ----------------------------------------------------------------------


class DecisionIn(Body):
    about: Label  # what it concerns: a player, a heat, a seat ...
    decision: Finding
    reason: Reason


class DecisionOut(BaseModel):
    recorded: bool
    about: str
    decision: str


class CardIn(Body):
    entry: Annotated[int, Field(ge=1, le=INT32)]
    card: Annotated[str, Field(min_length=2, max_length=5)]  # e.g. QH, 10S, ac
    drawn_by: Literal["player", "public", "nominee"] = "player"
    drawer_name: Name | None = None  # the nominee or the member of the public (T19)


class CardsIn(Body):
    stage: Stage
    credits: Credits  # the tied score
    cards: Annotated[
        list[CardIn], Field(min_length=1, max_length=200), AfterValidator(_each_entry_once)
    ]


class DigitalIn(Body):
    stage: Stage
    credits: Credits
    seed: Seed | None = None


class DrawRoundOut(BaseModel):
    round: int
    cards: dict[int, str]  # entry id -> card


class TieOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    place: int
    credits: int
    entry_ids: list[int]
    next_round: int


class DrawOut(BaseModel):
    seed: str | None = None  # a digital deal's recorded seed
    rounds: list[DrawRoundOut]
    still_tied: list[TieOut]


class VerifyOut(BaseModel):
    ok: bool
    problems: list[str]


class SeatDrawIn(Body):
    stage: FinalStage
    seed: Seed | None = None


class DrawnSeatOut(BaseModel):
    heat: int
    seat: int


class SeatDrawOut(BaseModel):
    seed: str
    seats: dict[int, DrawnSeatOut]  # entry id -> heat and seat


class ExpireOut(BaseModel):
    expired: list[int]


# -- prizes (T15) ------------------------------------------------------------------------


class PlaceCents(Body):
    place: Place
    cents: Cents


Places = Annotated[list[PlaceCents], Field(max_length=1000), AfterValidator(_once)]


class ScheduleIn(Body):
    minimums: Annotated[Places, Field(min_length=1)]  # the advertised minimum per place
    reason: Reason | None = None  # needed to change an advertised schedule


class ApportionIn(Body):
    surplus_cents: Cents
    shares: Places = Field(default_factory=list)
    reason: Reason


class WeightsIn(Body):
    """The surplus split by weights over places 1.. (odd cents by largest remainder)."""

    surplus_cents: Cents
    weights: Annotated[list[Annotated[int, Field(ge=0, le=1_000_000)]], Field(min_length=1)]
    reason: Reason


class PrizeLineOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    place: int
    minimum_cents: int
    surplus_cents: int
    total_cents: int
    entry_id: int | None
    player_name: str | None
    paid: bool
    paid_cents: int | None
    paid_at: datetime | None
    signer: str | None  # the winner's ID or card number, by its last 4 (any role reads this)
    witness: str | None

    @field_validator("signer")
    @classmethod
    def _last_four(cls, number: str | None) -> str | None:
        return f"…{number[-4:]}" if number and len(number) > 4 else number


class PrizesOut(BaseModel):
    stage: str
    prizes: list[PrizeLineOut]


class PayIn(Body):
    signer: PlayerRef  # the winner, as they name themselves (T15: not transferable)
    signature: Annotated[str, Field(min_length=1, max_length=128)]  # receipt reference


class MachinePayIn(PayIn):
    """A payout the winner signs for; with ``machine``, paid as promotional credits to
    that machine by SAS AFT instead of cash (house clauses P1–P6, docs/rules.md#p2)."""

    machine: MachineName | None = None


class PrizePay(MachinePayIn):
    tournament: Ref
    stage: Stage
    place: Place
    witness: Name | None = None  # the approving account (T15)


class PayoutOut(BaseModel):
    place: int
    entry_id: int
    amount_cents: int
    signer: str
    witness: str
    paid_at: datetime
