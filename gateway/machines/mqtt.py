"""MQTT machine driver: :class:`~gateway.machines.driver.MachineDriver` over a networked board.

Endpoint: ``mqtt://[user:pass@]BROKER[:PORT]/SITE/MACHINE[?tls=1&ca=...&mqtt5=1]``.

All drivers on one broker share one MQTT session (a :class:`BoardHub`): one TCP
connection and one wildcard subscription per site, however many machines a bank has.
The hub routes each board message to its driver by machine id.

Commands carry a correlation id and wait for the matching reply up to
``command_timeout`` (then :class:`LinkTimeout`, retryable).  A command still waiting
when the broker connection comes back, or when its board comes back online, is resent
with the *same* id; the board answers a repeated id from its cache without running it
again.  A broker restart mid-heat therefore costs a delay, never a lost or doubled
command, and scores are read from the board's tournament meters, not from anything the
broker kept.

The heat's start and end (prepared unlock and lock) go to the boards that said they
can take them (``identity``: ``bank_commands``) as *one* bank-wide publish naming them
all (:mod:`protocols.mqtt.bank`): the broker routes it once and writes it to every
board's connection, instead of routing 200 publishes one after the other.  Each board
still answers on its own reply topic, under its own correlation id; one that has not
answered within ``bank_deadline`` gets the same command, same id, on its own topic.

A command whose fields the v1 schema refuses is never sent (:class:`MachineRefused`),
and neither a board's ``refused`` nor its ``bad-request`` reply is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit, urlunsplit

from gateway.machines.capabilities import LinkCounters
from gateway.machines.driver import (
    LinkDown,
    LinkTimeout,
    MachineEvent,
    MachineEventKind,
    MachineIdentity,
    MachineRefused,
    ProtocolFault,
    TournamentSupport,
)
from gateway.machines.mqtt_bank import BANK_DEADLINE, BankBatches
from gateway.scores import HeatScore, TournamentMeters
from protocols.mqtt import codec
from protocols.mqtt.bank import member_id
from protocols.mqtt.client import MqttSession, MqttSettings, MqttUnavailable
from protocols.mqtt.codec import BoardEventKind, Command, ErrorKind
from protocols.mqtt.topics import (
    BOARD_TO_GATEWAY,
    Channel,
    board_filter,
    board_topic,
    check_segment,
    parse_board_topic,
)

log = logging.getLogger(__name__)

EVENT_BACKLOG = 1024

# Board events that are machine events in the gateway's vocabulary (those a SAS
# exception also becomes); the rest
# (play-locked, credits-changed, tournament-*) only update the cached state.
_KIND: dict[BoardEventKind, MachineEventKind] = {
    BoardEventKind.DOOR_OPENED: MachineEventKind.DOOR_OPENED,
    BoardEventKind.DOOR_CLOSED: MachineEventKind.DOOR_CLOSED,
    BoardEventKind.POWER_LOST: MachineEventKind.POWER_LOST,
    BoardEventKind.POWER_APPLIED: MachineEventKind.POWER_APPLIED,
    BoardEventKind.TILT: MachineEventKind.TILT,
    BoardEventKind.HANDPAY_PENDING: MachineEventKind.HANDPAY_PENDING,
    BoardEventKind.HANDPAY_RESET: MachineEventKind.HANDPAY_RESET,
    BoardEventKind.GAME_STARTED: MachineEventKind.GAME_STARTED,
    BoardEventKind.GAME_ENDED: MachineEventKind.GAME_ENDED,
    BoardEventKind.QUEUE_OVERFLOW: MachineEventKind.QUEUE_OVERFLOW,
    BoardEventKind.OPERATOR_MENU: MachineEventKind.OPERATOR_MENU,
    BoardEventKind.OUT_OF_SERVICE: MachineEventKind.OUT_OF_SERVICE,
}


@dataclass(frozen=True, slots=True)
class MqttEndpoint:
    settings: MqttSettings
    site: str
    machine: str
    command_timeout: float = 3.0  # ``?timeout=S``; a board answers in milliseconds
    bank: bool = True  # ``?bank=0``: the heat's start and end go to this board alone

    @classmethod
    def parse(cls, uri: str) -> MqttEndpoint:
        parts = urlsplit(uri.strip())
        path = [p for p in parts.path.split("/") if p]
        if parts.scheme not in ("mqtt", "mqtts") or len(path) != 2:
            raise ValueError(f"MQTT endpoint must be mqtt://BROKER/SITE/MACHINE, not {uri!r}")
        broker = urlunsplit((parts.scheme, parts.netloc, "", parts.query, ""))
        raw_timeout = parse_qs(parts.query).get("timeout", ["3"])[-1]
        try:
            timeout = float(raw_timeout)
        except ValueError:
            raise ValueError(f"timeout={raw_timeout!r} is not a number of seconds") from None
        if not 0 < timeout <= 60:
            raise ValueError("timeout must be between 0 and 60 seconds")
        return cls(
            settings=MqttSettings.from_url(broker),
            site=check_segment("site", path[0]),
            machine=check_segment("machine", path[1]),
            command_timeout=timeout,
            bank=parse_qs(parts.query).get("bank", ["1"])[-1] != "0",
        )


@dataclass(slots=True)
class HubStats:
    unknown_machine: int = 0
    late_replies: int = 0
    resent_commands: int = 0


class BoardHub:
    """One shared MQTT session per broker; routes board traffic to drivers."""

    _hubs: ClassVar[dict[tuple[int, str], BoardHub]] = {}

    def __init__(self, settings: MqttSettings) -> None:
        self.session = MqttSession(settings, client_id=f"reelgate-gw-{uuid.uuid4().hex[:10]}")
        self.session.on_connect(self._on_connect)
        self.stats = HubStats()
        self._drivers: dict[tuple[str, str], MqttMachineDriver] = {}
        self._sites: set[str] = set()
        self._users = 0
        self._lock = asyncio.Lock()
        self._routing = asyncio.Lock()
        self.banks = BankBatches(self.session)  # bank-wide commands (mqtt_bank)

    @classmethod
    async def acquire(cls, settings: MqttSettings) -> BoardHub:
        key = (id(asyncio.get_running_loop()), settings.broker_key)
        hub = cls._hubs.get(key)
        if hub is None:
            hub = cls._hubs[key] = BoardHub(settings)
        async with hub._lock:
            hub._users += 1
            if hub._users == 1:
                try:
                    await hub.session.start()
                except MqttUnavailable:
                    hub._users -= 1
                    cls._hubs.pop(key, None)
                    raise
        return hub

    async def release(self) -> None:
        async with self._lock:
            self._users -= 1
            if self._users == 0:
                for key, hub in list(BoardHub._hubs.items()):
                    if hub is self:
                        del BoardHub._hubs[key]
                await self.session.close()

    async def attach(self, driver: MqttMachineDriver) -> None:
        self._drivers[(driver.endpoint.site, driver.endpoint.machine)] = driver
        site = driver.endpoint.site
        async with self._routing:  # a second driver must not send before replies route
            if site in self._sites:
                return
            for channel in sorted(BOARD_TO_GATEWAY, key=lambda c: c.value):
                if channel is Channel.CARD:
                    continue  # players' cards go to the card desk (gateway/cards.py)
                await self.session.route(board_filter(site, channel), self._on_message)
            self._sites.add(site)

    def detach(self, driver: MqttMachineDriver) -> None:
        self._drivers.pop((driver.endpoint.site, driver.endpoint.machine), None)

    def _on_message(self, topic: str, payload: bytes) -> None:
        where = parse_board_topic(topic)  # TopicError -> counted and dropped by the session
        driver = self._drivers.get((where.site, where.machine))
        if driver is None:
            self.stats.unknown_machine += 1
            return
        # PayloadError too; any other exception is logged by the session, which carries on
        driver._receive(where.channel, codec.decode(where.channel, payload))

    async def _on_connect(self) -> None:
        for driver in list(self._drivers.values()):
            await driver._resend_pending()


@dataclass(slots=True)
class _Pending:
    payload: bytes
    future: asyncio.Future[codec.Reply]
    sent: int = 1


@dataclass(slots=True)
class BoardView:
    """What the gateway last heard from a board (retained topics), for displays and
    preflight; never the score of record (that comes from ``heat_score``)."""

    online: bool | None = None
    state: codec.State | None = None
    meters: codec.Meters | None = None
    last_event_seq: int = -1
    events_dropped: int = 0


@dataclass(slots=True)
class CommandStats:
    """One driver's command traffic, read as :class:`LinkCounters` by the gateway."""

    sent: int = 0
    replies: int = 0
    timeouts: int = 0
    refused: int = 0  # the board's refused and bad-request replies
    resent: int = 0
    bank: int = 0  # commands sent as this board's share of a bank-wide one
    bank_fallbacks: int = 0  # ... and sent to it alone, unanswered by the deadline


class MqttMachineDriver:
    def __init__(
        self,
        machine_id: str,
        endpoint: MqttEndpoint,
        *,
        command_timeout: float | None = None,
        bank_deadline: float = BANK_DEADLINE,
    ) -> None:
        self.machine_id = machine_id
        self.endpoint = endpoint
        self.command_timeout = command_timeout or endpoint.command_timeout
        self.bank_deadline = bank_deadline
        # The board said (identity) that it takes bank-wide commands; until then, and
        # for boards that never say so, the start and end go to it alone.
        self.bank_commands = False
        self.view = BoardView()
        self.stats = CommandStats()
        self._hub: BoardHub | None = None
        self._pending: dict[str, _Pending] = {}
        self._events: deque[MachineEvent] = deque()
        self._cmd_topic = board_topic(endpoint.site, endpoint.machine, Channel.CMD)
        # MQTT 5: a command nobody received within its timeout expires at the broker.
        self._expiry = max(1, math.ceil(self.command_timeout))

    @classmethod
    def from_uri(cls, machine_id: str, endpoint_uri: str) -> MqttMachineDriver:
        return cls(machine_id, MqttEndpoint.parse(endpoint_uri))

    def link_counters(self) -> LinkCounters:
        st = self.stats
        return LinkCounters(
            polls=st.sent, replies=st.replies, timeouts=st.timeouts,
            nacks=st.refused, retries=st.resent, failures=st.timeouts,
        )  # fmt: skip

    def link_connected(self) -> bool:
        """The broker session is up and the board has not said it is offline."""
        hub = self._hub
        return hub is not None and hub.session.connected.is_set() and self.view.online is not False

    # -- lifecycle ---------------------------------------------------------------------
    async def open(self) -> None:
        if self._hub is not None:
            return
        try:
            hub = await BoardHub.acquire(self.endpoint.settings)
        except MqttUnavailable as exc:
            raise LinkDown(f"{self.machine_id}: {exc}") from None
        self._hub = hub
        await hub.attach(self)
        try:
            await self._command(Command.REPORT_STATE)  # proves the board answers
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        hub, self._hub = self._hub, None
        if hub is None:
            return
        hub.detach(self)
        for pending in self._pending.values():
            pending.future.cancel()
        self._pending.clear()
        await hub.release()

    # -- commands ----------------------------------------------------------------------
    async def _command(self, cmd: Command, args: dict[str, Any] | None = None) -> dict[str, Any]:
        hub = self._hub
        if hub is None:
            raise LinkDown(f"{self.machine_id}: driver not open")
        message = codec.CommandMessage(
            id=uuid.uuid4().hex, cmd=cmd, at=datetime.now(UTC), args=args or {}
        )
        payload = self._encoded(message)
        future: asyncio.Future[codec.Reply] = asyncio.get_running_loop().create_future()
        self._pending[message.id] = pending = _Pending(payload, future)
        self.stats.sent += 1
        try:
            try:  # noqa: SIM105
                await hub.session.publish(self._cmd_topic, pending.payload, expiry_s=self._expiry)
            except MqttUnavailable:
                pass  # still pending: resent when the broker is back, until the timeout
        except BaseException:
            self._pending.pop(message.id, None)
            raise
        return await self._reply(message, future)

    async def _reply(
        self, message: codec.CommandMessage, future: asyncio.Future[codec.Reply]
    ) -> dict[str, Any]:
        """The board's answer to ``message`` (pending under its id until then)."""
        cmd = message.cmd
        try:
            try:
                reply = await asyncio.wait_for(asyncio.shield(future), self.command_timeout)
            except TimeoutError:
                self.stats.timeouts += 1
                raise LinkTimeout(
                    f"{self.machine_id}: no reply to {cmd.value} in {self.command_timeout:g} s"
                ) from None
        finally:
            self._pending.pop(message.id, None)
        self.stats.replies += 1
        if reply.ok:
            return reply.result
        self.stats.refused += 1
        if reply.error is ErrorKind.REFUSED:
            raise MachineRefused(f"{self.machine_id}: {cmd.value} refused: {reply.reason}")
        # BAD_REQUEST: the board cannot take this command as sent; resending the same
        # command cannot help, so it is the machine's refusal (a malfunction, T20).
        raise MachineRefused(f"{self.machine_id}: board rejected {cmd.value}: {reply.reason}")

    # -- the heat's start and end, framed ahead (capabilities.PreparedCommands) ------------
    def prepare_unlock(self) -> Callable[[], Awaitable[None]]:
        """The unlock command encoded now; the trigger hands it to the MQTT client with
        no await (the bank's start leaves in one tight loop, as SAS's LP 02 does) and
        returns an awaitable for the board's reply.  LinkDown (nothing sent) when the
        broker is not connected: the heat runner then unlocks the plain way."""
        return self._prepare(Command.UNLOCK)

    def prepare_lock(self) -> Callable[[], Awaitable[None]]:
        """The lock command, framed ahead like :meth:`prepare_unlock` (the heat's end)."""
        return self._prepare(Command.LOCK)

    def _prepare(self, cmd: Command) -> Callable[[], Awaitable[None]]:
        hub = self._hub
        if hub is None or not hub.session.connected.is_set():
            raise LinkDown(f"{self.machine_id}: broker not connected")
        if self.bank_commands and self.endpoint.bank:
            return self._prepare_bank(hub, cmd)
        # ``at`` is when the command was framed; the board acts on arrival either way
        message = codec.CommandMessage(id=uuid.uuid4().hex, cmd=cmd, at=datetime.now(UTC))
        payload = self._encoded(message)
        loop = asyncio.get_running_loop()

        def trigger() -> Awaitable[None]:
            future: asyncio.Future[codec.Reply] = loop.create_future()
            self._pending[message.id] = _Pending(payload, future)
            return self._send_own(hub, message, payload, future)

        return trigger

    def _send_own(
        self,
        hub: BoardHub,
        message: codec.CommandMessage,
        payload: bytes,
        future: asyncio.Future[codec.Reply],
    ) -> Awaitable[None]:
        """Publish this board's own command (already pending) now; its reply awaitable."""
        try:
            hub.session.publish_now(self._cmd_topic, payload, expiry_s=self._expiry)
        except MqttUnavailable as exc:
            self._pending.pop(message.id, None)
            raise LinkDown(f"{self.machine_id}: {exc}") from None
        return self._acked(message, future)

    async def _acked(
        self, message: codec.CommandMessage, future: asyncio.Future[codec.Reply]
    ) -> None:
        await self._reply(message, future)

    def _prepare_bank(self, hub: BoardHub, cmd: Command) -> Callable[[], Awaitable[None]]:
        """This board's share of the bank-wide command: its own command and id framed
        now (for the fallback and resends); fired, it joins the bank's one publish."""
        batch = hub.banks.batch(self.endpoint.site, cmd)
        framed = codec.CommandMessage(id=member_id(batch.id, 0), cmd=cmd, at=datetime.now(UTC))
        self._encoded(framed)  # checked now; the id is the board's place, known when fired
        loop = asyncio.get_running_loop()

        def trigger() -> Awaitable[None]:
            if not hub.session.connected.is_set():
                raise LinkDown(f"{self.machine_id}: broker not connected")
            number = batch.fire(self.endpoint.machine)
            own = uuid.uuid4().hex if number is None else member_id(batch.id, number)
            message = dataclasses.replace(framed, id=own)
            payload = codec.encode(message)  # ~5 us; sent only if the board needs its own
            future: asyncio.Future[codec.Reply] = loop.create_future()
            self._pending[message.id] = _Pending(payload, future)
            if number is not None:
                self.stats.bank += 1
                return self._acked_bank(hub, message, future)
            # the bank's publish already left: this board's own command now
            return self._send_own(hub, message, payload, future)

        return trigger

    async def _acked_bank(
        self, hub: BoardHub, message: codec.CommandMessage, future: asyncio.Future[codec.Reply]
    ) -> None:
        """The reply to this board's share; unanswered by the deadline (it missed the
        publish: joined late, reconnecting), the same command goes to it alone, same id,
        so it runs once either way; then the usual timeout and the runner's retry."""
        await asyncio.wait({future}, timeout=self.bank_deadline)
        pending = self._pending.get(message.id)
        if not future.done() and pending is not None:
            pending.sent += 1
            self.stats.bank_fallbacks += 1
            log.info(
                "%s: no reply to the bank-wide %s in %g s; sent to the board alone",
                self.machine_id, message.cmd.value, self.bank_deadline,
            )  # fmt: skip
            with contextlib.suppress(MqttUnavailable):
                await hub.session.publish(self._cmd_topic, pending.payload, expiry_s=self._expiry)
        await self._reply(message, future)

    def _encoded(self, message: codec.CommandMessage) -> bytes:
        """The command's payload, checked as the board will check it: a field the v1
        schema refuses (credits below 1, a non-integer) is MachineRefused, nothing sent."""
        try:
            payload = codec.encode(message)
            codec.decode(Channel.CMD, payload)
        except (ValueError, TypeError) as exc:  # PayloadError is a ValueError
            raise MachineRefused(
                f"{self.machine_id}: {message.cmd.value} not sent, field refused: {exc}"
            ) from None
        return payload

    async def _resend_pending(self) -> None:
        hub = self._hub
        if hub is None:
            return
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.sent += 1
                hub.stats.resent_commands += 1
                self.stats.resent += 1
                with contextlib.suppress(MqttUnavailable):
                    await hub.session.publish(
                        self._cmd_topic, pending.payload, expiry_s=self._expiry
                    )

    # -- incoming ----------------------------------------------------------------------
    def _receive(self, channel: Channel, message: codec.BoardMessage) -> None:
        if isinstance(message, codec.Reply):
            pending = self._pending.get(message.id)
            if pending is None or pending.future.done():
                if self._hub is not None:
                    self._hub.stats.late_replies += 1
                return
            pending.future.set_result(message)
        elif isinstance(message, codec.Status):
            was = self.view.online
            self.view.online = message.online
            if was is not None and was != message.online:
                kind = MachineEventKind.LINK_UP if message.online else MachineEventKind.LINK_DOWN
                self._queue(MachineEvent(self.machine_id, kind, message.at))
            if message.online and was is not None and self._pending:
                # A board announces every (re)connect; what we sent while it was away
                # is lost (clean sessions), so send it again (it answers repeats from
                # its cache).  The retained copy seen at subscription (was None) is not
                # a reconnect.
                asyncio.get_running_loop().create_task(self._resend_pending())
        elif isinstance(message, codec.State):
            self.view.state = message
        elif isinstance(message, codec.Meters):
            self.view.meters = message
        elif isinstance(message, codec.Event):
            if message.seq <= self.view.last_event_seq:
                return  # QoS 1 redelivery, or a batch the board sent again after resync
            self.view.last_event_seq = message.seq
            mapped = _KIND.get(message.kind)
            if mapped is not None:
                self._queue(MachineEvent(self.machine_id, mapped, message.at))

    def _queue(self, event: MachineEvent) -> None:
        if len(self._events) >= EVENT_BACKLOG:
            self._events.popleft()
            self.view.events_dropped += 1
            self._events.append(
                MachineEvent(self.machine_id, MachineEventKind.QUEUE_OVERFLOW, event.at)
            )
        self._events.append(event)

    # -- MachineDriver -----------------------------------------------------------------
    async def identity(self) -> MachineIdentity:
        r = await self._command(Command.IDENTITY)
        self.bank_commands = r.get("bank_commands") is True  # optional in v1: old boards
        try:
            return MachineIdentity(
                game_id=str(r["game_id"]),
                additional_id=str(r["additional_id"]),
                denomination_code=int(r["denomination_code"]),
                max_bet=int(r["max_bet"]),
                paytable_id=str(r["paytable_id"]),
                base_percent=str(r["base_percent"]),
                protocol_version=str(r["protocol_version"]),
                serial_number=str(r["serial_number"]),
                tournament=TournamentSupport(r["tournament"]),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ProtocolFault(f"{self.machine_id}: bad identity reply ({exc})") from None

    async def credits(self) -> int:
        r = await self._command(Command.READ_CREDITS)
        return _int(self.machine_id, r, "credits")

    async def lock(self) -> None:
        await self._command(Command.LOCK)

    async def unlock(self) -> None:
        await self._command(Command.UNLOCK)

    async def enter_tournament(self, credits: int, seconds: int) -> None:
        await self._command(Command.ENTER_TOURNAMENT, {"credits": credits, "seconds": seconds})

    async def exit_tournament(self) -> None:
        await self._command(Command.EXIT_TOURNAMENT)

    async def heat_score(self) -> HeatScore:
        r = await self._command(Command.READ_METERS)
        m = self.machine_id
        # T12: the score is the tournament credit meter, nothing the broker cached
        return HeatScore(
            credits=_int(m, r, "credits"),
            meters=TournamentMeters(
                games_played=_int(m, r, "games_played"),
                games_won=_int(m, r, "games_won"),
                credits_wagered=_int(m, r, "credits_wagered"),
                credits_won=_int(m, r, "credits_won"),
            ),
        )

    async def read_clock(self) -> datetime:
        r = await self._command(Command.READ_CLOCK)
        try:
            when = datetime.fromisoformat(str(r["now"]))
        except (KeyError, ValueError):
            raise ProtocolFault(f"{self.machine_id}: bad clock reply") from None
        if when.tzinfo is None:
            raise ProtocolFault(f"{self.machine_id}: clock reply without UTC offset")
        return when

    async def set_clock(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("set_clock needs an aware datetime")
        await self._command(Command.SET_CLOCK, {"when": when.isoformat()})

    async def poll_events(self) -> list[MachineEvent]:
        events = list(self._events)
        self._events.clear()
        return events


def _int(machine_id: str, result: dict[str, Any], name: str) -> int:
    value = result.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolFault(f"{machine_id}: reply field {name!r} is not a meter value")
    return value


def open_mqtt_driver(machine_id: str, endpoint_uri: str) -> MqttMachineDriver:
    """Factory for ``gateway.machines.registry`` (``mqtt://`` endpoints)."""
    return MqttMachineDriver.from_uri(machine_id, endpoint_uri)
