"""The Super 9 settings as the API reads and changes them (:mod:`gateway.super9.rules.
settings`): every field typed and bounded here, its meaning and its checks the rules'."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from gateway.web.api.models import BIG, Body, Reason, Zone

Cents = Annotated[int, Field(ge=0, le=BIG)]
Spins = Annotated[int, Field(ge=0, le=1000)]
RepeatRule = Literal["disregard-repeats", "count-every-spin"]
Contribution = Literal["restart-at-seed", "seeds-next", "paid-with-jackpot"]
Leftovers = Literal["jackpot", "house"]
VerificationField = Literal["name", "id", "contact", "signature"]


class Super9SettingsOut(BaseModel):
    buy_in_cents: int
    jackpot_seed_cents: int
    jackpot_spins: int
    repeat_rule: str
    claim_window_spins: int
    jackpot_winner_takes_consolation: bool
    winning_contribution: str
    leftovers: str
    verification_fields: list[str]
    timezone: str


class Super9Changes(Body):
    """The settings to change; the others keep their value (``reelgate super9 set``)."""

    buy_in_cents: Cents | None = None
    jackpot_seed_cents: Cents | None = None
    jackpot_spins: Spins | None = None
    repeat_rule: RepeatRule | None = None
    claim_window_spins: Spins | None = None
    jackpot_winner_takes_consolation: bool | None = None
    winning_contribution: Contribution | None = None
    leftovers: Leftovers | None = None
    verification_fields: Annotated[list[VerificationField], Field(max_length=4)] | None = None
    timezone: Zone | None = None


class Super9SettingsIn(Body):
    changes: Super9Changes
    reason: Reason


class WheelStatusOut(BaseModel):
    session: int
    status: str  # scheduled | drawing | closed
    taking_results: bool  # drawing: a wheel result now becomes a spin
    wheel_url: str | None
    wheel_spins: int
    manual_spins: int  # rule 29
    voided: int  # rule 18
    last_game: int | None
    last_number: int | None
    last_result_at: datetime | None
