"""Request and response bodies of the Super 9 desk (``/api/v1/super9``), bounded like
:mod:`.models` and sized to the Super 9 columns (``storage.super9``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from gateway.web.api.models import Body, Id, Name, Note, PlayerRef, Reason, Time

Serial = Annotated[str, Field(pattern=r"^[A-Za-z0-9_./-]{1,32}$")]
Numbers = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]
Wheel = Annotated[int, Field(ge=0, le=36)]
Game = Annotated[int, Field(ge=0, le=2**31 - 1)]


class Keyed(Body):
    """A write keyed from paper (:mod:`gateway.web.api.keyed_time`): when it happened,
    and why it is keyed late; absent, the write happens now."""

    keyed_at: Time | None = None
    keyed_reason: Note | None = None


class CalendarRow(BaseModel):
    starts_at: str
    sales_open: str
    sales_close: str
    hand_in_cutoff: str


class CalendarChangeIn(Keyed):
    at: Time
    cancel: bool = False
    reason: Reason


class OpenIn(Keyed):
    starts_at: Time


class SessionOut(BaseModel):
    session: int


class SaleIn(Keyed):
    ticket: Serial
    player: PlayerRef
    tender: Literal["cash", "card"] = "cash"  # how the buy-in is paid


class TicketOut(BaseModel):
    ticket: str
    session: int


class HandInIn(Keyed):
    """The top copy's numbers and its verification section as filled in (rule 7)."""

    numbers: Numbers
    name: Note = ""
    id: Annotated[str, Field(max_length=32)] = ""
    contact: Note = ""
    signed: bool = False


class NumbersIn(Body):
    numbers: Numbers
    reason: Reason


class NumberChange(Body):
    ticket: Serial
    numbers: Numbers
    reason: Reason
    approved_by: Name | None = None  # the approving Promotion Director (rule 23)


class DisqualifyIn(Body):
    rule: Literal[9, 21, 24, 28] = 21
    reason: Reason


class WheelResultIn(Body):
    game: Game
    number: Wheel


class SpinOut(BaseModel):
    session: int
    seq: int
    number: int | None
    voided: bool
    completed: list[str]


class ManualSpinIn(Body):
    number: Wheel
    confirm: Wheel
    game: Game | None = None
    reason: Reason


class ManualSpin(ManualSpinIn):
    session: Id
    confirmed_by: Name | None = None  # the approving account (rule 29)


class VoidIn(Body):
    game: Game | None = None
    seq: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    reason: Reason

    @model_validator(mode="after")
    def _one_of(self) -> VoidIn:
        if (self.game is None) == (self.seq is None):
            raise ValueError("give the wheel game number or the spin sequence number")
        return self


class VoidOut(BaseModel):
    session: int
    seq: int


class ClaimIn(Body):
    ticket: Serial
    duplicate: Numbers


class ClaimOut(BaseModel):
    ticket: str
    valid: bool
    complete: bool
    reason: str | None


class ReceiptIn(Body):
    kind: Literal["jackpot", "consolation"]
    signature: Annotated[str, Field(min_length=1, max_length=128)]
    signer: PlayerRef


class Receipt(ReceiptIn):
    session: Id
    ticket: Serial
    witness: Name | None = None  # the approving account (rule 26)


class JackpotOut(BaseModel):
    jackpot_cents: int
    history: list[dict[str, Any]]
