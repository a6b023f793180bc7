"""What a heat tells the tournament side, and the progress it reports to a screen.

The heat orchestration knows machines; the tournament (``gateway.tournament``) knows
players, seats and entries.  The seam is the journal: each step of a tournament heat
writes its tournament effects in the same commit (:mod:`storage.effects`), and a
:class:`TournamentSide` — :class:`gateway.tournament.bridge.TournamentBridge` — drains
them into the tournament tables.  The runner asks it to drain after each step that
wrote one; a drain that fails (the database away) is simply done again later, by the
runner, the scheduler's periodic drain, or a recovery.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from storage.journal import RunView


class TournamentSide(Protocol):
    async def drain(self, run_id: int | None = None) -> int:
        """Apply the pending tournament effects (of one run, or all); how many applied."""
        ...


class Progress(enum.Enum):
    STATE = "state"  # the heat moved to a new state
    CREDITS = "credits"  # a machine's live credit meter
    MALFUNCTION = "malfunction"
    SCORE = "score"
    DONE = "done"  # F2/F3: a machine has played its heat under the format (detail: why)


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


def run_fields(view: RunView) -> dict[str, object]:
    """The log fields of a heat run: its bank, tournament heat (none for a technician's
    test heat) and run; bound around whatever drives or recovers it."""
    fields: dict[str, object] = {"bank": view.bank_name, "run": view.id}
    if view.heat_id is not None:
        fields["heat"] = view.heat_id
    return fields
