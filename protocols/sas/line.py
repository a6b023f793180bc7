"""One SAS line in asyncio: a carrier, the host link, and the turn scheduler of the port.

:class:`SasLine` is the thin shell that owns what a port has once: the carrier, the one
:class:`~protocols.sas.link.HostLink` (one poll in flight across every address, implied
ACKs across addresses) and the :class:`~protocols.sas.line_schedule.LineSchedule` that
says whose poll goes next.  :class:`~protocols.sas.client.SasClient` objects, one per
EGM address, ask it for exchanges; on a private line (one EGM behind a TCP board) there
is just one of them and the line behaves as a plain link.

* :meth:`exchange` queues a poll and resolves with the EGM's answer.  A poll is written
  the moment its turn is granted (inside the callback that freed the line), so no
  coroutine hop sits between two messages of a busy loop.
* :meth:`fire` is the synchronous half for a poll framed ahead (the heat start): written
  at once when the line is free; when another address holds the line it is queued
  *urgent* and goes out the moment the line frees, in firing order (a shared loop cannot
  start its machines in one instant, only back to back).  It refuses
  (:class:`LineNotReady`, nothing sent) when this address already has a poll in flight
  or queued, or is inside its spacing: the caller then takes its ordinary path.
* One loop timer serves both the link's deadlines and the scheduler's next turn.
* Per-address observers (:class:`LineUser`) hear of sends, retries, failures, busy,
  chirps and stray errors; the carrier's loss fails everything waiting.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from protocols.sas.carriers import Carrier
from protocols.sas.codec import FramedPoll, frame_poll
from protocols.sas.errors import ProtocolError
from protocols.sas.framer import TrailingBytes
from protocols.sas.line_schedule import SAS_CHAR_TIME, LineSchedule, Ticket, Urgency
from protocols.sas.link import HostLink, LinkSettings, PollFailed, PollReply, Retrying
from protocols.sas.messages import Chirp, EgmMessage, HostMessage

_TIMER_RESOLUTION = time.get_clock_info("monotonic").resolution  # asyncio's loop clock


class LineLost(ConnectionError):
    """The line's carrier closed; ``address`` is whose poll was affected."""


class LineNotReady(Exception):
    """A prepared poll could not leave or queue: nothing was sent."""


class LineUser(Protocol):
    """What a line tells the client of one address."""

    def note_send(self, now: float) -> None: ...
    def note_reply(self, now: float, silent: bool) -> None: ...  # silent: RTE no activity
    def note_unclaimed(self, reply: EgmMessage) -> None: ...  # its asker gave up after the send
    def note_retry(self, reason: str) -> None: ...  # "timeout", "nack" or "corrupt"
    def note_failure(self, reason: str) -> None: ...
    def note_chirp(self, now: float) -> None: ...
    def note_stray(self) -> None: ...
    def note_trailing(self, trailing: TrailingBytes) -> None: ...  # bytes after a reply


@dataclass(slots=True)
class _Pending:
    ticket: Ticket
    poll: FramedPoll  # framed once, when it was queued
    reply: asyncio.Future[EgmMessage]


class SasLine:
    """The host's side of one port (see the module doc)."""

    def __init__(
        self,
        carrier: Carrier,
        *,
        settings: LinkSettings,
        account_line_time: bool = False,
        on_close: Callable[[SasLine], None] | None = None,
    ) -> None:
        self.carrier = carrier
        self.settings = settings
        self._loop = asyncio.get_running_loop()
        self._link = HostLink(settings)
        self.schedule = LineSchedule(char_time=SAS_CHAR_TIME if account_line_time else 0.0)
        self._users: dict[int, list[LineUser]] = {}
        self._pending: dict[int, _Pending] = {}
        self._in_flight: _Pending | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._lost: Exception | None = None
        self._on_close = on_close
        self.shared = False  # more than one address has joined (a multi-drop loop)
        # Addresses whose EGM reports events in real time (LP 0E): their general polls
        # are framed as such (protocols.sas.real_time).
        self.real_time: set[int] = set()
        carrier.set_handlers(self._on_data, self._on_lost)

    # -- who is on the line ------------------------------------------------------------
    def join(self, address: int, user: LineUser, min_spacing: float) -> None:
        self.schedule.add_address(address, min_spacing)
        self._users.setdefault(address, []).append(user)
        if len(self._users) > 1 and not self.shared:
            self._share()

    def _share(self) -> None:
        """A second address joined: this is a multi-drop loop (behind a board, too).  Pace
        it in line time, and settle a lone ACK after two characters rather than the whole
        inter-byte gap (:class:`LinkSettings` ``ack_settle``): every held ACK on a loop
        delays every machine after it."""
        self.shared = True
        self.schedule.char_time = SAS_CHAR_TIME
        if self._link.settings.ack_settle is None:
            self._link.settings = dataclasses.replace(
                self._link.settings, ack_settle=2 * self._link.settings.byte_time
            )

    def leave(self, address: int, user: LineUser) -> bool:
        """Remove ``user``; True when nobody is left on the line."""
        users = self._users.get(address, [])
        if user in users:
            users.remove(user)
        if not users:
            self._users.pop(address, None)
        return not self._users

    @property
    def closed(self) -> bool:
        return self._lost is not None or self.carrier.closed

    @property
    def lost(self) -> Exception | None:
        return self._lost

    async def close(self) -> None:
        self.carrier.close()
        await self.carrier.wait_closed()

    def busy_with(self, address: int) -> bool:
        """A poll to ``address`` is in flight or waiting for its turn."""
        flight = self._in_flight
        return (flight is not None and flight.ticket.address == address) or self.schedule.queued(
            address
        )

    # -- exchanges -----------------------------------------------------------------------
    def exchange(
        self, address: int, poll: HostMessage | FramedPoll, urgency: Urgency = Urgency.NORMAL
    ) -> asyncio.Future[EgmMessage]:
        """Queue ``poll``; the future resolves with the answer.  Cancelling it before its
        turn withdraws the poll; after the send the link settles it in its own time."""
        if self.closed:
            raise LineLost(f"line closed (address {address})")
        reply: asyncio.Future[EgmMessage] = self._loop.create_future()
        framed = poll if isinstance(poll, FramedPoll) else frame_poll(poll)
        ticket = self.schedule.submit(address, urgency)
        self._pending[ticket.number] = _Pending(ticket, framed, reply)
        reply.add_done_callback(lambda f: self._forget(ticket, f))
        self._dispatch()
        return reply

    def fire(self, address: int, poll: FramedPoll) -> asyncio.Future[EgmMessage]:
        """A prepared poll: out now if the line is free, else urgent in firing order."""
        if self.closed:
            raise LineLost(f"line closed (address {address})")
        if self.busy_with(address):
            raise LineNotReady(f"address {address}: another poll is in flight")
        if self._loop.time() < self.schedule.ready_at(address):
            raise LineNotReady(f"address {address}: inside the poll spacing")
        return self.exchange(address, poll, Urgency.URGENT)

    def _forget(self, ticket: Ticket, reply: asyncio.Future[EgmMessage]) -> None:
        if self._pending.pop(ticket.number, None) is not None and reply.cancelled():
            self.schedule.withdraw(ticket)
            self._arm()

    def _dispatch(self) -> None:
        """Send every turn the schedule grants now (at most one: the line then is busy)."""
        while self._in_flight is None and self._lost is None:
            now = self._loop.time()
            ticket = self.schedule.grant(now)
            if ticket is None:
                break
            pending = self._pending.pop(ticket.number, None)
            if pending is None or pending.reply.done():
                continue
            self._transmit(pending, now)
        self._arm()

    def _transmit(self, pending: _Pending, now: float) -> None:
        address = pending.ticket.address
        wire = self._link.send(pending.poll, now, real_time=address in self.real_time)
        self.schedule.sent(address, len(pending.poll.frame), now)
        self._in_flight = pending
        for user in self._users.get(address, ()):
            user.note_send(now)
        try:
            self.carrier.write(wire)
        except ConnectionError as exc:
            self._on_lost(exc)
            return
        self._pump()

    # -- carrier and timer callbacks -------------------------------------------------------
    def _on_data(self, data: bytes) -> None:
        self._link.receive_data(data, self._loop.time())
        self._pump()
        self._dispatch()

    def _on_timer(self) -> None:
        self._timer = None
        self._link.handle_timers(self._loop.time())
        self._pump()
        self._dispatch()

    def _on_lost(self, exc: Exception | None) -> None:
        if self._lost is not None:
            return
        self._lost = exc or ConnectionResetError("carrier closed")
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiting = [self._in_flight] if self._in_flight is not None else []
        waiting += list(self._pending.values())
        self._in_flight = None
        for pending in waiting:
            if not pending.reply.done():
                pending.reply.set_exception(
                    LineLost(f"link to address {pending.ticket.address} lost: {exc}")
                )
        if self._on_close is not None:
            self._on_close(self)

    def _pump(self) -> None:
        out = self._link.data_to_send()  # a repeat (NACK) after a timeout or bad reply
        if out and not self.carrier.closed:
            self.carrier.write(out)
        while (ev := self._link.next_event()) is not None:
            self._event(ev)

    def _event(self, ev: object) -> None:
        if isinstance(ev, PollReply | PollFailed):
            self._settled(ev)
        elif isinstance(ev, Retrying):
            for user in self._users.get(ev.poll.addr, ()):
                user.note_retry(ev.reason)
        elif isinstance(ev, Chirp):
            now = self._loop.time()
            for user in self._users.get(ev.addr, ()):
                user.note_chirp(now)
        elif isinstance(ev, TrailingBytes):
            for user in self._users.get(ev.poll.addr, ()):
                user.note_trailing(ev)
        elif isinstance(ev, ProtocolError) and self._in_flight is not None:
            for user in self._users.get(self._in_flight.ticket.address, ()):
                user.note_stray()

    def _settled(self, ev: PollReply | PollFailed) -> None:
        """The exchange in flight ended: free the line, answer its asker."""
        flight, self._in_flight = self._in_flight, None
        now = self._loop.time()
        users = self._users.get(ev.poll.addr, ())
        if isinstance(ev, PollReply):
            # the reply's length only counts in line time (a loop); encoding it again
            # (CRC and all) just to measure it cost every poll on a line of its own
            chars = len(ev.reply.encode()) if self.schedule.char_time else 0
            self.schedule.done(chars, now)
            for user in users:
                user.note_reply(now, ev.silent)
            if flight is not None and not flight.reply.done():
                flight.reply.set_result(ev.reply)
            elif flight is not None:  # cancelled after the send: an event must not be lost
                for user in users:
                    user.note_unclaimed(ev.reply)
            return
        self.schedule.done(0, now)
        for user in users:
            user.note_failure(ev.reason)
        if flight is not None and not flight.reply.done():
            flight.reply.set_exception(PollFailure(ev))

    def _arm(self) -> None:
        now = self._loop.time()
        deadlines = [
            d for d in (self._link.next_deadline(), self.schedule.next_time(now)) if d is not None
        ]
        deadline = min(deadlines) + _TIMER_RESOLUTION if deadlines else None
        timer = self._timer
        if timer is not None and (deadline is None or timer.when() != deadline):
            timer.cancel()
            self._timer = timer = None
        if deadline is not None and timer is None and self._lost is None:
            self._timer = self._loop.call_at(deadline, self._on_timer)


class PollFailure(Exception):
    """Every try of a poll failed; carries the link's event for the client to name."""

    def __init__(self, event: PollFailed) -> None:
        super().__init__(event.reason)
        self.event = event
