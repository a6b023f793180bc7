"""The live credit meter of a SAS machine that reports in real time (LP 0E).

Between two reads of the credit meter (LP 1A), each game's event frames move it: 7E
game started takes its bet, 7F game ended adds its win (:mod:`protocols.sas.real_time`).
A read is a true base for the events that follow it: a real-time EGM reports its pending
events ahead of any long poll's reply (SAS 6.02 §12.3), so the events a read meets are
already in the value it returns, and every later event is news.  Lost events (70, the
queue overflowed) or a game event without its data make the meter unknown until the
next read.  This is the live display's number only; scores come from the meters.
"""

from __future__ import annotations

from protocols.sas import ExceptionReply, RealTimeEvent, SasException

_UNKNOWN_AFTER = frozenset(
    {SasException.GAME_STARTED, SasException.GAME_ENDED, SasException.EXCEPTION_BUFFER_OVERFLOW}
)


class LiveMeter:
    """The credit meter followed from events (None: unknown; read it)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: int | None = None

    def base(self, credits: int) -> None:
        """A read of the credit meter: every event reported before it is in it."""
        self.value = credits

    def lose(self) -> None:
        self.value = None

    def apply(self, report: ExceptionReply | RealTimeEvent) -> None:
        """One event reported after the base."""
        if self.value is None:
            return
        wagered = win = None
        if isinstance(report, RealTimeEvent):
            wagered, win = report.credits_wagered, report.win
        if wagered is not None:
            self.value -= wagered
        elif win is not None:
            self.value += win
        elif report.code in _UNKNOWN_AFTER:  # a game without its data, or events lost
            self.value = None
        if self.value is not None and self.value < 0:
            self.value = None  # cannot be: the base or an event was wrong
