"""The schema-speaking half of an interface board, shared by every board we ship.

An emulated board (:mod:`emulators.mqtt_board`, a machine model behind it) and the
interface-board agent (:mod:`gateway.board`, a real EGM behind it over SAS) speak the v1
schema (``docs/mqtt.md``) through this one :class:`BoardCore`; what differs is only the
machine, behind the small :class:`BoardMachine` protocol.

Theory of operation:

* **Status and last will.**  Every connect publishes ``status`` online (retained); the
  session's last will publishes ``offline`` (retained) when the link dies uncleanly, so
  the gateway learns of a crash or cable cut from the broker.  A clean stop publishes
  ``offline`` itself.
* **One writer.**  A single publish loop sends, in this order: status (after a connect),
  queued events oldest first, then the newest ``state`` and ``meters`` (retained,
  coalesced: a burst of changes costs one message each, and only the newest is sent).
* **Ordered, bounded events.**  Each event gets the next sequence number (numbers start
  at the boot time in ms, so they keep growing across a restart and the gateway's
  ``seq <= last`` duplicate filter holds) and waits in a bounded queue.  While the
  broker is away events stay queued; when the queue is full the oldest are dropped and
  one ``queue-overflow`` event stands in their place (carrying the first dropped
  number, so order holds), as SAS exception 70 does.  :attr:`BoardStats.events_dropped`
  counts the gap.
* **Commands, exactly once.**  Commands run one at a time in arrival order.  The reply
  to each of the last ``reply_cache`` ids is kept: a repeated id (QoS 1 redelivery, the
  gateway's resend after a reconnect) is answered from the cache without running again,
  and a repeat that arrives while the command still runs gets the same reply when it
  finishes.  A command the machine could not complete for a transient reason (the EGM
  did not answer: :class:`CommandDeferred`) is answered with nothing and not cached:
  the gateway times out and retries, exactly as it would over SAS.  A machine that
  answers at once (:class:`ImmediateMachine`, a model in memory) runs each command as
  it arrives, inside the dispatch; the others run in a worker task.
* **Bank-wide commands.**  The core also listens on the site's bank topic
  (:mod:`protocols.mqtt.bank`): a heat's start or end naming this board runs as its own
  command under its share's correlation id, so the cache and the reply are the same, and
  the per-board copy the gateway may send after it is answered from the cache.  The
  ``identity`` reply says ``bank_commands: true``.
* **Resync.**  After every reconnect the session re-subscribes and the core republishes
  status, state and meters and sends what is still queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from protocols.mqtt import codec
from protocols.mqtt.bank import bank_topic, decode_bank
from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable, WillMessage
from protocols.mqtt.codec import BoardEventKind, Command, ErrorKind, PayloadError
from protocols.mqtt.topics import Channel, board_topic

log = logging.getLogger(__name__)

EVENT_QUEUE = 256
EVENT_BATCH = 32
REPLY_CACHE = 128
COMMAND_QUEUE = 256  # commands waiting to run; more is a gateway bug or a flood


class CommandRefused(Exception):
    """The machine would not (cashable credits, door open ...): a ``refused`` reply."""


class CommandDeferred(Exception):
    """The machine did not answer (a transient fault): no reply, nothing cached."""


class BoardMachine(Protocol):
    """What a board needs from the machine behind it."""

    @property
    def machine_id(self) -> str: ...

    def now(self) -> datetime:
        """The board's clock, for every ``at`` (the gateway sets it: ``set-clock``)."""
        ...

    def state(self, seq: int) -> codec.State:
        """The machine's state now, numbered ``seq`` (no I/O: from what the board knows)."""
        ...

    def meters(self, seq: int) -> codec.Meters:
        """The credit and tournament meters last read, numbered ``seq``."""
        ...

    async def run(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
        """Run one command: a reading returns its result, a change returns None.
        Raises :class:`CommandRefused`, :class:`CommandDeferred`, or ``ValueError``
        (``bad-request``)."""
        ...


@runtime_checkable
class ImmediateMachine(Protocol):
    """Optional: a machine that runs a command without waiting (a model in memory)."""

    def run_now(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None: ...


_Outcome = dict[str, Any] | None | Exception


@dataclass(slots=True)
class BoardStats:
    commands_executed: int = 0
    replayed: int = 0  # repeats answered from the reply cache
    deferred: int = 0  # commands left unanswered (machine not answering)
    events_dropped: int = 0  # the counted gap of queue-overflow
    bank_commands: int = 0  # bank-wide commands that named this board
    cards_dropped: int = 0  # card messages dropped from a full queue (broker away long)


@dataclass(frozen=True, slots=True)
class _Queued:
    seq: int
    at: datetime
    kind: BoardEventKind


class BoardCore:
    """One board on the broker: ``await core.start()`` ... ``await core.stop()``."""

    def __init__(
        self,
        machine: BoardMachine,
        settings: MqttSettings,
        site: str,
        *,
        event_queue: int = EVENT_QUEUE,
        reply_cache: int = REPLY_CACHE,
    ) -> None:
        if event_queue < 2:
            raise ValueError("the event queue needs room for a gap marker and an event")
        self.machine = machine
        # Decided once: a runtime protocol check costs ~5 us, on every command otherwise.
        self._immediate = machine if isinstance(machine, ImmediateMachine) else None
        self.site = site
        self.stats = BoardStats()
        self._topic = {ch: board_topic(site, machine.machine_id, ch) for ch in Channel}
        offline = codec.encode(codec.Status(online=False, at=machine.now()))
        self.session = MqttSession(
            settings,
            client_id=f"board-{site}-{machine.machine_id}",
            will=WillMessage(self._topic[Channel.STATUS], offline),
        )
        self._event_limit = event_queue
        self._reply_limit = reply_cache
        self._seq = int(time.time() * 1000)
        self._events: deque[_Queued] = deque()
        self._cards: deque[codec.Card] = deque()
        self._replies: OrderedDict[str, bytes] = OrderedDict()
        self._running: dict[str, asyncio.Future[bytes | None]] = {}
        self._commands: asyncio.Queue[codec.CommandMessage] = asyncio.Queue(COMMAND_QUEUE)
        self._wake = asyncio.Event()
        self._state_dirty = self._meters_dirty = self._announce = True
        self._tasks: list[asyncio.Task[None]] = []
        self._reply_tasks: set[asyncio.Task[None]] = set()

    @property
    def link_up(self) -> bool:
        return self.session.connected.is_set()

    def pending_events(self) -> list[tuple[int, BoardEventKind]]:
        """Events not yet accepted by the broker, oldest first: (seq, kind)."""
        return [(e.seq, e.kind) for e in self._events]

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, *, wait: bool = True) -> None:
        """Subscribe to commands and connect (``wait``: until the broker answers, else
        :class:`MqttUnavailable`; without it the board keeps trying in the background)."""
        await self.session.route(self._topic[Channel.CMD], self._on_command)
        await self.session.route(bank_topic(self.site), self._on_bank_command)
        self.session.on_connect(self._on_connect)
        name = f"board-{self.machine.machine_id}"
        self._tasks = [
            asyncio.create_task(self._publish_loop(), name=f"{name}-publish"),
            asyncio.create_task(self._command_loop(), name=f"{name}-commands"),
        ]
        await self.session.start(wait=wait)

    async def stop(self, *, crash: bool = False) -> None:
        """Stop; with ``crash`` drop the link without a goodbye (the broker sends our will)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
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
        self.republish()

    # -- machine -> MQTT ---------------------------------------------------------------
    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def post_event(self, kind: BoardEventKind, *, meters: bool = False) -> None:
        """Queue one event (in order); the state changed with it, and the meters too
        if ``meters``."""
        if len(self._events) >= self._event_limit:
            self._drop_oldest()
        self._events.append(_Queued(self.next_seq(), self.machine.now(), kind))
        self.touch(meters=meters)

    def _drop_oldest(self) -> None:
        head = self._events.popleft()
        if head.kind is not BoardEventKind.QUEUE_OVERFLOW:
            self.stats.events_dropped += 1
            # The marker takes a slot of its own: one more event goes into the gap.
        if self._events:
            self._events.popleft()
            self.stats.events_dropped += 1
        marker = _Queued(head.seq, head.at, BoardEventKind.QUEUE_OVERFLOW)
        self._events.appendleft(marker)

    def post_card(
        self,
        action: codec.CardAction,
        card: str,
        reader: codec.ReaderKind,
        *,
        display: bool = False,
    ) -> codec.Card:
        """Queue a player's card put in or pulled (the ``card`` channel), in order.

        Raises ``ValueError`` for a card number the schema cannot carry (the reader's
        parser refuses those first).  While the broker is away the cards wait in a queue
        as long as the event queue; when it is full the oldest is dropped and counted."""
        message = codec.Card(
            seq=self.next_seq(),
            at=self.machine.now(),
            action=action,
            machine=self.machine.machine_id,
            card=card,
            reader=reader,
            display=display,
        )
        codec.encode(message)  # ValueError before it is queued
        if len(self._cards) >= self._event_limit:
            self._cards.popleft()
            self.stats.cards_dropped += 1
        self._cards.append(message)
        self._wake.set()
        return message

    def touch(self, *, state: bool = True, meters: bool = False) -> None:
        """The state (and meters) changed: publish the newest soon."""
        self._state_dirty |= state
        self._meters_dirty |= meters
        self._wake.set()

    def republish(self) -> None:
        """Send status, state and meters again (resync, ``report-state``)."""
        self._announce = self._state_dirty = self._meters_dirty = True
        self._wake.set()

    async def _publish_loop(self) -> None:
        """One writer: status, then queued events in order, then the newest state/meters.
        While the broker is away the pending items stay queued and go out after resync."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._publish_pending()
            except MqttUnavailable:
                # Resync on reconnect republishes everything; keep the event queue.
                self._state_dirty = self._meters_dirty = True
                await self.session.connected.wait()
                self._wake.set()

    async def _publish_pending(self) -> None:
        if self._announce:
            online = codec.Status(online=True, at=self.machine.now())
            await self._send(Channel.STATUS, online, retain=True)
            self._announce = False
        while self._events:
            # Pipelined in order (paho queues each publish as it is called); a batch
            # that fails stays queued and is sent again after resync.
            batch = list(self._events)[:EVENT_BATCH]
            await asyncio.gather(
                *(
                    self._send(Channel.EVENT, codec.Event(seq=e.seq, at=e.at, kind=e.kind))
                    for e in batch
                )
            )
            sent = set(batch)  # events may have been dropped meanwhile (a full queue)
            while self._events and self._events[0] in sent:
                self._events.popleft()
        while self._cards:
            await self._send(Channel.CARD, self._cards[0])
            self._cards.popleft()
        if self._state_dirty:
            self._state_dirty = False
            await self._send(Channel.STATE, self.machine.state(self.next_seq()), retain=True)
        if self._meters_dirty:
            self._meters_dirty = False
            await self._send(Channel.METERS, self.machine.meters(self.next_seq()), retain=True)

    async def _send(
        self, channel: Channel, message: codec.BoardMessage, *, retain: bool = False
    ) -> None:
        await self.session.publish(self._topic[channel], codec.encode(message), retain=retain)

    # -- MQTT -> machine ---------------------------------------------------------------
    def _on_command(self, topic: str, payload: bytes) -> None:
        message = codec.decode(Channel.CMD, payload)  # PayloadError: counted and dropped
        if not isinstance(message, codec.CommandMessage):  # pragma: no cover - decode's contract
            raise PayloadError("cmd: not a command")
        self._accept(message)

    def _on_bank_command(self, topic: str, payload: bytes) -> None:
        """A bank-wide command (:mod:`protocols.mqtt.bank`): ours if it names us, then
        run and answered as the per-board command with our share's correlation id."""
        mine = decode_bank(payload).for_machine(self.machine.machine_id)
        if mine is not None:
            self.stats.bank_commands += 1
            self._accept(mine)

    def _accept(self, message: codec.CommandMessage) -> None:
        cached = self._replies.get(message.id)
        if cached is not None:
            self.stats.replayed += 1
            self._reply_soon(cached)
            return
        running = self._running.get(message.id)
        if running is not None:  # a repeat while it runs: the same reply when it ends
            self.stats.replayed += 1
            self._spawn(self._reply_when_done(running))
            return
        if self._immediate is not None:
            self._run_now(self._immediate, message)
            return
        try:
            self._commands.put_nowait(message)
        except asyncio.QueueFull:
            raise PayloadError("cmd: command queue full; dropped") from None
        self._running[message.id] = asyncio.get_running_loop().create_future()

    async def _command_loop(self) -> None:
        while True:
            message = await self._commands.get()
            future = self._running[message.id]
            try:
                payload = self._reply_for(message, await self._outcome(message))
            finally:
                self._running.pop(message.id, None)
            if not future.done():
                future.set_result(payload)
            self._keep(message.id, payload)

    def _run_now(self, machine: ImmediateMachine, message: codec.CommandMessage) -> None:
        """A machine that answers at once runs the command inside the dispatch, as the
        message arrives: a bank-wide unlock reaches every emulated board together."""
        try:
            outcome: _Outcome = machine.run_now(message.cmd, message.args)
        except Exception as exc:  # sorted by _reply_for, as run() errors are
            outcome = exc
        self._keep(message.id, self._reply_for(message, outcome))

    def _keep(self, command_id: str, payload: bytes | None) -> None:
        if payload is None:
            return
        self._replies[command_id] = payload
        while len(self._replies) > self._reply_limit:
            self._replies.popitem(last=False)
        self._reply_soon(payload)

    async def _outcome(self, message: codec.CommandMessage) -> _Outcome:
        try:
            return await self.machine.run(message.cmd, message.args)
        except Exception as exc:  # sorted by _reply_for
            return exc

    def _reply_for(self, message: codec.CommandMessage, outcome: _Outcome) -> bytes | None:
        """The encoded reply to one command's outcome, or None to stay silent."""
        self.stats.commands_executed += 1
        m = self.machine
        if isinstance(outcome, CommandDeferred):
            self.stats.deferred += 1
            log.warning("%s: %s not answered: %s", m.machine_id, message.cmd.value, outcome)
            return None
        if isinstance(outcome, CommandRefused | ValueError):  # ValueError: PayloadError too
            error = (
                ErrorKind.REFUSED
                if isinstance(outcome, CommandRefused)
                else (ErrorKind.BAD_REQUEST)
            )
            reply = codec.Reply(
                id=message.id, ok=False, at=m.now(), error=error, reason=str(outcome)
            )
            return codec.encode(reply)
        if isinstance(outcome, BaseException):  # a bug must not silence the board
            log.error("%s: %s failed", m.machine_id, message.cmd.value, exc_info=outcome)
            return None  # no reply: the gateway times out and retries
        if message.cmd is Command.REPORT_STATE:
            self.republish()
        if message.cmd is Command.IDENTITY and isinstance(outcome, dict):
            # The core takes bank-wide commands for every machine behind it: say so, so
            # the gateway sends them only to boards that do (others get theirs alone).
            outcome = {**outcome, "bank_commands": True}
        # Otherwise the machine says what a command changed (post_event / touch): a
        # blanket republish per command costs a bank-wide start two messages a board.
        return codec.encode(codec.Reply(id=message.id, ok=True, at=m.now(), result=outcome or {}))

    async def _reply_when_done(self, running: asyncio.Future[bytes | None]) -> None:
        payload = await asyncio.shield(running)
        if payload is not None:
            await self._reply(payload)

    def _reply_soon(self, payload: bytes) -> None:
        """Send a reply on the loop's next turn, handed straight to the MQTT client.

        Nothing waits for its PUBACK: a reply the broker never got is a command the
        gateway sends again (same id, after its timeout or our reconnect), answered from
        the cache.  Not awaiting it saves a task, futures and loop turns per reply (most
        of a board's work for a bank-wide start, where one process serves many boards),
        and the next turn lets the other commands already read run first."""
        asyncio.get_running_loop().call_soon(self._reply_now, payload)

    def _reply_now(self, payload: bytes) -> None:
        with contextlib.suppress(MqttUnavailable):  # the gateway resends; we answer from cache
            self.session.publish_now(self._topic[Channel.REPLY], payload)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._reply_tasks.add(task)
        task.add_done_callback(self._reply_tasks.discard)

    async def _reply(self, payload: bytes) -> None:
        with contextlib.suppress(MqttUnavailable):  # the gateway resends; we answer from cache
            await self.session.publish(self._topic[Channel.REPLY], payload)
