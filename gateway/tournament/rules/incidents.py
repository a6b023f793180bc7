"""Malfunctions and failures (T20–T21) and what each one leads to.

Clauses: docs/rules.md#t20, #t21.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from gateway.tournament.rules.enums import IN_PROGRESS, HeatStatus, NoticeKind
from gateway.tournament.rules.seating import FreeSeat
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.settings import TournamentSettings


class MalfunctionOutcome(enum.Enum):
    RESEATED = "reseated"  # T20/T21: first free seat in a future similar heat
    REFUNDED = "refunded"  # T20: no future qualifying seat
    ADDED_HEAT = "added-heat"  # T21: a heat added to the final stage, seat by draw
    DISQUALIFIED = "disqualified"  # T20: player negligence, buy-in forfeited


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
    """T20: a tournament-system failure restarts the whole heat, unless it was not
    resolved within the reasonable period (``postpone_after``): then the heat is postponed."""
    if now < failed_at:
        raise RuleViolation(20, "the failure time is in the future")
    return (
        FailureOutcome.POSTPONE
        if now - failed_at > settings.postpone_after
        else FailureOutcome.RESTART
    )


# A director's new time for the heat ends one spell of difficulties (T10, T20).
FRESH_START_NOTICES = frozenset({NoticeKind.RESCHEDULED, NoticeKind.POSTPONED})


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """One attempt at a heat that ended in a restart (T20), as plain facts."""

    opened_at: datetime  # when the attempt began
    failed_at: datetime  # when it was restarted
    last_in_control: datetime | None  # its last recorded step before the restart, if any
    under_way: bool  # play had begun before the restart


def difficulties_began(
    failed: Sequence[FailedAttempt], fresh_starts: Iterable[datetime]
) -> datetime | None:
    """When the heat's current tournament-system difficulties began (T20).

    ``failed``: the heat's latest attempts that ended in a restart, newest first (empty
    when the latest attempt did not).  ``fresh_starts``: when the director announced a
    new time for the heat (:data:`FRESH_START_NOTICES`).

    An attempt's difficulties are dated from its last step before the restart: the last
    moment the heat was known to be under control (before an outage, never the moment the
    gateway came back; erring towards postponing).  An attempt that failed before play
    began continues the previous one's difficulties, so retries every few seconds never
    reset the clock; an attempt that got under way, or a new time announced in between,
    starts a new count.
    """
    announced = sorted(fresh_starts)
    began: datetime | None = None
    later: FailedAttempt | None = None
    for attempt in failed:
        if later is not None and _announced_between(announced, attempt.failed_at, later.opened_at):
            break
        began = attempt.opened_at if attempt.last_in_control is None else attempt.last_in_control
        if attempt.under_way:
            break  # play was under way: the difficulties began in this attempt
        later = attempt
    return began


def _announced_between(announced: Sequence[datetime], since: datetime, until: datetime) -> bool:
    return any(since <= at <= until for at in announced)


def failure_time(began: datetime | None, now: datetime) -> datetime:
    """The failure time T20 measures the reasonable period from: when the difficulties
    began (never later than ``now``), or ``now`` when there is no record of them."""
    return now if began is None else min(began, now)
