"""Confirming a malfunction reported by one SAS general-poll byte (sans-I/O).

A general-poll reply is one exception byte with no CRC (sas.md §1): a single flipped bit
turns 00 (no activity) into 20 (general tilt), 12 (slot door closed) into 13 (drop door
opened), and a malfunction-class exception would void a seat at once (T20).

Theory of operation
-------------------
:meth:`ExceptionGate.admit` takes the codes of one drain of the exception queue (each
code is the byte of one general poll, in order) and returns the codes to report now.  A
malfunction-class code (:data:`MALFUNCTION_CODES`) is not reported when it arrives: it
becomes a *suspect*, held for a short bounded window -- ``polls`` further drains or
``window_s`` seconds, whichever ends first.  It is *confirmed*, and then reported (once,
with its own code), by

* the same code again from a later general poll (a real tilt repeating), or
* its partner code from a later poll: a door opened then closed, power lost then applied
  (:data:`PARTNERS`), or
* a status read the driver makes (:meth:`confirm`): e.g. the slot-door-opened meter of
  SAS LP 1C past its value at tournament entry.

A suspect whose window ends unconfirmed is dropped: counted in :attr:`suspects` and
handed to ``on_suspect`` (the driver logs it), never reported as a malfunction.  Every
other code passes through at once.  The gate keeps no I/O and reads time only from the
``clock`` it is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

DOOR_OPENED_CODES = frozenset({0x11, 0x13, 0x15, 0x19, 0x1D})
GENERAL_TILT = 0x20
POWER_LOST = 0x18
OUT_OF_SERVICE = 0x86
MALFUNCTION_CODES = DOOR_OPENED_CODES | {GENERAL_TILT, POWER_LOST, OUT_OF_SERVICE}
"""Exceptions that end a machine's part in a heat (door opened, tilt, power lost, out of
service: :data:`gateway.heats.watch.MALFUNCTION_EVENTS`)."""

PARTNERS = {0x11: 0x12, 0x13: 0x14, 0x15: 0x16, 0x19: 0x1A, 0x1D: 0x1E, POWER_LOST: 0x17}
"""A suspect's partner: the exception that can only follow the real thing."""


@dataclass(slots=True)
class _Suspect:
    code: int
    at: float  # clock() when its byte was read
    drains_left: int


class ExceptionGate:
    """Holds malfunction-class exception codes until a second reading confirms them."""

    def __init__(
        self,
        *,
        polls: int = 3,
        window_s: float = 1.5,
        clock: Callable[[], float] = time.monotonic,
        on_suspect: Callable[[int], None] | None = None,
    ) -> None:
        if polls < 1 or window_s <= 0:
            raise ValueError("the confirmation window needs polls >= 1 and window_s > 0")
        self.polls = polls
        self.window_s = window_s
        self.clock = clock
        self.on_suspect = on_suspect
        self.suspects = 0  # malfunction-class bytes never confirmed
        self.confirmed = 0
        self._held: list[_Suspect] = []

    @property
    def held(self) -> list[int]:
        """The suspect codes waiting for confirmation, oldest first."""
        return [s.code for s in self._held]

    def admit(self, codes: list[int]) -> list[int]:
        """One drain's codes (in general-poll order) -> the codes to report now."""
        now = self.clock()
        self._expire(now)  # a window that ran out before this drain confirms nothing
        out: list[int] = []
        fresh: list[_Suspect] = []
        for code in codes:
            confirmed = self._take(code)
            if confirmed is not None:
                out.append(confirmed)
                if code == confirmed:
                    continue  # the repeat itself is the same event, reported once
            if code in MALFUNCTION_CODES and confirmed is None:
                suspect = _Suspect(code, now, self.polls)
                self._held.append(suspect)
                fresh.append(suspect)
            else:
                out.append(code)
        for s in self._held:
            if not any(s is f for f in fresh):
                s.drains_left -= 1
        self._expire(now)
        return out

    def confirm(self, code: int) -> int | None:
        """A status read showed ``code``'s condition: report it (its code), if held."""
        for s in self._held:
            if s.code == code:
                self._held.remove(s)
                self.confirmed += 1
                return code
        return None

    def _take(self, code: int) -> int | None:
        """The held suspect ``code`` confirms (a repeat or its partner), removed."""
        for s in self._held:
            if code in (s.code, PARTNERS.get(s.code)):
                self._held.remove(s)
                self.confirmed += 1
                return s.code
        return None

    def _expire(self, now: float) -> None:
        keep: list[_Suspect] = []
        for s in self._held:
            if s.drains_left > 0 and now - s.at <= self.window_s:
                keep.append(s)
                continue
            self.suspects += 1
            if self.on_suspect is not None:
                self.on_suspect(s.code)
        self._held = keep
