"""The SAS machine driver: :class:`~gateway.machines.driver.MachineDriver` over a SAS host client.

Tournament support is decided per machine from LP A0 (features byte 1, bit 3):

NATIVE (bit 3 set)
    LP 01 lock, LP 8C enter with the heat's credits and time, LP 02 to start; the EGM
    runs its timer and keeps separate tournament meters (LP 99); LP 8C exit at the end.

HOST_TIMED (bit 3 clear) -- the fallback real products use.  Credits are loaded with an
AFT in-house transfer (LP 72 type 00) as *restricted* (play-only) credits, agreed with
the core's poll table (:mod:`protocols.sas.aft`); restricted credits cannot be cashed out
(T12 and T18).  We chose AFT over legacy bonusing (LP 8A) because AFT reports the
outcome of every transfer, can be interrogated after a lost reply, and moves credits
back off the machine, which a heat needs at its end.  Sequence:

1. enter: LP 01 lock; LP 74 interrogate -- refuse if cashable credits are on the meter
   (sas.md §5), skip the load if exactly the heat's credits are already there (a retried
   call never loads twice); then, as the machine's registered AFT host (LP 73, the
   floor's registration key and POS ID), LP 74 lock and an LP 72 transfer of credits x
   denomination carrying the machine's asset number (:mod:`gateway.machines.sas_aft`).
2. the gateway times the heat and calls :meth:`unlock` / :meth:`lock` (LP 02 / 01).
3. score: LP 1A credit meter (T12); the other meters are the LP 1C differences since
   entry (credits won = end - start + wagered).
4. exit: LP 74 reads what is left (wins land on the cashable meter of a real EGM) and
   LP 72 type 80 sweeps all of it back to the host.

A machine that will not register (asset number 0, another host's registration, no
acknowledgement by the attendant, a refusal) is found by :meth:`SasDriver.register_aft`,
which the preflight calls for every host-timed machine: a blocker before the heat.

Beyond :class:`~gateway.machines.driver.MachineDriver` the driver offers two optional calls the
heat runner looks for: :meth:`SasDriver.prepare_unlock` / :meth:`SasDriver.prepare_lock`
(LP 02 / 01 framed ahead and fired for the whole bank in one tight loop: the heat starts
and ends on every machine together) and
:meth:`SasDriver.tournament_meters` (LP 99 alone: on a NATIVE machine the score follows
from the meters, so the heat's end needs one poll after the lock, not two).  It also keeps
its link counters (:meth:`SasDriver.link_counters`: polls, replies, timeouts, NACKs,
retries, carried across reconnects) for the gateway's metrics.

Malfunction exceptions are confirmed before they are reported.  A general-poll reply is
one byte with no CRC, so one flipped bit (00 -> 20, general tilt) would void a seat at
once.  :meth:`SasDriver.poll_events` therefore passes every drain through an
:class:`~gateway.machines.suspect_bytes.ExceptionGate`: a malfunction-class code (door
opened, tilt, power lost, out of service) is reported only once confirmed within a short
bounded window (3 further drains or 1.5 s, whichever ends first) -- by the same code from
a later general poll, by its partner (door closed after door opened, power applied after
power lost), or by a status read: for a slot door or a power loss the driver reads LP 1C
at once and compares the slot-door-opened and power-reset meters with their values at
tournament entry (no baseline after a restart: then only the polls confirm).  An
unconfirmed code is logged and counted (:attr:`SasDriver.suspect_bytes`), not reported:
the seat plays on.  The gate holds codes only while the machine is in a heat (from
tournament entry or an unlock to the exit); outside one, e.g. a preflight, a flipped bit
only blocks a check the technician repeats, so codes pass at once.  A machine that
really fails usually says so again or stops answering (a malfunction by itself, T20).

Errors from the client map onto the driver's: timeout -> LinkTimeout, lost link ->
LinkDown (the next call reconnects), garbage -> ProtocolFault, NACK / busy / unsupported /
refused transfer -> MachineRefused.  A field a host message cannot carry (a BCD value too
wide, a seconds field past 59: the builders in :mod:`protocols.sas` raise ``ValueError`` /
:class:`~protocols.sas.errors.SasError`) is MachineRefused too: nothing was sent, and
retrying cannot help, so the heat treats it as that machine's malfunction (T20).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any
from zoneinfo import ZoneInfo

from gateway.machines.capabilities import (
    AftRegistration,
    LinkCounters,
    PrizeMachineState,
    PrizeTransferResult,
)
from gateway.machines.driver import (
    DriverError,
    LinkDown,
    LinkTimeout,
    MachineEvent,
    MachineEventKind,
    MachineIdentity,
    MachineRefused,
    ProtocolFault,
    TournamentSupport,
)
from gateway.machines.sas_aft import AftHost, AftSession
from gateway.machines.sas_live import LiveMeter
from gateway.machines.scoring import credits_won
from gateway.machines.suspect_bytes import POWER_LOST, ExceptionGate
from gateway.scores import HeatScore, TournamentMeters
from protocols.sas import (
    Ack,
    EgmMessage,
    GamingMachineMetersReply,
    LongPoll,
    TournamentMode,
)
from protocols.sas.client import (
    SAS_MIN_SPACING,
    ClientStats,
    PreparedPoll,
    Report,
    SasClient,
    SasClientError,
    SasEventFlood,
    SasLinkLost,
    SasNotReady,
    SasProtocolFault,
    SasRefused,
    SasTimeout,
)
from protocols.sas.denominations import cents_per_credit
from protocols.sas.endpoint import Endpoint, parse_endpoint
from protocols.sas.errors import SasError
from protocols.sas.lines import shared_lines

VENUE_ZONE = ZoneInfo("Africa/Johannesburg")
SLOT_DOOR_OPENED = 0x11
log = logging.getLogger(__name__)

_K = MachineEventKind
EVENT_KINDS: dict[int, MachineEventKind] = {
    0x11: _K.DOOR_OPENED, 0x13: _K.DOOR_OPENED, 0x15: _K.DOOR_OPENED,
    0x19: _K.DOOR_OPENED, 0x1D: _K.DOOR_OPENED,
    0x12: _K.DOOR_CLOSED, 0x14: _K.DOOR_CLOSED, 0x16: _K.DOOR_CLOSED,
    0x1A: _K.DOOR_CLOSED, 0x1E: _K.DOOR_CLOSED,
    0x17: _K.POWER_APPLIED, 0x18: _K.POWER_LOST,
    0x20: _K.TILT,
    0x51: _K.HANDPAY_PENDING, 0x52: _K.HANDPAY_RESET,
    0x7E: _K.GAME_STARTED, 0x7F: _K.GAME_ENDED,
    0x84: _K.OPERATOR_MENU, 0x85: _K.OPERATOR_MENU,
    0x86: _K.OUT_OF_SERVICE,
    0x70: _K.QUEUE_OVERFLOW,
}  # fmt: skip
"""SAS exception code -> the gateway's event vocabulary (others become OTHER)."""


def driver_error(
    exc: SasClientError | SasError | OSError | TimeoutError | ValueError, machine_id: str
) -> DriverError:
    """The :mod:`gateway.machines.driver` exception for a client, connection or field error."""
    text = f"machine {machine_id}: {exc}"
    if isinstance(exc, SasTimeout | TimeoutError):
        return LinkTimeout(text)
    if isinstance(exc, SasLinkLost | OSError):
        return LinkDown(text)
    if isinstance(exc, SasEventFlood):
        # The machine answers, with events faster than its link drains them (a player's
        # backlog): not a fault of the machine or the line; a later read gets through.
        return DriverError(text)
    if isinstance(exc, SasProtocolFault):
        return ProtocolFault(text)
    if isinstance(exc, SasRefused):
        return MachineRefused(text)
    if isinstance(exc, SasNotReady):
        return DriverError(text)  # nothing sent: the caller takes the ordinary path
    if isinstance(exc, SasError | ValueError):
        # A message builder refused a field (reply decoding errors arrive as
        # SasProtocolFault): nothing was sent and a retry would fail the same way.
        return MachineRefused(f"{text} (field refused, nothing sent)")
    return ProtocolFault(text)


# A locked machine's backlog of real-time events is finite: a score's LP 1A may meet
# that many floods of events (SasEventFlood) before its reply.
BACKLOG_READS = 4


async def _credits_through_backlog(c: SasClient) -> int:
    """LP 1A after the heat's lock: play has stopped, so a backlog of events ahead of the
    reply drains; each flood's events are held for the next drain."""
    for _ in range(BACKLOG_READS - 1):
        try:
            return await c.credits()
        except SasEventFlood:
            continue
    return await c.credits()


class SasDriver:
    """One machine reached over SAS (TCP through an interface board, or a serial loop)."""

    def __init__(
        self,
        machine_id: str,
        endpoint: Endpoint,
        *,
        zone: ZoneInfo = VENUE_ZONE,
        min_spacing: float = SAS_MIN_SPACING,
        connect_seconds: float = 5.0,
        aft_host: AftHost | None = None,
    ) -> None:
        self.machine_id = machine_id
        self._aft = AftSession(machine_id, aft_host)
        self.endpoint = endpoint
        self.zone = zone
        self._paced_spacing = min_spacing
        self.connect_seconds = connect_seconds
        self._client: SasClient | None = None
        self._display_quirks: dict[str, None] = {}  # QuirkReporter: seen, in order
        self._support: TournamentSupport | None = None
        self._start_meters: GamingMachineMetersReply | None = None
        self._start_credits = 0
        # LP 1C at tournament entry: the slot-door and power-reset meters confirm a
        # suspect exception byte (module docstring).
        self._status_base: GamingMachineMetersReply | None = None
        self._gate = ExceptionGate(on_suspect=self._log_suspect)
        self._in_heat = False  # the gate holds malfunction codes only while seated in a heat
        self._earlier = LinkCounters()  # counters of the clients this driver closed
        # Real-time event reporting (capabilities.LiveCredits): wanted for this heat,
        # supported by the machine (None: not asked yet), the meter it keeps, and the
        # events a base read met (reported, but already in the base).
        self._live_wanted = False
        self._live_supported: bool | None = None
        self._live = LiveMeter()
        self._counted: list[Report] = []
        self._live_listener: Callable[[int], None] | None = None

    @property
    def min_spacing(self) -> float:
        """The gap this driver keeps between two polls to its machine now: the paced
        200 ms, or the 40 ms an EGM reporting in real time supports (capabilities.PacedLink)."""
        client = self._client
        if client is None or client.closed:
            return self._paced_spacing
        return client.min_spacing

    @property
    def suspect_bytes(self) -> int:
        """Malfunction-class exception bytes never confirmed (module docstring)."""
        return self._gate.suspects

    def _log_suspect(self, code: int) -> None:
        log.warning(
            "machine %s: exception %02X from one general poll not confirmed; "
            "counted as a suspect byte, not a malfunction",
            self.machine_id,
            code,
        )

    @property
    def stats(self) -> ClientStats | None:
        """The open link's counters (polls, retries, shortest gap between polls), if any."""
        return self._client.stats if self._client is not None else None

    def link_counters(self) -> LinkCounters:
        """Polls, replies, timeouts, NACKs and retries since the driver was made, across
        reconnects (each client counts from zero; the closed ones are carried)."""
        client = self._client
        return self._earlier if client is None else self._earlier + _counters(client.stats)

    def link_connected(self) -> bool:
        return self._client is not None and not self._client.closed

    def _retire(self, client: SasClient) -> None:
        self._earlier = self._earlier + _counters(client.stats)

    @classmethod
    def from_uri(cls, machine_id: str, endpoint_uri: str) -> SasDriver:
        return cls(machine_id, parse_endpoint(endpoint_uri))

    # -- connection ------------------------------------------------------------------------
    async def open(self) -> None:
        async with self._errors():
            await self._connected()

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            self._retire(client)
            await client.close()

    async def _connected(self) -> SasClient:
        """The client, reconnecting first if the link was lost."""
        client = self._client
        if client is None or client.closed:
            if client is not None:
                self._client = None
                self._retire(client)
            client = await shared_lines().client(
                self.endpoint,
                connect_seconds=self.connect_seconds,
                min_spacing=self._paced_spacing,
            )
            self._client = client
            self._live.lose()  # a new connection starts with real-time reporting off
            client.on_report = self._on_report
        return client

    def _on_report(self, report: Report) -> None:
        """Every event moves the live meter as it is read (once each, wherever it was
        read); a base read after it sets the meter outright."""
        before = self._live.value
        self._live.apply(report)
        value, listener = self._live.value, self._live_listener
        if listener is not None and value is not None and value != before:
            listener(value)

    @asynccontextmanager
    async def _errors(self) -> AsyncIterator[None]:
        try:
            yield
        except (SasClientError, SasError, OSError, TimeoutError, ValueError) as exc:
            raise driver_error(exc, self.machine_id) from exc

    async def support(self) -> TournamentSupport:
        async with self._errors():
            return await self._support_mode(await self._connected())

    async def _support_mode(self, client: SasClient) -> TournamentSupport:
        if self._support is None:
            caps = await client.capabilities()
            self._support = (
                TournamentSupport.NATIVE if caps.tournament else (TournamentSupport.HOST_TIMED)
            )
        return self._support

    # -- AftRegistrar ----------------------------------------------------------------------
    def use_aft_host(self, registration_key: str, pos_id: int) -> None:
        """The floor's AFT registration key and POS ID (before the first transfer)."""
        self._aft = AftSession(self.machine_id, AftHost.from_floor(registration_key, pos_id))

    async def register_aft(self) -> AftRegistration:
        """LP 73: the asset number and registration, registered to us if it was not
        (:mod:`gateway.machines.sas_aft`); a refusal comes back with its reason."""
        async with self._errors():
            return await self._aft.register(await self._connected())

    # -- PrizeTransfers (docs/rules.md#p3 to #p5) -----------------------------------------
    async def prize_state(self) -> PrizeMachineState:
        """P3's facts; a machine seated in a heat by this driver is in tournament mode."""
        async with self._errors():
            c = await self._connected()
            state = await self._aft.prize_state(c)
            if self._in_heat or self._start_meters is not None:
                return dataclasses.replace(state, in_tournament=True)
            return state

    async def credit_prize(
        self, transaction_id: str, cents: int, expiration_days: int
    ) -> PrizeTransferResult:
        async with self._errors():
            c = await self._connected()
            return await self._aft.credit_prize(c, transaction_id, cents, expiration_days)

    async def read_prize_transfer(self, transaction_id: str, cents: int) -> PrizeTransferResult:
        async with self._errors():
            c = await self._connected()
            return await self._aft.read_prize_transfer(c, transaction_id, cents)

    def quirks(self) -> list[str]:
        """QuirkReporter: display fields kept as received (LP 1F, 54), and bytes the
        machine sent after a reply, each kind once (docs/sas.md, real machines)."""
        out = list(self._display_quirks)
        client = self._client
        seen: set[tuple[int, int]] = set()
        for t in () if client is None else client.trailing:
            code = t.poll.encode()[1] if isinstance(t.poll, LongPoll) else -1
            if (code, len(t.data)) in seen:
                continue
            seen.add((code, len(t.data)))
            poll = f"LP {code:02X}" if code >= 0 else "general poll"
            out.append(f"{poll}: {len(t.data)} byte(s) after the reply ({t.data.hex(' ')})")
        return out

    # -- MachineDriver ---------------------------------------------------------------------
    async def identity(self) -> MachineIdentity:
        async with self._errors():
            c = await self._connected()
            info = await c.machine_info()
            version = await c.version()
            support = await self._support_mode(c)
        for code, reply in (("1F", info), ("54", version)):
            for q in reply.quirks:  # display fields kept as received (never a failure)
                self._display_quirks[f"LP {code}: {q.describe()} (kept as received)"] = None
        return MachineIdentity(
            game_id=info.game_id,
            additional_id=info.additional_id,
            denomination_code=info.denomination,
            max_bet=info.max_bet,
            paytable_id=info.paytable_id,
            base_percent=info.base_percent,
            protocol_version=version.version,
            serial_number=version.serial,
            tournament=support,
        )

    async def credits(self) -> int:
        async with self._errors():
            c = await self._connected()
            return await self._live_base(c) if c.real_time else await c.credits()

    # -- capabilities.LiveCredits ----------------------------------------------------------
    async def start_live_credits(self) -> bool:
        """LP 0E on, then LP 1A as the base (:mod:`gateway.machines.sas_live`).  A machine
        that stays silent to LP 0E has no real-time reporting: False, asked once."""
        if self._live_supported is False:
            return False
        async with self._errors():
            return await self._start_live(await self._connected())

    async def _start_live(self, c: SasClient) -> bool:
        if not c.real_time:
            try:
                await c.real_time_reporting(True)
            except (SasTimeout, SasRefused):
                self._live_supported = False
                log.info(
                    "machine %s: no real-time event reporting; credits by LP 1A", self.machine_id
                )
                return False
        self._live_supported = self._live_wanted = True
        await self._live_base(c)
        return True

    async def _live_base(self, c: SasClient) -> int:
        try:
            credits = await c.credits()
        except SasEventFlood:
            # No reply yet under a player's backlog of events: each moved the live meter
            # as it was read, and they stay held for the next drain's games.  The base
            # waits for a read that gets through.
            if self._live.value is None:
                raise
            return self._live.value
        self._counted += c.take_held()  # met by this read: in its value already
        self._live.base(credits)
        return credits

    def live_credits(self) -> int | None:
        c = self._client
        return self._live.value if c is not None and c.real_time else None

    def follow_live_credits(self, listener: Callable[[int], None] | None) -> None:
        self._live_listener = listener

    async def lock(self) -> None:
        async with self._errors():
            await (await self._connected()).lock()

    async def unlock(self) -> None:
        self._in_heat = True  # also a heat resumed after a restart (no entry seen)
        async with self._errors():
            await (await self._connected()).unlock()

    def prepare_unlock(self) -> Callable[[], Awaitable[None]]:
        """LP 02 framed now; the returned trigger sends it synchronously and returns an
        awaitable for the ACK.  Needs an open, idle link (else :class:`LinkDown` /
        :class:`DriverError`, nothing sent); the heat runner then unlocks the plain way."""
        trigger = self._prepare(lambda c: c.prepare_unlock(), "LP 02")
        self._in_heat = True
        return trigger

    def prepare_lock(self) -> Callable[[], Awaitable[None]]:
        """LP 01 framed now, fired like :meth:`prepare_unlock` (the heat's end)."""
        return self._prepare(lambda c: c.prepare_lock(), "LP 01")

    def _prepare(
        self, make: Callable[[SasClient], PreparedPoll], name: str
    ) -> Callable[[], Awaitable[None]]:
        client = self._client
        if client is None or client.closed:
            raise LinkDown(f"machine {self.machine_id}: link not open")
        try:
            prepared = make(client)
        except (SasError, ValueError) as exc:  # a field the poll cannot carry
            raise driver_error(exc, self.machine_id) from exc

        def trigger() -> Coroutine[Any, Any, None]:
            try:
                pending = prepared.fire()
            except (SasClientError, SasError, ValueError) as exc:
                raise driver_error(exc, self.machine_id) from exc
            return self._acked(pending, name)

        return trigger

    async def _acked(self, pending: Awaitable[EgmMessage], name: str) -> None:
        async with self._errors():
            reply = await pending
        if not isinstance(reply, Ack):
            raise ProtocolFault(f"machine {self.machine_id}: {type(reply).__name__} to {name}")

    async def enter_tournament(self, credits: int, seconds: int) -> None:
        if credits <= 0 or seconds <= 0:
            raise MachineRefused(f"machine {self.machine_id}: heat needs credits and time > 0")
        self._in_heat = True
        async with self._errors():
            c = await self._connected()
            native = await self._support_mode(c) is TournamentSupport.NATIVE
            if native:  # a field LP 8C cannot carry refuses here, before the machine is locked
                TournamentMode.enter(c.address, 0, seconds, credits)
            await c.lock()
            if native:
                await c.enter_tournament(credits, seconds)  # EGM refuses on cashable credits
                self._start_credits = credits
                self._status_base = await c.machine_meters()
                return
            await self._load_restricted(c, credits)
            self._status_base = self._start_meters

    async def _load_restricted(self, c: SasClient, credits: int) -> None:
        cents = await self._cents_per_credit(c)
        if not (await c.capabilities()).aft:
            raise MachineRefused(
                f"machine {self.machine_id}: neither tournament mode nor AFT; cannot run a heat"
            )
        status = await c.aft_status()
        if status.cashable_cents or status.nonrestricted_cents:
            # sas.md §5: never start a heat with cashable credits on the machine
            raise MachineRefused(f"machine {self.machine_id}: cashable credits on the meter")
        if status.restricted_cents == credits * cents:
            pass  # already loaded by an earlier try of this call
        elif status.restricted_cents:
            raise MachineRefused(
                f"machine {self.machine_id}: other restricted credits on the meter"
            )
        else:
            await self._aft.load_restricted(c, credits * cents)
        self._start_meters = await c.machine_meters()
        self._start_credits = credits

    async def _cents_per_credit(self, c: SasClient) -> int:
        info = await c.machine_info()
        cents = cents_per_credit(info.denomination)
        if cents is None:
            raise MachineRefused(
                f"machine {self.machine_id}: denomination code {info.denomination:02X} "
                "is not a whole number of cents; cannot load credits"
            )
        return cents

    async def exit_tournament(self) -> None:
        self._status_base = None  # the heat is over: no seat to confirm a fault for
        self._in_heat = False
        async with self._errors():
            c = await self._connected()
            if c.real_time:  # the live display is over: one-byte exceptions again
                await c.real_time_reporting(False)
            elif self._live_supported is None:  # not asked since a restart: unknown
                self._live_supported = await c.end_real_time_reporting()
            self._live_wanted = False
            self._live.lose()
            await c.lock()
            if await self._support_mode(c) is TournamentSupport.NATIVE:
                await c.exit_tournament()
                return
            await self._aft.sweep(c)
            self._start_meters = None

    async def heat_score(self) -> HeatScore:
        async with self._errors():
            c = await self._connected()
            credits = await _credits_through_backlog(c)  # the score is the credit meter (T12)
            if await self._support_mode(c) is TournamentSupport.NATIVE:
                t = await c.tournament_meters()
                meters = TournamentMeters(
                    t.games_played, t.games_won, t.credits_wagered, t.credits_won
                )
                return HeatScore(credits=credits, meters=meters)
            now = await c.machine_meters()
        start = self._start_meters
        if start is None:  # entry not seen by this driver (e.g. after a restart)
            return HeatScore(credits, TournamentMeters(0, 0, 0, 0))
        wagered = now.coin_in - start.coin_in
        return HeatScore(
            credits=credits,
            meters=TournamentMeters(
                games_played=now.games_played - start.games_played,
                games_won=now.games_won - start.games_won,
                credits_wagered=wagered,
                credits_won=max(0, credits_won(self._start_credits, wagered, credits)),
            ),
        )

    # -- capabilities.HeatBaseline ---------------------------------------------------------
    def heat_baseline(self) -> dict[str, int] | None:
        start = self._start_meters
        if start is None:
            return None
        meters = {k: int(v) for k, v in dataclasses.asdict(start).items() if k != "addr"}
        return meters | {"start_credits": self._start_credits}

    def restore_heat_baseline(self, baseline: dict[str, int]) -> None:
        if self._start_meters is not None:
            return
        try:
            fields = {f.name for f in dataclasses.fields(GamingMachineMetersReply)} - {"addr"}
            meters = GamingMachineMetersReply(
                self.endpoint.address, **{f: int(baseline[f]) for f in fields}
            )
            start_credits = int(baseline["start_credits"])
        except (KeyError, TypeError, ValueError):
            log.warning("machine %s: journaled baseline unreadable: %r", self.machine_id, baseline)
            return
        self._start_meters = meters
        self._start_credits = start_credits
        self._status_base = self._status_base or meters
        self._in_heat = True

    async def tournament_meters(self) -> TournamentMeters:
        """LP 99 alone: the four tournament meters of a NATIVE machine (one poll).

        The heat runner derives the score from them (starting credits - wagered + won)
        and reads the LP 1A credit meter afterwards as a cross-check.  A HOST_TIMED
        machine keeps no tournament meters: :class:`MachineRefused`, use heat_score().
        """
        async with self._errors():
            c = await self._connected()
            if await self._support_mode(c) is not TournamentSupport.NATIVE:
                raise MachineRefused(
                    f"machine {self.machine_id}: no tournament meters (host-timed)"
                )
            t = await c.tournament_meters()
        return TournamentMeters(t.games_played, t.games_won, t.credits_wagered, t.credits_won)

    async def read_clock(self) -> dt.datetime:
        async with self._errors():
            wall = await (await self._connected()).read_clock()
        return wall.replace(tzinfo=self.zone)  # EGM clocks keep venue wall time

    async def set_clock(self, when: dt.datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("set_clock needs an aware datetime")
        wall = when.astimezone(self.zone).replace(tzinfo=None, microsecond=0)
        async with self._errors():
            await (await self._connected()).set_clock(wall)

    async def poll_events(self) -> list[MachineEvent]:
        async with self._errors():
            c = await self._connected()
            if self._live_wanted and not c.real_time:
                await self._start_live(c)  # reconnected: turn the reporting on again
            reports = await c.reports()  # each moved the live meter as it was read
            if c.drain_credits is not None:  # read after these events: a fresh base
                self._live.base(c.drain_credits)
            codes = [r.code for r in (*self._counted, *reports)]
            self._counted = []
            if self._in_heat:
                codes = self._gate.admit(codes)
        codes += await self._confirm_by_status(c)
        at = dt.datetime.now(dt.UTC)
        return [
            MachineEvent(self.machine_id, EVENT_KINDS.get(code, _K.OTHER), at, code)
            for code in codes
        ]

    async def _confirm_by_status(self, c: SasClient) -> list[int]:
        """A held slot-door or power-lost byte confirmed by the LP 1C meters (one read);
        the codes confirmed.  A failed read confirms nothing: the drained codes must not
        be lost with it, and the next drains can still confirm."""
        base, held = self._status_base, self._gate.held
        if base is None or not ({SLOT_DOOR_OPENED, POWER_LOST} & set(held)):
            return []
        try:
            now = await c.machine_meters()
        except (SasClientError, SasError, OSError, TimeoutError, ValueError):
            return []
        shown = {
            SLOT_DOOR_OPENED: now.slot_door_opened > base.slot_door_opened,
            POWER_LOST: now.power_resets > base.power_resets,
        }
        confirmed = [code for code, seen in shown.items() if seen and self._gate.confirm(code)]
        if confirmed:
            self._status_base = now  # a later byte needs the meter to move again
        return confirmed


def _counters(stats: ClientStats) -> LinkCounters:
    return LinkCounters(
        polls=stats.polls,
        replies=stats.replies,
        timeouts=stats.timeouts,
        nacks=stats.nacks,
        retries=stats.retries,
        failures=stats.failures,
    )
