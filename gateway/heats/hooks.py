"""What a heat tells the tournament side, and the progress it reports to a screen.

The heat orchestration knows machines; the tournament services (``gateway.tournament``)
know players, seats and entries.  :class:`TournamentHooks` is the seam: a technician's
test heat runs with no hooks at all, a tournament heat with
:class:`gateway.tournament.bridge.ServiceHooks`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from gateway.scores import HeatScore


class TournamentHooks(Protocol):
    async def heat_started(self, heat_id: int, started_at: datetime) -> None:
        """Rule 22: the start is announced; absent players forfeit their seats."""
        ...

    async def record_score(self, heat_id: int, machine_id: str, score: HeatScore) -> None:
        """Store the seat's score (idempotent: a replay stores nothing twice)."""
        ...

    async def machine_malfunctioned(self, heat_id: int, machine_id: str, reason: str) -> None:
        """Rules 20/21: the seat's player gets a future seat or a refund."""
        ...

    async def heat_finished(self, heat_id: int, ended_at: datetime) -> None: ...

    async def heat_restarted(self, heat_id: int, reason: str) -> None:
        """Rule 20: this attempt is void, the entire heat runs again."""
        ...


@runtime_checkable
class ClosesUnplayedHeats(Protocol):
    """Hooks that can close a heat nobody would play (rule 22: every seat forfeited)."""

    async def close_if_nobody_plays(self, heat_id: int, at: datetime) -> bool:
        """Close the heat if no seat is in play; True if it did."""
        ...


class Progress(enum.Enum):
    STATE = "state"  # the heat moved to a new state
    CREDITS = "credits"  # a machine's live credit meter
    MALFUNCTION = "malfunction"
    SCORE = "score"


@dataclass(frozen=True, slots=True)
class ProgressNote:
    kind: Progress
    run_id: int
    state: str = ""
    machine_id: str = ""
    value: int | None = None
    detail: str = ""
    seconds_left: float | None = None
    heat_id: int | None = None  # the tournament heat of the run (None: a test heat)


ProgressSink = Callable[[ProgressNote], None]
