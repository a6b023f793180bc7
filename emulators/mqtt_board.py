"""An emulated MQTT interface board: a thin MQTT face over :class:`EmulatedMachine`.

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

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
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
from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable, WillMessage
from protocols.mqtt.codec import BoardEventKind, Command, ErrorKind, PayloadError
from protocols.mqtt.topics import Channel, board_topic

log = logging.getLogger(__name__)

EVENT_QUEUE = 256
EVENT_BATCH = 32
REPLY_CACHE = 128

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
    def __init__(self, machine: EmulatedMachine, settings: MqttSettings, site: str) -> None:
        self.machine = machine
        self.site = site
        self._topic = {ch: board_topic(site, machine.machine_id, ch) for ch in Channel}
        offline = codec.encode(codec.Status(online=False, at=machine.now()))
        self.session = MqttSession(
            settings,
            client_id=f"board-{site}-{machine.machine_id}",
            will=WillMessage(self._topic[Channel.STATUS], offline),
        )
        self.heat_id = ""  # named by the gateway (enter-tournament args.heat), for SNMP
        self.host_heat: HostTimedHeat | None = None  # EGM without tournament mode
        self.last_host_meters = ModelTournamentMeters()
        self.tournament_entries = 0
        self.commands_executed = 0
        # Sequence numbers start at the boot time in ms, so they keep growing across a
        # board restart and the gateway's duplicate filter (seq <= last seen) holds.
        self._seq = int(time.time() * 1000)
        self._events: deque[tuple[int, datetime, BoardEventKind]] = deque()
        self._replies: OrderedDict[str, bytes] = OrderedDict()
        self._wake = asyncio.Event()
        self._state_dirty = True
        self._meters_dirty = True
        self._announce = True
        self._pump: asyncio.Task[None] | None = None
        self._reply_tasks: set[asyncio.Task[None]] = set()

    @property
    def link_up(self) -> bool:
        return self.session.connected.is_set()

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self) -> None:
        self.machine.subscribe(self._on_machine_event)
        await self.session.route(self._topic[Channel.CMD], self._on_command)
        self.session.on_connect(self._on_connect)
        self._pump = asyncio.create_task(
            self._publish_loop(), name=f"board-{self.machine.machine_id}"
        )
        await self.session.start()

    async def stop(self, *, crash: bool = False) -> None:
        """Stop; with ``crash`` drop the link without a goodbye (the broker sends our will)."""
        with contextlib.suppress(ValueError):
            self.machine.unsubscribe(self._on_machine_event)
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
            self._pump = None
        if crash:
            await self.session.abort()
            return
        with contextlib.suppress(MqttUnavailable):
            if self.link_up:
                offline = codec.Status(online=False, at=self.machine.now())
                await self.session.publish(
                    self._topic[Channel.STATUS], codec.encode(offline), retain=True
                )
        await self.session.close()

    async def _on_connect(self) -> None:
        self._announce = self._state_dirty = self._meters_dirty = True
        self._wake.set()

    # -- machine -> MQTT ---------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _on_machine_event(self, note: ModelEvent) -> None:
        kind = _EVENT_KIND.get(note.event)
        if kind is not None:
            if len(self._events) >= EVENT_QUEUE:
                self._events.popleft()
                overflow = BoardEventKind.QUEUE_OVERFLOW
                self._events.append((self._next_seq(), self.machine.now(), overflow))
            self._events.append((self._next_seq(), self.machine.now(), kind))
        self._state_dirty = True
        if note.event in _METER_EVENTS:
            self._meters_dirty = True
        self._wake.set()

    def state_message(self) -> codec.State:
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
            seq=self._next_seq(),
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

    def meters_message(self) -> codec.Meters:
        m = self.machine
        if self.host_heat is not None:
            tm = self.host_heat.meters(m)
        elif m.tournament_supported:
            tm = m.tournament_meters()
        else:
            tm = self.last_host_meters
        return codec.Meters(
            seq=self._next_seq(),
            at=m.now(),
            credits=m.credits,
            in_tournament=m.in_tournament or self.host_heat is not None,
            games_played=tm.games_played,
            games_won=tm.games_won,
            credits_wagered=tm.credits_wagered,
            credits_won=tm.credits_won,
        )

    async def _publish_loop(self) -> None:
        """One writer: status, then queued events in order, then the newest state/meters.
        While the broker is away the pending items stay queued and go out after resync."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                if self._announce:
                    online = codec.Status(online=True, at=self.machine.now())
                    await self._send(Channel.STATUS, online, retain=True)
                    self._announce = False
                while self._events:
                    # Pipelined in order (paho queues each publish as it is called); a
                    # batch that fails stays queued and is sent again after resync.
                    batch = list(self._events)[:EVENT_BATCH]
                    await asyncio.gather(
                        *(
                            self._send(Channel.EVENT, codec.Event(seq=seq, at=at, kind=kind))
                            for seq, at, kind in batch
                        )
                    )
                    for _ in batch:
                        self._events.popleft()
                if self._state_dirty:
                    self._state_dirty = False
                    await self._send(Channel.STATE, self.state_message(), retain=True)
                if self._meters_dirty:
                    self._meters_dirty = False
                    await self._send(Channel.METERS, self.meters_message(), retain=True)
            except MqttUnavailable:
                # Resync on reconnect republishes everything; keep the event queue.
                self._state_dirty = self._meters_dirty = True
                await self.session.connected.wait()
                self._wake.set()

    async def _send(
        self, channel: Channel, message: codec.BoardMessage, *, retain: bool = False
    ) -> None:
        await self.session.publish(self._topic[channel], codec.encode(message), retain=retain)

    # -- MQTT -> machine ---------------------------------------------------------------
    def _on_command(self, topic: str, payload: bytes) -> None:
        message = codec.decode(Channel.CMD, payload)  # PayloadError: counted and dropped
        if not isinstance(message, codec.CommandMessage):  # pragma: no cover - decode's contract
            raise PayloadError("cmd: not a command")
        cached = self._replies.get(message.id)
        if cached is None:
            reply = self._execute(message)
            cached = codec.encode(reply)
            self._replies[message.id] = cached
            while len(self._replies) > REPLY_CACHE:
                self._replies.popitem(last=False)
        task = asyncio.create_task(self._reply(cached))
        self._reply_tasks.add(task)
        task.add_done_callback(self._reply_tasks.discard)

    async def _reply(self, payload: bytes) -> None:
        with contextlib.suppress(MqttUnavailable):  # the gateway resends; we answer from cache
            await self.session.publish(self._topic[Channel.REPLY], payload)

    def _execute(self, message: codec.CommandMessage) -> codec.Reply:
        self.commands_executed += 1
        try:
            result = self._run(message.cmd, message.args)
        except MachineRefusal as exc:
            return codec.Reply(
                id=message.id,
                ok=False,
                at=self.machine.now(),
                error=ErrorKind.REFUSED,
                reason=str(exc),
            )
        except (PayloadError, ValueError) as exc:
            return codec.Reply(
                id=message.id,
                ok=False,
                at=self.machine.now(),
                error=ErrorKind.BAD_REQUEST,
                reason=str(exc),
            )
        return codec.Reply(id=message.id, ok=True, at=self.machine.now(), result=result)

    def _run(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any]:
        """Run one command: a reading returns its result; anything else changed the
        machine (or asked for a republish), so the publisher is woken and ``{}`` answered."""
        handler = _COMMANDS.get(cmd)
        result = handler(self, args) if handler is not None else None
        if result is not None:
            return result
        self._wake.set()
        return {}

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
            k: v
            for k, v in codec.to_json(self.meters_message()).items()
            if k not in ("v", "seq", "at")
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
        self._announce = self._state_dirty = self._meters_dirty = True

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
        self._meters_dirty = self._state_dirty = True


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
}
