"""The emulated EGM's SAS face: the core's EGM-role link over a carrier, answering from
the machine model.

The model knows nothing of SAS; this module translates both ways:

* host polls -> model calls -> SAS replies (:meth:`SasFace.answer`), including the
  tournament rules of sas.md §5 as the model enforces them (refusals become NACK, or busy
  when the obstacle is transient: a game, tilt, handpay or open door that will clear);
* model events -> SAS exception codes queued for general polls (:data:`EXCEPTION_CODES`).

Polls the emulated machine does not support get no reply at all, as a real EGM stays
silent (sas.md §1): LP 8C and 95–99 when tournament mode is off, LP 2F always.  AFT
(LP 72, 73, 74) is answered by :mod:`emulators.sas_aft`: strict about registration and
the asset number unless its settings say the machine is lax.

Quirks (:class:`~emulators.sas_quirks.Quirks`, fixed per machine): ways real EGMs bend
SAS that a host must tolerate (LP 1F base percent in BCD, bytes after an ACK).

Fault injection (:class:`Faults`, settable at run time, e.g. from tests): no reply, late
reply, corrupted CRC, busy, chirp, dropped connection, power cycle.

Many machines in one process share a :class:`~emulators.reply_outbox.ReplyOutbox`, which
writes their replies together once a burst of polls has been acted on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import random
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

from emulators.machine import EmulatedMachine, Event, MachineRefusal, ModelEvent
from emulators.reply_outbox import ReplyOutbox
from emulators.sas_aft import AftSettings, EgmAft
from emulators.sas_quirks import Quirks
from protocols.sas import (
    Ack,
    AftInterrogate,
    AftLockRequest,
    AftRegister,
    AftRegistrationReply,
    AftStatusReply,
    AftTransfer,
    AftTransferReply,
    Busy,
    Chirp,
    CurrentCreditsReply,
    DateTimeReply,
    EgmLink,
    EgmMessage,
    EnabledFeaturesReply,
    GamingMachineMetersReply,
    GeneralPoll,
    HostMessage,
    LinkSettings,
    LongPoll,
    MachineInfoReply,
    MetersReply,
    Nack,
    PollHandled,
    ProtocolError,
    RealTimeEvent,
    RemoteHandpayReset,
    SasException,
    SendCurrentCredits,
    SendDateTime,
    SendEnabledFeatures,
    SendGamingMachineMeters,
    SendMachineInfo,
    SendMeters,
    SendTournamentMeter,
    SendTournamentMeters,
    SendVersion,
    SetDateTime,
    Shutdown,
    Startup,
    TournamentMeterReply,
    TournamentMetersReply,
    TournamentMode,
    VersionReply,
    encode_egm_message,
    escape,
)
from protocols.sas.carriers import Carrier
from protocols.sas.messages import AFT_SUPPORTED_BIT, TOURNAMENT_SUPPORTED_BIT

VENUE_ZONE = ZoneInfo("Africa/Johannesburg")

EXCEPTION_CODES: dict[Event, SasException] = {
    Event.SLOT_DOOR_OPENED: SasException.SLOT_DOOR_OPENED,
    Event.SLOT_DOOR_CLOSED: SasException.SLOT_DOOR_CLOSED,
    Event.POWER_LOST: SasException.AC_POWER_LOST,
    Event.POWER_APPLIED: SasException.AC_POWER_APPLIED,
    Event.TILT: SasException.GENERAL_TILT,
    Event.HANDPAY_PENDING: SasException.HANDPAY_PENDING,
    Event.HANDPAY_RESET: SasException.HANDPAY_RESET,
    Event.GAME_STARTED: SasException.GAME_STARTED,
    Event.GAME_ENDED: SasException.GAME_ENDED,
}
"""Model events that a SAS EGM reports as exceptions.  Lock, tournament and credit
changes have no exception: the host learns them from ACKs and polls (sas.md §4)."""


@dataclasses.dataclass(slots=True)
class Faults:
    """Fault switches for one emulated machine; flip them at any time, preferably with
    :meth:`SasFace.inject` (which also starts the chirp timer).

    ``no_reply``      the EGM ignores every poll (a dead interface or cable)
    ``reply_delay``   seconds to hold each reply back (beyond the host's timeout = late)
    ``corrupt_crc``   how many of the next data replies get a wrong CRC
    ``busy``          how many of the next long polls are answered busy (``addr 00``)
    ``chirp``         the EGM behaves as if the loop broke: it chirps its address
    ``flip_rate``     the share (0..1) of reply bytes that get one bit flipped (line noise),
                      drawn from ``flip_seed`` so a run can be replayed
    """

    no_reply: bool = False
    reply_delay: float = 0.0
    corrupt_crc: int = 0
    busy: int = 0
    chirp: bool = False
    flip_rate: float = 0.0
    flip_seed: int = 0
    _flips: random.Random | None = dataclasses.field(default=None, repr=False)

    def noisy(self, out: bytes) -> bytes:
        """``out`` with a bit flipped in about ``flip_rate`` of its bytes."""
        if self._flips is None:
            self._flips = random.Random(self.flip_seed)
        rng = self._flips
        return bytes(b ^ (1 << rng.randrange(8)) if rng.random() < self.flip_rate else b
                     for b in out)  # fmt: skip


def _will_clear(m: EmulatedMachine) -> bool:
    """An obstacle that clears by itself (a game finishing, a tilt or handpay attended,
    a door closed): the EGM answers busy and the host asks again later (sas.md §3)."""
    return m.game_in_progress or m.handpay_pending or m.tilted or m.slot_door_open


class PollAnswers:
    """What the machine answers to each host message (no I/O, no timing, no faults)."""

    def __init__(
        self,
        machine: EmulatedMachine,
        address: int,
        zone: ZoneInfo = VENUE_ZONE,
        *,
        aft: AftSettings | None = None,
        quirks: Quirks | None = None,
    ):
        self.machine = machine
        self.address = address
        self.zone = zone
        self.quirks = quirks or Quirks()
        self.aft = EgmAft(machine, address, self._wall_clock, aft)

    def _wall_clock(self) -> dt.datetime:
        """The machine's clock as an EGM shows it: venue wall time, whole seconds."""
        return self.machine.now().astimezone(self.zone).replace(tzinfo=None, microsecond=0)

    def answer(self, poll: HostMessage) -> EgmMessage | None:
        """The reply to ``poll``, or None to stay silent (unsupported or broadcast)."""
        m, a = self.machine, self.address
        if isinstance(poll, SetDateTime):
            m.set_clock(poll.when.replace(tzinfo=self.zone))
            return None if poll.addr == 0 else Ack(a)
        try:
            return self._answer(poll)
        except MachineRefusal:
            return Busy(a) if m.powered and _will_clear(m) else Nack(a)

    def _answer(self, poll: HostMessage) -> EgmMessage | None:
        for kinds, handler in _POLLS:
            if isinstance(poll, kinds):
                return handler(self, poll)
        return None  # LP 2F and anything else: not supported, stay silent

    def _shutdown(self, poll: Shutdown) -> EgmMessage:
        self.machine.lock_play()
        return Ack(self.address)

    def _startup(self, poll: Startup) -> EgmMessage:
        self.machine.unlock_play()
        return Ack(self.address)

    def _current_credits(self, poll: SendCurrentCredits) -> EgmMessage:
        return CurrentCreditsReply(self.address, self.machine.credits)

    def _meters(self, poll: SendMeters) -> EgmMessage:
        t = self.machine.meters
        return MetersReply(
            self.address,
            t.cancelled_credits,
            t.coin_in,
            t.coin_out,
            t.drop,
            t.jackpot,
            t.games_played,
        )

    def _gaming_machine_meters(self, poll: SendGamingMachineMeters) -> EgmMessage:
        t = self.machine.meters
        return GamingMachineMetersReply(
            self.address,
            t.coin_in,
            t.coin_out,
            t.drop,
            t.jackpot,
            t.games_played,
            t.games_won,
            t.slot_door_opened,
            t.power_resets,
        )

    def _machine_info(self, poll: SendMachineInfo) -> EgmMessage:
        i = self.machine.identity
        reply = MachineInfoReply(
            self.address,
            i.game_id,
            i.additional_id,
            i.denomination_code,
            i.max_bet,
            i.progressive_group,
            i.game_options,
            i.paytable_id,
            i.base_percent,
        )
        return self.quirks.machine_info(reply)

    def _version(self, poll: SendVersion) -> EgmMessage:
        i = self.machine.identity
        return VersionReply(self.address, i.sas_version, i.serial_number)

    def _date_time(self, poll: SendDateTime) -> EgmMessage:
        return DateTimeReply(self.address, self._wall_clock())

    def _enabled_features(self, poll: SendEnabledFeatures) -> EgmMessage:
        first = TOURNAMENT_SUPPORTED_BIT if self.machine.tournament_supported else 0
        features = bytes((first, AFT_SUPPORTED_BIT, 0, 0, 0, 0))
        return EnabledFeaturesReply(self.address, poll.game, features)

    def _handpay_reset(self, poll: RemoteHandpayReset) -> EgmMessage:
        # Nothing pending: acknowledged, but no exception 52 (nothing was reset).
        self.machine.reset_handpay()
        return Ack(self.address)

    def _tournament_poll(
        self, poll: TournamentMode | SendTournamentMeter | SendTournamentMeters
    ) -> EgmMessage | None:
        return self._tournament(poll) if self.machine.tournament_supported else None

    def _tournament(
        self, poll: TournamentMode | SendTournamentMeter | SendTournamentMeters
    ) -> EgmMessage:
        m, a = self.machine, self.address
        if isinstance(poll, TournamentMode):
            if poll.is_exit:
                m.exit_tournament()
            else:
                # sas.md §5: refused while cashable credits remain (NACK) or while a game,
                # tilt, handpay or open door is pending (busy until it clears)
                m.enter_tournament(poll.credits, poll.duration_seconds, pulses=poll.pulses)
            return Ack(a)
        t = m.tournament_meters()
        if isinstance(poll, SendTournamentMeters):
            return TournamentMetersReply(
                a, poll.game, t.games_played, t.games_won, t.credits_wagered, t.credits_won
            )
        value = {
            0x95: t.games_played,
            0x96: t.games_won,
            0x97: t.credits_wagered,
            0x98: t.credits_won,
        }[poll.meter]
        return TournamentMeterReply(a, poll.meter, poll.game, value)

    # -- AFT: the host-timed fallback's credit loading (emulators.sas_aft) ---------------
    def _aft_register(self, poll: AftRegister) -> AftRegistrationReply:
        return self.aft.register(poll)

    def _aft_lock(self, poll: AftLockRequest) -> AftStatusReply:
        return self.aft.lock(poll)

    def _aft_interrogate(self, poll: AftInterrogate) -> AftTransferReply:
        return self.aft.interrogate(poll)

    def _aft_transfer(self, poll: AftTransfer) -> AftTransferReply:
        return self.aft.transfer(poll)


# The long polls the emulated EGM answers, checked in order (SetDateTime is handled by
# :meth:`PollAnswers.answer` itself: it is the one a broadcast may carry).
_PollHandler = Callable[[PollAnswers, Any], EgmMessage | None]
_POLLS: tuple[tuple[type | tuple[type, ...], _PollHandler], ...] = (
    (Shutdown, PollAnswers._shutdown),
    (Startup, PollAnswers._startup),
    (SendCurrentCredits, PollAnswers._current_credits),
    (SendMeters, PollAnswers._meters),
    (SendGamingMachineMeters, PollAnswers._gaming_machine_meters),
    (SendMachineInfo, PollAnswers._machine_info),
    (SendVersion, PollAnswers._version),
    (SendDateTime, PollAnswers._date_time),
    (SendEnabledFeatures, PollAnswers._enabled_features),
    (RemoteHandpayReset, PollAnswers._handpay_reset),
    (
        (TournamentMode, SendTournamentMeter, SendTournamentMeters),
        PollAnswers._tournament_poll,
    ),
    (AftRegister, PollAnswers._aft_register),
    (AftLockRequest, PollAnswers._aft_lock),
    (AftInterrogate, PollAnswers._aft_interrogate),
    (AftTransfer, PollAnswers._aft_transfer),
)


def fast_polls(address: int) -> tuple[HostMessage, ...]:
    """The short polls a heat hinges on, for the link's whole-message fast path
    (:class:`EgmLink` ``fast_polls``): general poll, LP 01, 02, 1A, 1C and 99 (game 0)."""
    return (
        GeneralPoll(address),
        Shutdown(address),
        Startup(address),
        SendCurrentCredits(address),
        SendGamingMachineMeters(address),
        SendTournamentMeters(address, 0),
    )


class SasFace:
    """One emulated EGM on a SAS loop: an :class:`EgmLink` answering from the model.

    One link per machine for its whole life (its exception queue is the EGM's NV memory);
    carriers come and go with :meth:`attach`.  A new connection replaces the old one, as
    one host owns a SAS loop.
    """

    def __init__(
        self,
        machine: EmulatedMachine,
        address: int = 1,
        *,
        settings: LinkSettings | None = None,
        zone: ZoneInfo = VENUE_ZONE,
        outbox: ReplyOutbox | None = None,
        enforce_gap: bool = False,
        aft: AftSettings | None = None,
        real_time: bool = True,
        real_time_idle_frame: bool = True,
        quirks: Quirks | None = None,
    ) -> None:
        """``quirks``: the real-EGM quirks this machine shows (:mod:`emulators.sas_quirks`).
        ``enforce_gap``: discard a host message with a pause of more than 5 ms (the
        settings' ``inter_byte_gap``) between its bytes, as a real EGM does.  ``aft``: the
        EGM's asset number and how strict its AFT is (:mod:`emulators.sas_aft`).
        ``real_time``: the EGM supports real-time event reporting (LP 0E); when the host
        turns it on, every game's start and end go out with their bet and win;
        ``real_time_idle_frame``: nothing to report is answered ``addr FF 00`` (one
        platform's way), or with silence (False, SAS 6.02 §12.6)."""
        if enforce_gap:
            settings = dataclasses.replace(settings or LinkSettings(), enforce_gap=True)
        self.machine = machine
        self.address = address
        self.outbox = outbox  # None: each reply is written at once
        self.faults = Faults()
        self.quirks = quirks or Quirks()
        self.answers = PollAnswers(machine, address, zone, aft=aft, quirks=self.quirks)
        self._loop = asyncio.get_running_loop()
        self.link = EgmLink(
            address,
            self,
            self._loop.time(),
            settings,
            fast_polls=fast_polls(address),
            real_time_capable=real_time,
            real_time_idle_frame=real_time_idle_frame,
        )
        self.answers.aft.post = self.link.post_exception
        self.carrier: Carrier | None = None
        self.polls_seen = 0
        self.errors_seen = 0
        # Called with the loop time of every poll addressed to this EGM (not repeats of
        # one poll, which SAS times by its own rules): benchmarks check the poll spacing.
        self.on_poll: Callable[[float], None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._chirp_timer: asyncio.TimerHandle | None = None
        self._power_timer: asyncio.TimerHandle | None = None
        machine.subscribe(self._on_machine_event)

    # -- EgmHandler ----------------------------------------------------------------------
    def handle(self, poll: LongPoll) -> EgmMessage | None:
        if self.faults.busy > 0 and poll.addr != 0:
            self.faults.busy -= 1
            return Busy(self.address)
        return self.answers.answer(poll)

    # -- machine -> exceptions -----------------------------------------------------------
    def _on_machine_event(self, note: ModelEvent) -> None:
        code = EXCEPTION_CODES.get(note.event)
        if code is not None:
            self.link.post_exception(code, data=self._event_data(note.event))

    def _event_data(self, event: Event) -> bytes:
        """What the event's real-time frame carries (kept with it in the queue, as the
        host may turn RTE on before it reads the event)."""
        m = self.machine
        if event is Event.GAME_STARTED:
            wagered = min(m.last_bet, 9999)
            return RealTimeEvent.game_started(self.address, wagered, m.coin_in % 10**8).data
        if event is Event.GAME_ENDED:
            return RealTimeEvent.game_ended(self.address, min(m.last_win, 10**8 - 1)).data
        return b""

    # -- carriers ------------------------------------------------------------------------
    def attach(self, carrier: Carrier) -> None:
        # A new connection is a new host session: it starts with RTE off, as a board
        # that lost its host does (the host turns it on again if it wants it).
        self.link.real_time = False
        old, self.carrier = self.carrier, carrier
        if old is not None and not old.closed:
            old.close()
        carrier.set_handlers(
            lambda data: self._on_data(carrier, data), lambda exc: self._on_lost(carrier)
        )
        self._arm_timer()

    def _on_lost(self, carrier: Carrier) -> None:
        if self.carrier is carrier:
            self.carrier = None

    def _on_data(self, carrier: Carrier, data: bytes) -> None:
        if carrier is not self.carrier:
            return
        f = self.faults
        if f.no_reply or f.chirp or not self.machine.powered:
            return  # deaf: a dead board, a broken loop, or a dark machine
        # A game that takes time ends when the machine's clock says so: tick on every poll,
        # so its result lands and exception 7F (game ended) is queued before this answer.
        if self.machine.game_in_progress:
            self.machine.tick()
        link = self.link
        now = self._loop.time()
        link.receive_data(data, now)
        echo = b""
        for ev in link.events():
            if isinstance(ev, PollHandled):
                self.polls_seen += 1
                if self.on_poll is not None and not ev.resent and ev.poll.addr:
                    self.on_poll(now)
                if self.quirks.ack_echo and isinstance(ev.reply, Ack):
                    # the quirk: the rest of the poll follows the ACK (its wakeup-free
                    # bytes, as data); a host must flag them, not take them as a reply
                    echo += escape(ev.poll.encode()[1:], wakeup=False)
            elif isinstance(ev, ProtocolError):
                self.errors_seen += 1
        out = link.data_to_send() + echo
        if out:
            self._send(out, data_reply=len(out) >= 4)

    def _send(self, out: bytes, *, data_reply: bool) -> None:
        f = self.faults
        if data_reply and f.corrupt_crc > 0:
            f.corrupt_crc -= 1
            out = corrupt_last_byte(out)
        if f.flip_rate > 0:
            out = f.noisy(out)
        if f.reply_delay > 0:
            self._loop.call_later(f.reply_delay, self._write, self.carrier, out)
        elif self.outbox is not None and self.carrier is not None:
            self.outbox.put(self.carrier, out)
        else:
            self._write(self.carrier, out)

    @staticmethod
    def _write(carrier: Carrier | None, out: bytes) -> None:
        if carrier is not None and not carrier.closed:
            carrier.write(out)

    # -- link timers (loop break and chirps) ---------------------------------------------
    def _arm_timer(self) -> None:
        # One lazily re-armed timer: polls only move the deadline later, so the timer is
        # re-armed when it fires rather than on every poll (cheap with 1000 machines).
        if self._timer is None:
            deadline = self.link.next_deadline()
            if deadline is not None:
                self._timer = self._loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self.carrier is None:
            return  # nobody to chirp to; re-armed on the next attach
        now = self._loop.time()
        deadline = self.link.next_deadline()
        if deadline is not None and now >= deadline and self.machine.powered:
            self.link.handle_timers(now)
            self.link.events()
            out = self.link.data_to_send()
            if out:
                self._write(self.carrier, out)
        self._arm_timer()

    # -- fault injection -----------------------------------------------------------------
    def inject(
        self,
        *,
        no_reply: bool | None = None,
        reply_delay: float | None = None,
        corrupt_crc: int | None = None,
        busy: int | None = None,
        chirp: bool | None = None,
    ) -> None:
        """Set fault switches (None leaves one as it is).  Chirping starts at once."""
        f = self.faults
        if no_reply is not None:
            f.no_reply = no_reply
        if reply_delay is not None:
            f.reply_delay = reply_delay
        if corrupt_crc is not None:
            f.corrupt_crc = corrupt_crc
        if busy is not None:
            f.busy = busy
        if chirp is not None:
            f.chirp = chirp
            if chirp and self._chirp_timer is None:
                self._chirp()

    def _chirp(self) -> None:
        self._chirp_timer = None
        if not self.faults.chirp:
            return
        self._write(self.carrier, encode_egm_message(Chirp(self.address)))
        self._chirp_timer = self._loop.call_later(self.link.settings.chirp_interval, self._chirp)

    def clear_faults(self) -> None:
        self.faults = Faults()

    def drop_connection(self) -> None:
        """Cut the host's connection (a pulled cable or a rebooting board)."""
        carrier, self.carrier = self.carrier, None
        if carrier is not None:
            abort = getattr(carrier, "abort", None)
            if callable(abort):
                abort()
            else:
                carrier.close()

    def power_cycle(self, off_seconds: float = 1.0) -> None:
        """Power loss now, power back after ``off_seconds``: silent while dark, then play
        locked until the host enables it, exceptions 18 and 17 queued."""
        self.machine.power_off()
        if self._power_timer is not None:
            self._power_timer.cancel()
        self._power_timer = self._loop.call_later(off_seconds, self._power_on)

    def _power_on(self) -> None:
        self._power_timer = None
        self.machine.power_on()

    def close(self) -> None:
        for timer in (self._timer, self._chirp_timer, self._power_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._chirp_timer = self._power_timer = None
        self.faults.chirp = False
        self.machine.unsubscribe(self._on_machine_event)
        if self.carrier is not None:
            self.carrier.close()
            self.carrier = None


def corrupt_last_byte(escaped: bytes) -> bytes:
    """Spoil the last byte (the CRC's high byte of a data reply) without breaking the
    escaping: an escaped ``FF FF`` becomes ``FE``, any other byte gets a bit flipped."""
    if escaped.endswith(b"\xff\xff"):
        return escaped[:-2] + b"\xfe"
    last = escaped[-1]
    flipped = last ^ 0x01 if last ^ 0x01 != 0xFF else last ^ 0x02
    return escaped[:-1] + bytes((flipped,))
