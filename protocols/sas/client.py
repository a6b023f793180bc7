"""Async SAS host client: typed polls to one EGM over any carrier.

The client is a thin asyncio shell around the core's :class:`HostLink` (h11 style): bytes
from the carrier go into the link, the link's deadlines become one event-loop timer, and
the link's events resolve one future per poll.  The link does the SAS work -- framing,
implied ACK, repeat-as-NACK with the same data, up to 3 tries, the reply timeout and the
inter-byte gap; the client adds what needs a clock and an event loop:

* **Poll spacing.**  Requests to one EGM are at least ``min_spacing`` apart (SAS: at most
  one poll every 200 ms, 40 ms for EGMs with real-time events; sas.md §1).  The spacing
  is measured between request starts; a repeat inside one request (the SAS NACK) follows
  the link's own timing, as the protocol intends.
* **Busy.**  ``addr 00`` means "ask again later": the request is re-sent after the spacing,
  up to ``busy_tries`` times in all, then :class:`SasBusy`.
* **Prepared polls.**  :meth:`SasClient.prepare` frames a poll ahead of a moment that
  matters (the heat start); :meth:`PreparedPoll.fire` then writes it synchronously, with
  no await before the write, so a caller can send to many EGMs in one tight loop.  It
  refuses (:class:`SasNotReady`) rather than break the spacing or interleave two polls.
* **Capabilities.**  :meth:`SasClient.capabilities` reads LP A0 once per machine (bit 3 of
  features byte 1 = tournament mode); tournament polls to a machine without it raise
  :class:`SasUnsupported` instead of timing out against a silent EGM.
* **Typed errors**, one per thing a caller does differently: :class:`SasTimeout`,
  :class:`SasLinkLost`, :class:`SasProtocolFault` (transient) and :class:`SasRefused` /
  :class:`SasBusy` / :class:`SasUnsupported` (the machine said no).  The gateway's SAS
  driver maps them onto :mod:`gateway.machines.driver`'s exceptions.

Over TCP an interface board adds network latency, so :data:`TCP_SETTINGS` widens the
20 ms reply timeout and the 5 ms gap; a serial loop uses the SAS values.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from protocols.sas.aft import (
    TRANSFER_FROM_MACHINE_OK,
    TRANSFER_TO_MACHINE_OK,
    AftInterrogate,
    AftLockCode,
    AftLockRequest,
    AftStatusReply,
    AftTransfer,
    AftTransferReply,
    AftTransferStatus,
    describe_transfer_status,
)
from protocols.sas.aft_registration import AftRegister, AftRegistrationCode, AftRegistrationReply
from protocols.sas.carriers import Carrier
from protocols.sas.carriers.tap import CaptureSink, TapCarrier
from protocols.sas.codec import FramedPoll, frame_poll
from protocols.sas.endpoint import SERIAL_SCHEME, Endpoint, parse_endpoint
from protocols.sas.framer import TrailingBytes
from protocols.sas.line import LineLost, LineNotReady, PollFailure, SasLine
from protocols.sas.link import LinkSettings, PollFailed
from protocols.sas.messages import (
    AFT_SUPPORTED_BIT,
    TOURNAMENT_SUPPORTED_BIT,
    Ack,
    Busy,
    CurrentCreditsReply,
    DateTimeReply,
    EgmMessage,
    EnabledFeaturesReply,
    ExceptionReply,
    GamingMachineMetersReply,
    GeneralPoll,
    HostMessage,
    LongPoll,
    MachineInfoReply,
    MetersReply,
    SendCurrentCredits,
    SendDateTime,
    SendEnabledFeatures,
    SendGamingMachineMeters,
    SendMachineInfo,
    SendMeters,
    SendTournamentMeters,
    SendVersion,
    SetDateTime,
    Shutdown,
    Startup,
    TournamentMetersReply,
    TournamentMode,
    VersionReply,
)
from protocols.sas.real_time import RealTimeEvent, RealTimeLiveness, RealTimeReporting

log = logging.getLogger(__name__)

SAS_MIN_SPACING = 0.200  # seconds between polls to one EGM (sas.md §1)
SAS_MIN_SPACING_REAL_TIME = 0.040  # for EGMs with real-time event reporting
TCP_SETTINGS = LinkSettings(reply_timeout=0.200, inter_byte_gap=0.050)
SERIAL_SETTINGS = LinkSettings()
MAX_EVENTS_PER_DRAIN = 64  # bound on general polls in one drain (the queue holds >= 20)


def settings_for(endpoint: Endpoint) -> LinkSettings:
    """Serial loops get SAS's own timing; a TCP board's network needs wider windows."""
    return SERIAL_SETTINGS if endpoint.scheme == SERIAL_SCHEME else TCP_SETTINGS


class SasClientError(Exception):
    """Base of the client's errors."""


class SasTimeout(SasClientError):
    """No usable reply after every try (the EGM stayed silent)."""


class SasLinkLost(SasClientError):
    """The carrier closed (socket dropped, port gone)."""


class SasProtocolFault(SasClientError):
    """Replies kept arriving corrupted (bad CRC, wrong length, garbage)."""


class SasEventFlood(SasProtocolFault):
    """A real-time EGM answered a long poll with :data:`MAX_EVENTS_PER_DRAIN` events in a
    row and no reply: it reports faster than its link drains (SAS 6.02 §12.4).  Every
    event read is held for :meth:`SasClient.reports` (none lost); the poll has no answer
    yet."""


class SasRefused(SasClientError):
    """The EGM answered NACK to every try, or refused in its own reply."""


class SasBusy(SasRefused):
    """The EGM answered busy to every try."""


class SasUnsupported(SasRefused):
    """The EGM does not support what was asked (per its LP A0 features)."""


class SasNotReady(SasClientError):
    """A prepared poll could not leave at once: another poll is in flight or queued, or
    the poll spacing has not run out.  Nothing was sent; use :meth:`SasClient.request`."""


class PreparedPoll:
    """A poll framed ahead of time; :meth:`fire` sends it at once (see the module doc)."""

    __slots__ = ("_client", "fired", "framed", "poll")

    def __init__(self, client: SasClient, framed: FramedPoll) -> None:
        self._client = client
        self.framed = framed
        self.poll = framed.poll
        self.fired = False

    def fire(self) -> Coroutine[Any, Any, EgmMessage]:
        """Write the poll now (synchronously) and return a coroutine for the EGM's answer.
        Raises :class:`SasNotReady` or :class:`SasLinkLost` without sending anything."""
        if self.fired:
            raise RuntimeError("a prepared poll is fired once")
        waiter = self._client._fire(self.framed)
        self.fired = True
        return self._client._settle_prepared(self.poll, waiter)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What one EGM says it can do (LP A0, game 0)."""

    tournament: bool  # features byte 1 bit 3
    aft: bool  # features byte 2 bit 6
    features: bytes


@dataclass(slots=True)
class ClientStats:
    """Plain counters of one client's traffic, bumped as the link's events go by (the
    gateway reads them when asked; nothing here knows who reads them)."""

    polls: int = 0  # requests sent (a repeat inside one request is a retry, not a poll)
    replies: int = 0  # requests answered (data reply, ACK, busy or exception code)
    timeouts: int = 0  # tries that got no (complete) reply in time
    nacks: int = 0  # tries the EGM answered with NACK
    corrupt: int = 0  # tries whose reply was garbled (bad CRC, wrong length)
    retries: int = 0
    failures: int = 0
    busy: int = 0
    chirps: int = 0
    stray_errors: int = 0
    trailing_bytes: int = 0  # bytes the EGM sent after a complete reply (a quirk)
    silent: int = 0  # RTE mode: general polls met with silence on every try
    probes: int = 0  # RTE mode: long polls sent to learn the EGM still answers
    min_gap: float | None = None  # shortest time between two requests' first sends (s)


_R = TypeVar("_R", bound=EgmMessage)
Report = ExceptionReply | RealTimeEvent
"""What a general poll reads: one exception byte, or a real-time event frame."""


class SasClient:
    """The host's conversation with one EGM at ``address``.

    Built on a carrier, the client has a private :class:`~protocols.sas.line.SasLine`
    (one EGM behind its own board).  Built on a line, it shares that line's port with
    the other EGMs of a multi-drop loop (see :class:`~protocols.sas.lines.LinePool`).
    """

    def __init__(
        self,
        carrier: Carrier | SasLine,
        address: int = 1,
        *,
        settings: LinkSettings = TCP_SETTINGS,
        min_spacing: float = SAS_MIN_SPACING,
        busy_tries: int = 3,
    ) -> None:
        if not 1 <= address <= 127:
            raise ValueError(f"SAS address must be 1..127, not {address}")
        if busy_tries < 1:
            raise ValueError("busy_tries must be >= 1")
        line = carrier if isinstance(carrier, SasLine) else SasLine(carrier, settings=settings)
        self.address = address
        self.line = line
        self.carrier = line.carrier
        self._min_spacing = min_spacing
        self._paced_spacing = min_spacing  # restored when real-time reporting ends
        self.busy_tries = busy_tries
        self.stats = ClientStats()
        self.capabilities_cache: Capabilities | None = None
        self._loop = asyncio.get_running_loop()
        self._lock = asyncio.Lock()
        self.last_poll_at = 0.0  # loop time the latest request went out
        self.chirps: deque[float] = deque(maxlen=32)  # loop-break chirps seen (loop time)
        # Bytes the EGM sent after a complete reply (the reply stood): the latest few,
        # for a technician's probe (the count is in ``stats``).
        self.trailing: deque[TrailingBytes] = deque(maxlen=32)
        # Exceptions read outside reports(): by capabilities(), and the events a
        # real-time EGM sent in place of a long poll's reply.
        self._held: deque[Report] = deque()
        self._left = False
        # RTE mode: whether silence is no activity (protocols.sas.real_time), and
        # whether the latest settled poll met silence on every try.
        self._liveness: RealTimeLiveness | None = None
        self._silent = False
        # The credit meter the latest long-poll drain read (RTE mode), after its events.
        self.drain_credits: int | None = None
        # Told of every exception or event once, as it is read (a general poll's reply,
        # an event in place of a long poll's reply, the reply of a cancelled poll), before
        # it is returned or held: a meter followed from events then moves poll by poll,
        # not only when a whole drain returns.
        self.on_report: Callable[[Report], None] | None = None
        line.join(address, self, min_spacing)

    @classmethod
    async def connect(
        cls,
        endpoint: str | Endpoint,
        *,
        connect_seconds: float = 5.0,
        settings: LinkSettings | None = None,
        min_spacing: float = SAS_MIN_SPACING,
        busy_tries: int = 3,
        capture: CaptureSink | None = None,
    ) -> SasClient:
        """Open ``endpoint`` (a ``sas+tcp://`` or ``sas+serial://`` URI) on a line of its
        own and return a client for the address it names; serial loops get the SAS
        timing, TCP the wider one.  EGMs sharing a port use a :class:`LinePool`.
        ``capture``: record every byte both ways (:mod:`protocols.sas.carriers.tap`)."""
        ep = parse_endpoint(endpoint) if isinstance(endpoint, str) else endpoint
        carrier = await ep.open_carrier(connect_seconds=connect_seconds)
        if capture is not None:  # a thin tap: every byte both ways into the file
            carrier = TapCarrier(carrier, capture)
        return cls(
            carrier,
            ep.address,
            settings=settings or settings_for(ep),
            min_spacing=min_spacing,
            busy_tries=busy_tries,
        )

    @property
    def min_spacing(self) -> float:
        return self._min_spacing

    @min_spacing.setter
    def min_spacing(self, seconds: float) -> None:
        self._min_spacing = seconds
        self.line.schedule.add_address(self.address, seconds)

    @property
    def closed(self) -> bool:
        return self._left or self.line.closed

    @property
    def real_time(self) -> bool:
        """The EGM reports events in real time (LP 0E acknowledged): general polls are
        answered with event frames (:mod:`protocols.sas.real_time`)."""
        return self.address in self.line.real_time

    async def close(self) -> None:
        """Leave the line; the last EGM to leave closes the port."""
        if not self._left:
            self._left = True
            if self.line.leave(self.address, self):
                await self.line.close()

    async def __aenter__(self) -> SasClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- what the line reports for this address (LineUser) ---------------------------------
    def note_send(self, now: float) -> None:
        stats = self.stats
        if stats.polls:
            gap = now - self.last_poll_at
            if stats.min_gap is None or gap < stats.min_gap:
                stats.min_gap = gap
        stats.polls += 1
        self.last_poll_at = now

    def note_reply(self, now: float, silent: bool) -> None:
        self.stats.replies += 1
        self._silent = silent
        if silent:
            self.stats.silent += 1
        elif self._liveness is not None:
            self._liveness.answered(now)

    def note_unclaimed(self, reply: EgmMessage) -> None:
        """A reply whose request was cancelled after the send (a watcher stopped at a
        heat's end): the EGM takes the next poll as the implied ACK, so an event in it
        would be lost; held for the next :meth:`reports` instead."""
        if isinstance(reply, ExceptionReply | RealTimeEvent) and reply.code:
            self._read(reply)
            self._held.append(reply)

    def note_retry(self, reason: str) -> None:
        self.stats.retries += 1
        self._count_bad_try(reason)

    def note_failure(self, reason: str) -> None:
        self.stats.failures += 1
        self._count_bad_try(reason)

    def note_chirp(self, now: float) -> None:
        self.stats.chirps += 1
        self.chirps.append(now)

    def note_stray(self) -> None:
        self.stats.stray_errors += 1

    def note_trailing(self, trailing: TrailingBytes) -> None:
        self.stats.trailing_bytes += len(trailing.data)
        self.trailing.append(trailing)
        # info, not warning: a quirky machine does it on every poll (the count is kept)
        log.info(
            "SAS address %d: %d byte(s) after the reply to LP %s: %s",
            self.address,
            len(trailing.data),
            _name(trailing.poll),
            trailing.data.hex(" "),
            extra={
                "address": self.address,
                "poll": _name(trailing.poll),
                "trailing": trailing.data.hex(" "),
            },
        )

    def _count_bad_try(self, reason: str) -> None:
        stats = self.stats
        if reason == "timeout":
            stats.timeouts += 1
        elif reason == "nack":
            stats.nacks += 1
        else:
            stats.corrupt += 1

    # -- one poll --------------------------------------------------------------------------
    async def request(self, poll: HostMessage) -> EgmMessage:
        """Send ``poll`` and return the EGM's answer (data reply, ACK or exception code),
        honouring the poll spacing and retrying busy.  Raises a :class:`SasClientError`."""
        if poll.addr != self.address:
            raise ValueError(f"poll for address {poll.addr}, client is {self.address}")
        return await self._request(poll, self.busy_tries)

    async def _request(self, poll: HostMessage, tries: int) -> EgmMessage:
        async with self._lock:
            busy = events = 0
            while True:  # bounded: busy by ``tries``, events by the queue's bound
                reply = await self._exchange(poll)
                if isinstance(reply, RealTimeEvent) and isinstance(poll, LongPoll):
                    events += 1
                    self._hold(reply, events, poll)
                    continue  # ask again; the line's sync ahead of the repeat ACKs the event
                if not isinstance(reply, Busy):
                    return reply
                self.stats.busy += 1
                busy += 1
                if busy >= tries:
                    raise SasBusy(
                        f"address {self.address} busy to LP {_name(poll)} after {tries} tries"
                    )

    def _hold(self, event: RealTimeEvent, count: int, poll: HostMessage) -> None:
        """A real-time EGM reported ``event`` in place of ``poll``'s reply (SAS 6.02
        §12.3-12.4): keep it for the next :meth:`reports`; the poll goes again."""
        if event.code:
            self._read(event)
            self._held.append(event)
        # Held first: the next poll acknowledges this event (implied ACK), so raising
        # before keeping it would lose it.
        if count >= MAX_EVENTS_PER_DRAIN:
            raise SasEventFlood(
                f"address {self.address}: LP {_name(poll)} answered by events only "
                f"({count} in a row)"
            )

    def _read(self, report: Report) -> None:
        """An exception or event just read (once each): tell :attr:`on_report`."""
        if self.on_report is not None:
            self.on_report(report)

    def prepare(self, poll: HostMessage) -> PreparedPoll:
        """Frame ``poll`` now, send nothing; :meth:`PreparedPoll.fire` sends it later."""
        if poll.addr != self.address:
            raise ValueError(f"poll for address {poll.addr}, client is {self.address}")
        # framed now: a bad field raises here, and the burst sends without encoding
        return PreparedPoll(self, frame_poll(poll))

    def _fire(self, poll: FramedPoll) -> asyncio.Future[EgmMessage]:
        """The synchronous half of :meth:`_exchange`, for a prepared poll: refuse unless
        this EGM is free and out of its spacing; written at once when the line is free,
        else first in line after the poll that holds it (another EGM's, on a loop)."""
        if self.closed:
            raise SasLinkLost(f"link to address {self.address} is closed")
        if self._lock.locked():
            raise SasNotReady(f"address {self.address}: another poll is in flight")
        try:
            return self.line.fire(self.address, poll)
        except LineNotReady as exc:
            raise SasNotReady(str(exc)) from None
        except LineLost as exc:
            raise SasLinkLost(str(exc)) from None

    async def _settle_prepared(
        self, poll: HostMessage, waiter: asyncio.Future[EgmMessage]
    ) -> EgmMessage:
        reply = await self._answer(waiter)
        if isinstance(reply, RealTimeEvent) and isinstance(poll, LongPoll):
            self._hold(reply, 1, poll)  # an event first: ask again the ordinary way
            return await self._request(poll, self.busy_tries)
        if isinstance(reply, Busy):  # ask again after the spacing, as request() would
            self.stats.busy += 1
            if self.busy_tries == 1:
                raise SasBusy(f"address {self.address} busy to LP {_name(poll)} after 1 try")
            return await self._request(poll, self.busy_tries - 1)
        return reply

    async def _exchange(self, poll: HostMessage) -> EgmMessage:
        try:
            waiter = self.line.exchange(self.address, poll)
        except LineLost as exc:
            raise SasLinkLost(str(exc)) from None
        return await self._answer(waiter)

    async def _answer(self, waiter: asyncio.Future[EgmMessage]) -> EgmMessage:
        try:
            return await waiter
        except PollFailure as exc:
            raise _failure(exc.event, self.address) from None
        except LineLost as exc:
            raise SasLinkLost(str(exc)) from None

    async def _expect(self, poll: HostMessage, kind: type[_R]) -> _R:
        reply = await self.request(poll)
        if not isinstance(reply, kind):
            raise SasProtocolFault(
                f"address {self.address}: {type(reply).__name__} to LP {_name(poll)}, "
                f"expected {kind.__name__}"
            )
        return reply

    async def _command(self, poll: HostMessage) -> None:
        await self._expect(poll, Ack)

    # -- typed polls -----------------------------------------------------------------------
    async def report(self) -> Report:
        """One general poll: the exception at the head of the EGM's queue (code 0 = none),
        as one byte, or as an event frame with its data when the EGM reports in real
        time.  The next poll implicitly acknowledges it (the link handles that).

        In RTE mode silence is no activity only while the EGM is known to answer
        (:class:`~protocols.sas.real_time.RealTimeLiveness`): a long poll goes first when
        it has said nothing for a while (its events are held for :meth:`reports`), and a
        silent poll that cannot be trusted is :class:`SasTimeout`, as outside RTE mode."""
        live = self._live_check()
        if live is not None and live.probe_due(self._loop.time()):
            await self._probe()  # its value is not this drain's: events may follow
        reply = await self.request(GeneralPoll(self.address))
        if not isinstance(reply, ExceptionReply | RealTimeEvent):
            raise SasProtocolFault(
                f"address {self.address}: {type(reply).__name__} to a general poll"
            )
        if reply.code:
            self._read(reply)
        if live is not None and reply.code == 0:
            now = self._loop.time()
            if not self._silent:
                live.said_no_activity(now)
            elif not live.silence(now):
                self.stats.failures += 1
                quiet = now - live.last_answer
                raise SasTimeout(
                    f"address {self.address}: general poll failed (no reply; real-time "
                    f"reporting, nothing answered for {quiet:.1f} s)"
                )
        return reply

    def _live_check(self) -> RealTimeLiveness | None:
        """The liveness evidence while the EGM reports in real time (None otherwise)."""
        if not self.real_time:
            self._liveness = None
            return None
        if self._liveness is None:
            self._liveness = RealTimeLiveness(self._loop.time(), self._failure_after())
        return self._liveness

    def _failure_after(self) -> float:
        """How long a general poll takes to fail outside RTE mode: every try's wait."""
        s = self.line.settings
        return s.max_tries * (s.reply_timeout + s.byte_time)

    async def _probe(self) -> int | None:
        """LP 1A: the credits, after the events the EGM sends in place of the reply
        (held); a timeout after every try is the caller's failure.  Busy or NACK is an
        answer too (None: no credits), as is a flood of events (:class:`SasEventFlood`:
        those read are held)."""
        self.stats.probes += 1
        try:
            return await self.credits()
        except SasRefused:
            return None
        except SasEventFlood:
            # Events come faster than the link drains them (a player's backlog): those
            # held are this drain's; the rest come at the next.
            return None

    async def general_poll(self) -> int:
        """One general poll: the exception code at the head of the EGM's queue (0 = none)."""
        return (await self.report()).code

    async def reports(self, limit: int = MAX_EVENTS_PER_DRAIN) -> list[Report]:
        """General-poll until the queue is empty (no activity) or ``limit`` exceptions
        were read.  Those read earlier by other calls (see :meth:`capabilities`, and the
        events a real-time EGM sent in place of a reply) come first.  An EGM in RTE mode
        that is silent when idle is drained by one long poll instead (its events come in
        place of the reply, bounded by :data:`MAX_EVENTS_PER_DRAIN`)."""
        out = self.take_held()
        self.drain_credits = None
        live = self._live_check()
        if live is not None and live.drain_by_long_poll:
            # RTE mode: one long poll, its events first (RealTimeLiveness)
            self.drain_credits = await self._probe()
            return out + self.take_held()
        while len(out) < limit:
            reply = await self.report()
            out += self.take_held()  # met by a liveness probe, ahead of this reply
            if reply.code == 0x00:
                break
            out.append(reply)
        return out

    def take_held(self) -> list[Report]:
        """The exceptions read outside :meth:`reports` since it last ran (then forgotten)."""
        out = list(self._held)
        self._held.clear()
        return out

    async def events(self, limit: int = MAX_EVENTS_PER_DRAIN) -> list[int]:
        """:meth:`reports`, the exception codes alone."""
        return [r.code for r in await self.reports(limit)]

    async def real_time_reporting(self, enable: bool) -> None:
        """LP 0E: real-time event reporting on or off; from its ACK on, general polls are
        framed accordingly.  An EGM without it stays silent: :class:`SasTimeout`.

        While it is on, polls to the EGM may be 40 ms apart (sas.md §1: an EGM with
        real-time events supports the 40 ms rate), so the polls that drain several
        events, or ask again after an event answered in place of a reply, follow at
        once; the caller's own cadence is its affair."""
        await self._command(RealTimeReporting(self.address, enable))
        self._liveness = None  # the ACK is the first answer of a new evidence
        if enable:
            self.line.real_time.add(self.address)
            self._paced_spacing = self._min_spacing
            self.min_spacing = min(self._min_spacing, SAS_MIN_SPACING_REAL_TIME)
        else:
            self.line.real_time.discard(self.address)
            self.min_spacing = self._paced_spacing

    async def end_real_time_reporting(self) -> bool:
        """LP 0E off when this client does not know whether reporting is on (a new
        connection after the host restarted: a real EGM keeps reporting in real time
        across that).  Sent with replies framed as in real-time mode, which also takes a
        plain ACK; True if the EGM acknowledged, False if it has no such poll (silence)."""
        self.line.real_time.add(self.address)
        try:
            await self._command(RealTimeReporting(self.address, False))
        except (SasTimeout, SasRefused):
            return False
        finally:
            self.line.real_time.discard(self.address)
            self.min_spacing = self._paced_spacing
        return True

    async def lock(self) -> None:
        """LP 01: lock out play (a game in progress completes first)."""
        await self._command(Shutdown(self.address))

    async def unlock(self) -> None:
        """LP 02: enable play."""
        await self._command(Startup(self.address))

    def prepare_unlock(self) -> PreparedPoll:
        """LP 02 framed ahead, for the heat start (fire it, then expect an :class:`Ack`)."""
        return self.prepare(Startup(self.address))

    def prepare_lock(self) -> PreparedPoll:
        """LP 01 framed ahead, for the heat end (fire it, then expect an :class:`Ack`)."""
        return self.prepare(Shutdown(self.address))

    async def credits(self) -> int:
        return (await self._expect(SendCurrentCredits(self.address), CurrentCreditsReply)).credits

    async def machine_info(self) -> MachineInfoReply:
        return await self._expect(SendMachineInfo(self.address), MachineInfoReply)

    async def version(self) -> VersionReply:
        return await self._expect(SendVersion(self.address), VersionReply)

    async def features(self, game: int = 0) -> EnabledFeaturesReply:
        return await self._expect(SendEnabledFeatures(self.address, game), EnabledFeaturesReply)

    async def capabilities(self, *, refresh: bool = False) -> Capabilities:
        """The machine's capabilities (LP A0, read once and cached).

        An EGM that predates LP A0 stays silent to it; if it still answers a general poll
        the link is fine and the machine simply has no optional features (so heats run
        host-timed or not at all).  The exception code that general poll read is kept for
        the next :meth:`events`, never dropped.
        """
        if self.capabilities_cache is None or refresh:
            try:
                reply = await self.features(0)
                features = reply.features
            except SasTimeout:
                report = await self.report()  # raises again if the link is dead
                if report.code:
                    self._held.append(report)
                features = bytes(6)
            self.capabilities_cache = Capabilities(
                tournament=bool(features[0] & TOURNAMENT_SUPPORTED_BIT),
                aft=bool(features[1] & AFT_SUPPORTED_BIT),
                features=features,
            )
        return self.capabilities_cache

    async def read_clock(self) -> dt.datetime:
        """LP 7E: the EGM's wall clock (naive: EGMs keep no time zone)."""
        return (await self._expect(SendDateTime(self.address), DateTimeReply)).when

    async def set_clock(self, when: dt.datetime) -> None:
        """LP 7F: set the EGM's wall clock (naive venue wall time, whole seconds)."""
        await self._command(SetDateTime(self.address, when))

    async def meters(self) -> MetersReply:
        """LP 0F: cancelled credits, coin in/out, drop, jackpot, games played."""
        return await self._expect(SendMeters(self.address), MetersReply)

    async def machine_meters(self) -> GamingMachineMetersReply:
        """LP 1C: the eight gaming machine meters."""
        return await self._expect(SendGamingMachineMeters(self.address), GamingMachineMetersReply)

    async def _require_tournament(self) -> None:
        if not (await self.capabilities()).tournament:
            raise SasUnsupported(f"address {self.address}: no tournament mode (LP A0 bit 3 clear)")

    async def enter_tournament(
        self, credits: int, seconds: int, *, game: int = 0, pulses: bool = False
    ) -> None:
        """LP 8C: enter tournament mode with ``credits`` and a ``seconds`` timer.  The EGM
        refuses (NACK) while cashable credits are on it and answers busy while a game,
        tilt or handpay finishes (sas.md §5)."""
        await self._require_tournament()
        await self._command(TournamentMode.enter(self.address, game, seconds, credits, pulses))

    async def exit_tournament(self, *, game: int = 0) -> None:
        """LP 8C with time 00:00 and 0 credits [A]."""
        await self._require_tournament()
        await self._command(TournamentMode.exit(self.address, game))

    async def tournament_meters(self, game: int = 0) -> TournamentMetersReply:
        """LP 99: games played and won, credits wagered and won, in tournament mode."""
        await self._require_tournament()
        return await self._expect(SendTournamentMeters(self.address, game), TournamentMetersReply)

    # -- AFT (the host-timed fallback's credit loading) --------------------------------------
    async def aft_status(
        self,
        lock_code: int = AftLockCode.INTERROGATE,
        *,
        condition: int = TRANSFER_TO_MACHINE_OK | TRANSFER_FROM_MACHINE_OK,
        timeout_cs: int = 500,
    ) -> AftStatusReply:
        """LP 74: lock for a transfer (00) in the directions ``condition`` names, for
        ``timeout_cs`` hundredths of a second; cancel (80); or interrogate (FF)."""
        locking = lock_code == AftLockCode.REQUEST_LOCK
        poll = AftLockRequest(
            self.address, lock_code, condition if locking else 0, timeout_cs if locking else 0
        )
        return await self._expect(poll, AftStatusReply)

    async def aft_registration(self) -> AftRegistrationReply:
        """LP 73 FF: the registration status, the EGM's asset number, key and POS ID."""
        return await self._expect(AftRegister.read(self.address), AftRegistrationReply)

    async def aft_register(
        self, code: int, asset_number: int, registration_key: bytes, pos_id: int
    ) -> AftRegistrationReply:
        """LP 73 with a registration code (00 initialize, 01 register, 40 register with
        the operator's acknowledgement, 80 unregister: the key and POS ID are dropped)."""
        if code in (AftRegistrationCode.UNREGISTER, AftRegistrationCode.READ):
            poll = AftRegister(self.address, code)
        else:
            poll = AftRegister(self.address, code, asset_number, registration_key, pos_id)
        return await self._expect(poll, AftRegistrationReply)

    async def aft_send(self, transfer: AftTransfer) -> AftTransferReply:
        """LP 72: move funds and return the EGM's reply whatever its status (pending,
        refused ...): the caller decides (see :func:`~protocols.sas.aft.transfer_outcome`)."""
        return await self._expect(transfer, AftTransferReply)

    async def aft_interrogate(self, transaction_index: int = 0) -> AftTransferReply:
        """LP 72 interrogation: where transaction ``transaction_index`` (0 = the last) stands."""
        return await self._expect(AftInterrogate(self.address, transaction_index), AftTransferReply)

    async def aft_transfer(self, transfer: AftTransfer) -> AftTransferReply:
        """LP 72: move funds; raises :class:`SasRefused` unless the EGM reports a full
        transfer.  Re-sending the same transaction ID never moves money twice."""
        reply = await self.aft_send(transfer)
        if reply.transfer_status != AftTransferStatus.FULL_TRANSFER_OK:
            named = describe_transfer_status(reply.transfer_status)
            raise SasRefused(f"address {self.address}: funds transfer refused ({named})")
        return reply


def _name(poll: HostMessage) -> str:
    if isinstance(poll, GeneralPoll):
        return "general poll"
    return f"{poll.encode()[1]:02X}"


def _failure(ev: PollFailed, address: int) -> SasClientError:
    what = f"address {address}: LP {_name(ev.poll)} failed after {ev.tries} tries"
    if ev.reason == "timeout":
        return SasTimeout(f"{what} (no reply)")
    if ev.reason == "nack":
        return SasRefused(f"{what} (NACK)")
    return SasProtocolFault(f"{what} ({ev.error})")
