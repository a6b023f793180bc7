"""Request and response bodies: every string, number and time bounded, so no input can
reach a database column it does not fit (no 500 for any input)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

INT32 = 2**31 - 1
BIG = 2**62  # money and meters: BIGINT columns


def _printable(text: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError("no control characters")
    return text


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text.strip()


def _sane_time(moment: datetime) -> datetime:
    if not 2000 <= moment.year <= 2200:
        raise ValueError("year must be between 2000 and 2200")
    return moment


def _sane_date(day: date) -> date:
    if not 1900 <= day.year <= 2200:
        raise ValueError("year must be between 1900 and 2200")
    return day


_Plain = AfterValidator(_printable)
Name = Annotated[str, Field(min_length=1, max_length=100), _Plain]
Reason = Annotated[str, Field(min_length=1, max_length=2000), _Plain]
# What a person found or decided, kept in the audit log: never only spaces.
Finding = Annotated[str, Field(min_length=1, max_length=2000), _Plain, AfterValidator(_not_blank)]
Note = Annotated[str, Field(min_length=0, max_length=2000), _Plain]
Code = Annotated[str, Field(min_length=1, max_length=32), _Plain]
IdNumber = Annotated[str, Field(min_length=1, max_length=20), _Plain]
Zone = Annotated[str, Field(min_length=1, max_length=64), _Plain]
Label = Annotated[str, Field(min_length=1, max_length=200), _Plain]
Password = Annotated[str, Field(min_length=1, max_length=1024)]
Time = Annotated[AwareDatetime, AfterValidator(_sane_time)]
Day = Annotated[date, AfterValidator(_sane_date)]
Id = Annotated[int, Field(ge=1, le=INT32)]
Count = Annotated[int, Field(ge=0, le=BIG)]
Stage = Literal["qualifying", "semi-final", "final"]
REF_PATTERN = r"^[^\x00-\x1f\x7f]{1,100}$"
# A player is named by a typed reference (gateway.tournament.rules.player_ref); a bare
# value is a card or ID number, never a player number, and refused if it is both.
PLAYER_REF_PATTERN = (
    r"^(?:id:[0-9]{1,18}|(?:card|idnum):[^\x00-\x1f\x7f]{1,94}|[^\x00-\x1f\x7f:]{1,100})$"
)
PLAYER_REF_DOC = (
    "The player: `id:N` (player number), `card:N` (Rewards card number) or `idnum:N` "
    "(national ID or passport number).  A bare value is looked up as a card number and "
    "as an ID number, never as a player number, and refused when it names two players."
)
PLAYER_REF_EXAMPLES = ["id:12", "card:4000123", "idnum:8001015009087"]
PlayerRef = Annotated[
    str,
    Field(pattern=PLAYER_REF_PATTERN, description=PLAYER_REF_DOC, examples=PLAYER_REF_EXAMPLES),
]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Login(Body):
    name: Name
    password: Password


class Me(BaseModel):
    id: int
    name: str
    role: str
    csrf_token: str | None = None


class PackageIn(Body):
    code: Code
    price_cents: Annotated[int, Field(ge=0, le=BIG)]
    seats: Annotated[int, Field(ge=1, le=1000)]
    casino_credit_cents: Annotated[int, Field(ge=0, le=BIG)] = 0


class Settings(Body):
    """Tournament settings (the names of ``reelgate tournament set``); each optional."""

    venue_zone: Zone | None = None
    seat_price_cents: Annotated[int, Field(ge=0, le=BIG)] | None = None
    packages: Annotated[list[PackageIn], Field(min_length=1, max_length=50)] | None = None
    validity: Literal["same-day", "48h"] | None = None
    minimum_age: Annotated[int, Field(ge=0, le=150)] | None = None
    direct_final_places: Annotated[int, Field(ge=0, le=10_000)] | None = None
    semi_final_qualifiers: Annotated[int, Field(ge=0, le=10_000)] | None = None
    finalists_from_semis: Annotated[int, Field(ge=0, le=10_000)] | None = None
    prize_places: Annotated[int, Field(ge=0, le=10_000)] | None = None
    postpone_after_s: Annotated[int, Field(ge=0, le=INT32)] | None = None
    reschedule_notice_s: Annotated[int, Field(ge=0, le=INT32)] | None = None
    unmarked_at_start: Code | None = None
    top_player_excluded: bool | None = None  # T14a: `tournament set` takes it too
    # F1–F3: how a heat ends per machine (the service refuses a bad one naming its clause)
    format: Code | None = None
    games_per_seat: Annotated[int, Field(ge=0, le=INT32)] | None = None
    minimum_bet: Annotated[int, Field(ge=0, le=INT32)] | None = None

    def changes(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class TournamentIn(Body):
    name: Name
    settings: Settings = Settings()
    qualifying_starts_at: Time | None = None
    qualifying_ends_at: Time | None = None


class TournamentOut(BaseModel):
    id: int
    name: str
    settings: dict[str, Any]


class TournamentRow(BaseModel):
    id: int
    name: str
    validity: str
    zone: str


class SettingsChange(Body):
    tournament: Annotated[str, Field(pattern=REF_PATTERN)]
    changes: Settings
    reason: Reason


class SettingsChangeIn(Body):
    changes: Settings
    reason: Reason


class PlayerIn(Body):
    id_number: IdNumber
    name: Name
    date_of_birth: Day
    card_number: Code | None = None


class PlayerOut(BaseModel):
    id: int
    id_number: str
    name: str
    date_of_birth: date
    card_number: str | None


class CardAtMachineOut(BaseModel):
    """A machine's last player card (``docs/mqtt.md``, "Player cards") and the decision
    at card-in: ``rule`` names the rule that refused it (T1-T3, T23)."""

    machine: str
    card: str
    action: Literal["card-in", "card-out"]
    outcome: Literal["accepted", "refused", "not-registered", "out"]
    in_machine: bool
    player_id: int | None
    player_name: str
    rule: str
    reason: str
    at: datetime


TenderIn = Literal["cash", "card", "comp"]


class SaleIn(Body):
    player: PlayerRef
    package: Code = "single"
    quantity: Annotated[int, Field(ge=1, le=100)] = 1
    # How it is paid; replaces ``payment`` and ``complimentary`` (kept for old clients).
    tender: TenderIn | None = None
    payment: Literal["cash", "card"] = "cash"
    complimentary: bool = False
    reference: Annotated[str, Field(min_length=1, max_length=64), _Plain] | None = None  # till slip

    @model_validator(mode="after")
    def _one_tender(self) -> SaleIn:
        said = "comp" if self.complimentary else self.payment
        if self.tender is not None and said != "cash" and said != self.tender:
            raise ValueError(f"tender: {self.tender} contradicts the older field ({said})")
        return self


class SaleOut(BaseModel):
    purchase: int
    kind: str
    tender: str
    package: str | None
    seats: int
    amount_cents: int
    valid_until: datetime | None
    entries: list[int]


class Refund(Body):
    entry_id: Id
    rule: Literal[20, 23]
    reason: Reason
    tender: TenderIn | None = None  # how the money goes back; default: as it was paid


class RefundIn(Body):
    rule: Literal[20, 23]
    reason: Reason
    tender: TenderIn | None = None


class HeatIn(Body):
    stage: Stage = "qualifying"
    starts_at: Time
    bank: Code
    duration_seconds: Annotated[int, Field(ge=1, le=86_400)]
    starting_credits: Annotated[int, Field(ge=1, le=INT32)]
    number: Annotated[int, Field(ge=1, le=100_000)] | None = None
    announced_via: Label | None = None
    # F6: a sit-and-go heat, started once this many seats fill (starts_at: the latest start)
    sit_and_go_seats: Annotated[int, Field(ge=0, le=100_000)] | None = None


class HeatOut(BaseModel):
    heat_id: int
    tournament_id: int
    stage: str
    number: int
    label: str
    status: str
    starts_at: datetime
    duration_s: int
    starting_credits: int
    bank_name: str
    seats: int
    booked: int


class RegisterIn(Body):
    player: PlayerRef
    entry: Id | None = None


class SeatOut(BaseModel):
    seat_id: int
    seat: int
    machine: str
    entry: int


class SeatRow(BaseModel):
    seat_id: int
    seat_number: int
    machine_id: str
    entry_id: int
    holder_player_id: int
    holder_name: str
    played_by: str
    status: str
    credits: int | None
    source: str | None = None  # "manual": keyed in or corrected by a director (T23)


class ManualScore(Body):
    seat_id: Id
    credits: Count
    games_played: Count
    games_won: Count
    credits_wagered: Count
    credits_won: Count
    reason: Reason
    approved_by: str | None = None  # filled on approval: the dual-control approver


class ManualScoreIn(Body):
    credits: Count
    games_played: Count
    games_won: Count
    credits_wagered: Count
    credits_won: Count
    reason: Reason


class Reinstate(Body):
    disqualification_id: Id
    reason: Reason


class ReinstateIn(Body):
    reason: Reason


class OrderIn(Body):
    order: Literal["start", "pause", "resume", "abort", "restart"]
    heat: Id | None = None
    reason: Note = ""


class OrderOut(BaseModel):
    order: int
    bank: str
    command: str


class BankOut(BaseModel):
    name: str
    enabled: bool
    machines: list[str]
    excluded: dict[str, str]


class ClearMarksIn(Body):
    reason: Finding  # what the technician found (audit log)


class TrapMarkOut(BaseModel):
    kind: str  # link-down, power-lost, door-opened
    at: datetime  # when the trap came
    heat: str  # the heat under way then, or ""
    mid_heat: bool


class MarksClearedOut(BaseModel):
    machine: str
    cleared: list[TrapMarkOut]  # empty: the machine had no marks, nothing was written


class AuditRow(BaseModel):
    id: int
    at: datetime
    actor: str
    action: str
    subject: str
    reason: str | None
    details: dict[str, Any]


class AuditVerified(BaseModel):
    """``POST /audit/verify``: what ``reelgate audit verify --json`` says of the chain,
    the checkpoints, the sealed results and the cuts (the witness copy stays on the host's
    check), recorded as an ``audit.verified`` row under the caller."""

    ok: bool
    headline: str
    rows_checked: int
    last_id: int
    checkpoints: int
    sealed_rows: int
    signatures_checked: bool
    findings: list[str]
    amendments: int


class UserOut(BaseModel):
    """An account as ``reelgate users list`` shows it (never its password hash)."""

    id: int
    name: str
    role: str
    disabled: bool
    failed_logins: int
    locked_until: datetime | None
    created_at: datetime
    created_by: str
    last_login_at: datetime | None  # the last password sign-in; None: none recorded


class PendingOut(BaseModel):
    pending: int
    kind: str
    status: str
    requested_by: str
    payload: dict[str, Any]


class Decision(BaseModel):
    pending: int
    status: str
    result: dict[str, Any] | None = None


class Problem(BaseModel):
    error: str
    rule: int | None = None


class StandingLineOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    place: int
    position: int
    entry_id: int
    player_id: int
    player_name: str
    credits: int
    tied: bool
    heat_number: int
    manual: bool = False  # keyed in or corrected by a director (T23)


class StandingsOut(BaseModel):
    tournament: int
    stage: str
    lines: list[StandingLineOut]
    cuts: list[int]


class QualifiersOut(BaseModel):
    finalists: list[int]
    semi_finalists: list[int]
    qualifying_over: bool
    semis_over: bool
    final_over: bool
