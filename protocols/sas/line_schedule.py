"""Who speaks next on a SAS line: the pure turn scheduler of one port.

Theory of operation
-------------------
A SAS loop carries one message at a time: the host sends a poll and waits for its reply
(or its last timeout) before anything else may go out.  Several EGMs may share the line
(multi-drop, addresses 1..127): every one hears every poll and only the addressed one
answers.  One :class:`LineSchedule` per port decides, each time the line falls free,
which waiting request goes next:

1. **urgent** requests (a heat's start and stop, framed ahead and fired together) in the
   order they were fired;
2. then **normal** requests (commands and reads) in the order they were asked;
3. then **background** general polls, round robin: the address polled longest ago first,
   so no machine on a long loop starves.

A request is eligible only once its address's poll spacing has run out (``min_spacing``
between the sends of two polls to one EGM: 200 ms in SAS, sas.md §1); the repeat of one
poll inside an exchange (SAS's NACK) is the link's own timing and not counted here.  An
address with an urgent request waiting gets no lower-class turn in the meantime: one
stray general poll would otherwise push its start out by a whole spacing.

The line is accounted in characters: a frame of ``n`` characters and its reply of ``m``
keep the line busy for ``n + m`` character times (11 bits at 19 200 baud: 0.573 ms)
from the send, whatever the carrier reports.  On a real serial port that is what the
bytes take anyway; behind a TCP interface board that fronts a serial loop it paces the
host as the board's serial side will be paced.  ``char_time=0`` turns it off.

Everything is driven by the caller with times passed in: :meth:`submit`,
:meth:`withdraw`, :meth:`grant`, :meth:`sent`, :meth:`done`, :meth:`next_time`.  No
clock, no I/O.
"""

from __future__ import annotations

import enum
import itertools
from collections import deque
from dataclasses import dataclass, field

SAS_CHAR_TIME = 11 / 19_200  # one 11-bit character (start, 8 data, wakeup, stop)


class Urgency(enum.IntEnum):
    URGENT = 0
    NORMAL = 1
    BACKGROUND = 2


@dataclass(frozen=True, slots=True)
class Ticket:
    number: int
    address: int
    urgency: Urgency


@dataclass(slots=True)
class _Address:
    min_spacing: float
    last_sent: float | None = None
    urgent_waiting: int = 0


@dataclass(slots=True)
class LineStats:
    exchanges: int = 0
    busy_seconds: float = 0.0  # accounted line time (characters x char time)
    max_queue: int = 0
    spacing_waits: int = 0  # grants that found only addresses still inside their spacing
    per_address_min_gap: dict[int, float] = field(default_factory=dict)


class LineSchedule:
    """The turn-taking of one SAS line (see the module doc)."""

    def __init__(self, *, char_time: float = SAS_CHAR_TIME) -> None:
        if char_time < 0:
            raise ValueError("char_time must be >= 0")
        self.char_time = char_time
        self.stats = LineStats()
        self._addresses: dict[int, _Address] = {}
        self._queues: tuple[deque[Ticket], deque[Ticket], deque[Ticket]] = (
            deque(),
            deque(),
            deque(),
        )
        self._numbers = itertools.count(1)
        self._withdrawn: set[int] = set()
        self._busy = False
        self._sent_at = 0.0
        self._frame_chars = 0
        self._free_at = 0.0

    # -- addresses -----------------------------------------------------------------------
    def add_address(self, address: int, min_spacing: float) -> None:
        """Register an EGM on the line (again: keeps its last poll time, new spacing)."""
        if not 1 <= address <= 127:
            raise ValueError(f"SAS address must be 1..127, not {address}")
        if min_spacing < 0:
            raise ValueError("min_spacing must be >= 0")
        known = self._addresses.get(address)
        if known is None:
            self._addresses[address] = _Address(min_spacing)
        else:
            known.min_spacing = min_spacing

    @property
    def addresses(self) -> list[int]:
        return sorted(self._addresses)

    def ready_at(self, address: int) -> float:
        """When the spacing of ``address`` runs out (0 if never polled)."""
        a = self._addresses[address]
        return 0.0 if a.last_sent is None else a.last_sent + a.min_spacing

    # -- requests ------------------------------------------------------------------------
    def submit(self, address: int, urgency: Urgency) -> Ticket:
        a = self._addresses.get(address)
        if a is None:
            raise ValueError(f"address {address} is not on this line")
        ticket = Ticket(next(self._numbers), address, urgency)
        self._queues[urgency].append(ticket)
        if urgency is Urgency.URGENT:
            a.urgent_waiting += 1
        waiting = self.waiting
        if waiting > self.stats.max_queue:
            self.stats.max_queue = waiting
        return ticket

    def withdraw(self, ticket: Ticket) -> None:
        """Drop a request that was not granted (its asker gave up)."""
        queue = self._queues[ticket.urgency]
        if ticket in queue:
            queue.remove(ticket)
            if ticket.urgency is Urgency.URGENT:
                self._addresses[ticket.address].urgent_waiting -= 1

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues)

    @property
    def busy(self) -> bool:
        return self._busy

    def queued(self, address: int) -> bool:
        return any(t.address == address for q in self._queues for t in q)

    # -- turns ---------------------------------------------------------------------------
    def grant(self, now: float) -> Ticket | None:
        """The request that may send now (removed from the queue), or None: the line is
        busy, accounted busy until later, or no waiting address is out of its spacing."""
        if self._busy or now < self._free_at or not self.waiting:
            return None
        ticket = self._pick(now)
        if ticket is None:
            self.stats.spacing_waits += 1
            return None
        self._queues[ticket.urgency].remove(ticket)
        if ticket.urgency is Urgency.URGENT:
            self._addresses[ticket.address].urgent_waiting -= 1
        return ticket

    def _pick(self, now: float) -> Ticket | None:
        urgent, normal, background = self._queues
        for ticket in urgent:
            if self._eligible(ticket.address, now):
                return ticket
        for ticket in normal:
            if self._eligible(ticket.address, now) and not self._held(ticket.address):
                return ticket
        best: Ticket | None = None
        best_last = 0.0
        for ticket in background:
            address = ticket.address
            if not self._eligible(address, now) or self._held(address):
                continue
            last = self._addresses[address].last_sent
            key = -1.0 if last is None else last
            if best is None or key < best_last:
                best, best_last = ticket, key
        return best

    def _eligible(self, address: int, now: float) -> bool:
        return now >= self.ready_at(address)

    def _held(self, address: int) -> bool:
        return self._addresses[address].urgent_waiting > 0

    def sent(self, address: int, frame_chars: int, now: float) -> None:
        """The granted request's frame went out at ``now``: the line is busy."""
        if self._busy:
            raise RuntimeError("a second message on a busy SAS line")
        a = self._addresses[address]
        if a.last_sent is not None:
            gap = now - a.last_sent
            known = self.stats.per_address_min_gap.get(address)
            if known is None or gap < known:
                self.stats.per_address_min_gap[address] = gap
        a.last_sent = now
        self._busy = True
        self._sent_at = now
        self._frame_chars = frame_chars

    def done(self, reply_chars: int, now: float) -> None:
        """The exchange in flight ended (reply taken or every try failed)."""
        if not self._busy:
            return
        self._busy = False
        accounted = (self._frame_chars + reply_chars) * self.char_time
        self._free_at = max(now, self._sent_at + accounted)
        self.stats.exchanges += 1
        self.stats.busy_seconds += accounted

    def next_time(self, now: float) -> float | None:
        """The earliest moment :meth:`grant` could return a request (None: nothing is
        waiting, or the line is busy and only its end can change that)."""
        if self._busy or not self.waiting:
            return None
        earliest: float | None = None
        for urgency, queue in enumerate(self._queues):
            for ticket in queue:
                if urgency != Urgency.URGENT and self._held(ticket.address):
                    continue
                at = self.ready_at(ticket.address)
                if earliest is None or at < earliest:
                    earliest = at
        if earliest is None:
            return None
        return max(earliest, self._free_at, now)
