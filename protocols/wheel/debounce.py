"""Turns the wheel's repeated lines into exactly one result per game number.

Production readers never act on a single line ([S] in the reference): a result is
posted once ``confirmations`` identical state-5 lines (same game, same number, no
warning flag) have arrived, and never again for that game number.  A state-5 line with a
different number for the same game restarts the count (a sensor bounce); a state-5 line
with a warning flag set (ball removed, misfire, wrong direction) is not a result.

Every line that is not posted is counted by why, so a report can show how noisy the
link was.  Voiding a game (S9-18, "no spin") is not done here: the wheel does not
know a dealer called it, so voids live with the draw, keyed by the same game number.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from protocols.wheel.codec import (
    DOUBLE_ZERO,
    GameStateLine,
    Garbage,
    OtherLine,
    WarningFlag,
    WheelLine,
    WheelState,
)

#: How many posted game numbers we remember to suppress late repeats.
REMEMBERED_GAMES = 1024


@dataclass(frozen=True, slots=True)
class WheelResult:
    game: int
    number: int


@dataclass
class Debouncer:
    confirmations: int = 2
    counts: Counter[str] = field(default_factory=Counter)
    _candidate: tuple[int, int] | None = None
    _seen: int = 0
    _posted: OrderedDict[int, int] = field(default_factory=OrderedDict)

    def __post_init__(self) -> None:
        if self.confirmations < 1:
            raise ValueError("confirmations must be at least 1")

    def feed(self, line: WheelLine) -> WheelResult | None:
        if isinstance(line, Garbage):
            self.counts["garbage"] += 1
            return None
        if isinstance(line, OtherLine):
            self.counts["other"] += 1
            return None
        return self._game_state(line)

    def _game_state(self, line: GameStateLine) -> WheelResult | None:
        if line.state is not WheelState.WINNING_NUMBER:
            self.counts["state"] += 1
            if line.flags & WarningFlag.BALL_REMOVED:
                # the game restarts: whatever we were confirming for it is gone
                self.counts["restart"] += 1
                self._candidate, self._seen = None, 0
            return None
        if line.game in self._posted:
            self.counts["repeat"] += 1
            return None
        if line.flags != WarningFlag.NONE:
            self.counts["flagged"] += 1
            return None
        if line.number == DOUBLE_ZERO:
            self.counts["double-zero"] += 1
            return None
        key = (line.game, line.number)
        if key != self._candidate:
            if self._candidate is not None and self._candidate[0] == line.game:
                self.counts["conflict"] += 1
            self._candidate, self._seen = key, 0
        self._seen += 1
        if self._seen < self.confirmations:
            self.counts["confirming"] += 1
            return None
        self._candidate, self._seen = None, 0
        self._posted[line.game] = line.number
        while len(self._posted) > REMEMBERED_GAMES:
            self._posted.popitem(last=False)
        self.counts["posted"] += 1
        return WheelResult(line.game, line.number)
