"""Malfunctions and failures (rules 20–21) and what each one leads to."""

from __future__ import annotations

import enum
from datetime import datetime

from gateway.tournament.rules.enums import IN_PROGRESS, HeatStatus
from gateway.tournament.rules.seating import FreeSeat
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings


class MalfunctionOutcome(enum.Enum):
    RESEATED = "reseated"  # rules 20/21: first free seat in a future similar heat
    REFUNDED = "refunded"  # rule 20: no future qualifying seat
    ADDED_HEAT = "added-heat"  # rule 21: a heat added to the final stage, seat by draw
    DISQUALIFIED = "disqualified"  # rule 20: player negligence, buy-in forfeited


def malfunction_outcome(
    final_stage: bool, negligence: bool, free_seat: FreeSeat | None
) -> MalfunctionOutcome:
    if negligence:
        return MalfunctionOutcome.DISQUALIFIED
    if free_seat is not None:
        return MalfunctionOutcome.RESEATED
    return MalfunctionOutcome.ADDED_HEAT if final_stage else MalfunctionOutcome.REFUNDED


def check_malfunction_allowed(status: HeatStatus, label: str) -> None:
    """A seat malfunctions while its heat is under way (or just aborted), not before or after."""
    if status not in IN_PROGRESS | {HeatStatus.ABORTED}:
        raise RuleViolation(
            20, f"{label} is {status.value}; a malfunction happens in a running heat"
        )


class FailureOutcome(enum.Enum):
    RESTART = "restart"
    POSTPONE = "postpone"


def failure_outcome(
    settings: TournamentSettings, failed_at: datetime, now: datetime
) -> FailureOutcome:
    """Rule 20: a tournament-system failure restarts the whole heat, unless it was not
    resolved within the reasonable period (``postpone_after``): then the heat is postponed."""
    if now < failed_at:
        raise RuleViolation(20, "the failure time is in the future")
    return (
        FailureOutcome.POSTPONE
        if now - failed_at > settings.postpone_after
        else FailureOutcome.RESTART
    )
