"""An emulated MQTT interface board: a thin MQTT face over :class:`EmulatedMachine`.

The schema half (status and will, ordered events, reply cache, resync) is
:class:`protocols.mqtt.board.BoardCore`, shared with the interface-board agent that
fronts a real EGM (``reelgate board``); this module is the machine model behind it.
What a real board does, and so does this one:

* publishes ``status`` online (retained) on every connect, with a last will of
  ``offline`` (retained) so the gateway learns of a crash or cable cut from the broker;
* publishes ``state`` and ``meters`` (retained) whenever the machine changes, coalesced:
  a burst of machine events costs one state message, and only the newest is sent;
* publishes each machine ``event`` once, in order, from a bounded queue; on overflow
  the oldest are dropped and ``queue-overflow`` is reported (as SAS exception 70 does);
* executes ``cmd`` messages and answers on ``reply`` with the same correlation id.  A
  command id seen before is answered from a small cache without running it again, so
  QoS 1 redelivery and the gateway's resend after a reconnect are harmless;
* after a reconnect (broker restart) republishes status, state and meters: that is the
  board's half of the state resync.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from emulators.machine import (
    EmulatedMachine,
    Event,
    MachineRefusal,
    ModelEvent,
    ModelTournamentMeters,
)
from protocols.mqtt import codec
from protocols.mqtt.board import BoardCore, CommandRefused
from protocols.mqtt.client import MqttSession, MqttSettings
from protocols.mqtt.codec import BoardEventKind, Command

log = logging.getLogger(__name__)

_EVENT_KIND: dict[Event, BoardEventKind] = {
    Event.SLOT_DOOR_OPENED: BoardEventKind.DOOR_OPENED,
    Event.SLOT_DOOR_CLOSED: BoardEventKind.DOOR_CLOSED,
    Event.POWER_LOST: BoardEventKind.POWER_LOST,
    Event.POWER_APPLIED: BoardEventKind.POWER_APPLIED,
    Event.TILT: BoardEventKind.TILT,
    Event.TILT_CLEARED: BoardEventKind.TILT_CLEARED,
    Event.HANDPAY_PENDING: BoardEventKind.HANDPAY_PENDING,
    Event.HANDPAY_RESET: BoardEventKind.HANDPAY_RESET,
    Event.GAME_STARTED: BoardEventKind.GAME_STARTED,
    Event.GAME_ENDED: BoardEventKind.GAME_ENDED,
    Event.PLAY_LOCKED: BoardEventKind.PLAY_LOCKED,
    Event.PLAY_ENABLED: BoardEventKind.PLAY_ENABLED,
    Event.TOURNAMENT_ENTERED: BoardEventKind.TOURNAMENT_ENTERED,
    Event.TOURNAMENT_EXITED: BoardEventKind.TOURNAMENT_EXITED,
    Event.TOURNAMENT_TIME_UP: BoardEventKind.TOURNAMENT_TIME_UP,
    Event.CREDITS_CHANGED: BoardEventKind.CREDITS_CHANGED,
}
# Events after which the credit and tournament meters may have moved.
_METER_EVENTS = frozenset(
    {Event.GAME_ENDED, Event.TOURNAMENT_ENTERED, Event.TOURNAMENT_EXITED, Event.CREDITS_CHANGED}
)


@dataclass(slots=True)
class HostTimedHeat:
    """A heat on an EGM without tournament mode, run by the board itself: play-only
    (restricted) credits loaded at entry, meters taken as differences since entry, and
    everything swept off the meter at exit (T12, T18).  The gateway times it."""

    credits: int
    seconds: int
    coin_in: int
    games_played: int
    games_won: int
    started: bool = False

    def meters(self, machine: EmulatedMachine) -> ModelTournamentMeters:
        wagered = machine.meters.coin_in - self.coin_in
        return ModelTournamentMeters(
            games_played=machine.meters.games_played - self.games_played,
            games_won=machine.meters.games_won - self.games_won,
            credits_wagered=wagered,
            credits_won=max(0, machine.credits - self.credits + wagered),
        )


class MqttBoard:
    """An emulated board: the machine model behind the shared :class:`BoardCore`."""

    def __init__(self, machine: EmulatedMachine, settings: MqttSettings, site: str) -> None:
        self.machine = machine
        self.site = site
        self.heat_id = ""  # named by the gateway (enter-tournament args.heat), for SNMP
        self.host_heat: HostTimedHeat | None = None  # EGM without tournament mode
        self.last_host_meters = ModelTournamentMeters()
        self.tournament_entries = 0
        self.card: str | None = None  # the player's card in the slot
        self.messages: list[str] = []  # show-message lines, newest last
        self.core = BoardCore(self, settings, site)

    @property
    def machine_id(self) -> str:
        return self.machine.machine_id

    @property
    def session(self) -> MqttSession:
        return self.core.session

    @property
    def link_up(self) -> bool:
        return self.core.link_up

    @property
    def commands_executed(self) -> int:
        return self.core.stats.commands_executed

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> None:
        self.machine.subscribe(self._on_machine_event)
        await self.core.start()

    async def stop(self, *, crash: bool = False) -> None:
        """Stop; with ``crash`` drop the link without a goodbye (the broker sends our will)."""
        with contextlib.suppress(ValueError):
            self.machine.unsubscribe(self._on_machine_event)
        await self.core.stop(crash=crash)

    # -- the player's card ---------------------------------------------------------------
    def insert_card(self, card: str) -> None:
        """A player puts a card in (one already in is pulled first): ``card-in``.
        This board has a display line, so its cards say ``display: true``."""
        if not codec.CARD_NUMBER.match(card):
            raise ValueError(f"card number {card!r} is not 1-32 letters or digits")
        if self.card == card:
            return
        self.pull_card()
        self.card = card
        self.core.post_card(codec.CardAction.CARD_IN, card, codec.ReaderKind.EMULATED, display=True)

    def pull_card(self) -> None:
        """The player takes the card out: ``card-out`` (nothing if no card is in)."""
        card, self.card = self.card, None
        if card is not None:
            self.core.post_card(
                codec.CardAction.CARD_OUT, card, codec.ReaderKind.EMULATED, display=True
            )

    # -- machine -> MQTT ---------------------------------------------------------------
    def now(self) -> datetime:
        return self.machine.now()

    def _on_machine_event(self, note: ModelEvent) -> None:
        kind = _EVENT_KIND.get(note.event)
        meters = note.event in _METER_EVENTS
        if kind is not None:
            self.core.post_event(kind, meters=meters)
        else:
            self.core.touch(meters=meters)

    def state(self, seq: int) -> codec.State:
        m = self.machine
        t = m.tournament
        view = None
        if t is not None:
            view = codec.TournamentView(
                credits=t.credits,
                seconds_left=m.tournament_seconds_left() or 0.0,
                started=t.started_at is not None,
                time_up=t.time_up,
            )
        h = self.host_heat
        if h is not None:
            view = codec.TournamentView(
                credits=m.credits,
                seconds_left=float(h.seconds),
                started=h.started,
                time_up=False,
            )
        return codec.State(
            seq=seq,
            at=m.now(),
            powered=m.powered,
            locked=m.play_locked,
            door_open=m.slot_door_open,
            tilted=m.tilted,
            handpay_pending=m.handpay_pending,
            game_in_progress=m.game_in_progress,
            credits=m.credits,
            tournament=view,
        )

    def meters(self, seq: int) -> codec.Meters:
        m = self.machine
        if self.host_heat is not None:
            tm = self.host_heat.meters(m)
        elif m.tournament_supported:
            tm = m.tournament_meters()
        else:
            tm = self.last_host_meters
        return codec.Meters(
            seq=seq,
            at=m.now(),
            credits=m.credits,
            in_tournament=m.in_tournament or self.host_heat is not None,
            games_played=tm.games_played,
            games_won=tm.games_won,
            credits_wagered=tm.credits_wagered,
            credits_won=tm.credits_won,
        )

    # -- MQTT -> machine ---------------------------------------------------------------
    async def run(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
        return self.run_now(cmd, args)

    def run_now(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
        """The model answers at once: the core runs it as the command arrives."""
        try:
            return self._run(cmd, args)
        except MachineRefusal as exc:
            raise CommandRefused(str(exc)) from None

    def _run(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
        """Run one command on the model: a reading returns its result, a change None."""
        handler = _COMMANDS.get(cmd)
        return handler(self, args) if handler is not None else None

    def _cmd_lock(self, args: dict[str, Any]) -> None:
        self.machine.lock_play()

    def _cmd_unlock(self, args: dict[str, Any]) -> None:
        self.machine.unlock_play()
        if self.host_heat is not None:
            self.host_heat.started = True

    def _cmd_enter_tournament(self, args: dict[str, Any]) -> None:
        m = self.machine
        credits, seconds = int(args["credits"]), int(args["seconds"])
        was_in = m.in_tournament or self.host_heat is not None
        if m.tournament_supported:
            m.enter_tournament(credits, seconds)
        else:
            self._enter_host_timed(credits, seconds)
        if not was_in:
            self.tournament_entries += 1
            self.heat_id = str(args.get("heat") or self.tournament_entries)

    def _cmd_exit_tournament(self, args: dict[str, Any]) -> None:
        if self.host_heat is not None:
            self._exit_host_timed()
        else:
            self.machine.exit_tournament()

    def _cmd_read_meters(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            k: v for k, v in codec.to_json(self.meters(0)).items() if k not in ("v", "seq", "at")
        }

    def _cmd_read_credits(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"credits": self.machine.credits}

    def _cmd_read_clock(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"now": self.machine.now().isoformat()}

    def _cmd_set_clock(self, args: dict[str, Any]) -> None:
        self.machine.set_clock(datetime.fromisoformat(str(args["when"])))

    def _cmd_identity(self, args: dict[str, Any]) -> dict[str, Any]:
        m = self.machine
        i = m.identity
        return {
            "game_id": i.game_id,
            "additional_id": i.additional_id,
            "denomination_code": i.denomination_code,
            "max_bet": i.max_bet,
            "paytable_id": i.paytable_id,
            "base_percent": i.base_percent,
            "protocol_version": "mqtt-v1",
            "serial_number": i.serial_number,
            "tournament": "native" if m.tournament_supported else "host-timed",
        }

    def _cmd_report_state(self, args: dict[str, Any]) -> None:
        return None  # the core republishes status, state and meters

    def _cmd_show_message(self, args: dict[str, Any]) -> None:
        self.messages.append(str(args["text"]))
        del self.messages[:-20]
        log.info("%s display: %s", self.machine_id, args["text"])

    def _enter_host_timed(self, credits: int, seconds: int) -> None:
        m = self.machine
        h = self.host_heat
        if h is not None:
            if (h.credits, h.seconds) == (credits, seconds) and not h.started:
                return  # a repeated command for the same heat loads nothing twice
            raise MachineRefusal("already in a host-timed heat")
        m.lock_play()
        if m.cashable_credits:
            raise MachineRefusal("cashable credits on the meter")
        if m.restricted_credits:
            raise MachineRefusal("other restricted credits on the meter")
        start = HostTimedHeat(
            credits=credits,
            seconds=seconds,
            coin_in=m.meters.coin_in,
            games_played=m.meters.games_played,
            games_won=m.meters.games_won,
        )
        m.transfer_in_restricted(credits)  # refuses a busy, tilted or open machine
        self.host_heat = start

    def _exit_host_timed(self) -> None:
        m = self.machine
        h = self.host_heat
        if h is None:
            return
        final = h.meters(m)
        # Wins on restricted play land on the cashable meter: sweep both (T12, T18).
        m.transfer_out(m.cashable_credits, m.restricted_credits)
        self.last_host_meters = final
        self.host_heat = None
        self.core.touch(meters=True)


# A handler returns its result (a reading) or None (it changed something: wake the publisher).
_COMMANDS: dict[Command, Callable[[MqttBoard, dict[str, Any]], dict[str, Any] | None]] = {
    Command.LOCK: MqttBoard._cmd_lock,
    Command.UNLOCK: MqttBoard._cmd_unlock,
    Command.ENTER_TOURNAMENT: MqttBoard._cmd_enter_tournament,
    Command.EXIT_TOURNAMENT: MqttBoard._cmd_exit_tournament,
    Command.READ_METERS: MqttBoard._cmd_read_meters,
    Command.READ_CREDITS: MqttBoard._cmd_read_credits,
    Command.READ_CLOCK: MqttBoard._cmd_read_clock,
    Command.SET_CLOCK: MqttBoard._cmd_set_clock,
    Command.IDENTITY: MqttBoard._cmd_identity,
    Command.REPORT_STATE: MqttBoard._cmd_report_state,
    Command.SHOW_MESSAGE: MqttBoard._cmd_show_message,
}


def card_control(boards: dict[str, MqttBoard], line: str) -> str:
    """One control line: ``card-in MACHINE CARD`` or ``card-out MACHINE``.  Returns what
    happened, one line; raises ``ValueError`` naming what is wrong."""
    words = line.split()
    if not words:
        raise ValueError("expected card-in MACHINE CARD or card-out MACHINE")
    verb, rest = words[0], words[1:]
    if verb not in ("card-in", "card-out") or len(rest) != (2 if verb == "card-in" else 1):
        raise ValueError("expected card-in MACHINE CARD or card-out MACHINE")
    board = boards.get(rest[0])
    if board is None:
        raise ValueError(f"machine {rest[0]!r}: no such board")
    if verb == "card-in":
        board.insert_card(rest[1])
        return f"{rest[0]}: card {rest[1]} in"
    pulled = board.card
    board.pull_card()
    return f"{rest[0]}: card {pulled} out" if pulled else f"{rest[0]}: no card in"
