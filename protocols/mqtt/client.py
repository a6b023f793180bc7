"""A thin, self-healing aiomqtt session shared by boards, drivers and the feed.

Theory of operation:

* One background task owns the connection.  When the broker goes away (restart,
  network cut) it reconnects with a bounded exponential back-off, re-subscribes every
  registered route (we use clean sessions, so the broker remembers nothing) and then
  runs the ``on_connect`` callbacks: boards republish their retained state, drivers
  resend commands still awaiting a reply.  That is the "state resync".
* Publishes are QoS 1 by default and bounded: at most ``max_inflight`` at a time wait
  for their PUBACK, the rest queue on a semaphore instead of piling up in paho.  A
  publish while disconnected waits for the reconnect up to ``publish_timeout`` and then
  raises :class:`MqttUnavailable` (the caller's retry policy decides).
* Incoming messages go to the handler of the first matching route.  Handler errors
  (malformed or unknown payloads: ``ValueError`` such as ``PayloadError``) are logged,
  counted in :class:`SessionStats` and dropped; any other exception from a handler is a
  bug and is logged with its traceback and counted as ``handler-bug:<type>``.  Neither
  stops the receive loop, which every board and driver on the broker shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import aiomqtt
from aiomqtt.exceptions import MqttConnectError
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

log = logging.getLogger(__name__)

Handler = Callable[[str, bytes], None]
ConnectCallback = Callable[[], Awaitable[None]]


class _EarlyMessages:
    """Holds messages until :meth:`flush`, then passes each straight to ``dispatch``."""

    __slots__ = ("_dispatch", "_held")

    def __init__(self, dispatch: Handler) -> None:
        self._dispatch = dispatch
        self._held: list[tuple[str, bytes]] | None = []

    def receive(self, topic: str, payload: bytes) -> None:
        if self._held is None:
            self._dispatch(topic, payload)
        else:
            self._held.append((topic, payload))

    def flush(self) -> None:
        held, self._held = self._held or [], None
        for topic, payload in held:
            self._dispatch(topic, payload)


class MqttUnavailable(ConnectionError):
    """Not connected to the broker within the allowed time."""


@dataclass(frozen=True, slots=True)
class MqttSettings:
    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_insecure: bool = False  # skip hostname check (self-signed lab brokers only)
    mqtt5: bool = False  # amqtt speaks 3.1.1 only; Mosquitto does both
    keepalive: int = 20
    max_inflight: int = 512  # a bank fires every unlock at once (start skew)
    connect_timeout: float = 5.0
    publish_timeout: float = 10.0
    reconnect_min: float = 0.1
    reconnect_max: float = 3.0

    @classmethod
    def from_url(cls, url: str) -> MqttSettings:
        """``mqtt://[user:pass@]host[:port][?mqtt5=1]``; TLS with ``mqtts://`` or ``?tls=1``,
        plus ``ca=``, ``cert=``, ``key=`` file paths and ``insecure=1``; ``inflight=N``
        bounds QoS 1 publishes awaiting their PUBACK (default 512)."""
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
            raise ValueError(f"broker URL must be mqtt://HOST[:PORT] or mqtts://..., not {url!r}")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        tls = parts.scheme == "mqtts" or query.get("tls") == "1"
        return cls(
            host=parts.hostname,
            port=parts.port or (8883 if tls else 1883),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            tls=tls,
            ca_file=query.get("ca"),
            cert_file=query.get("cert"),
            key_file=query.get("key"),
            tls_insecure=query.get("insecure") == "1",
            mqtt5=query.get("mqtt5") == "1",
            max_inflight=_bounded_int(query, "inflight", 512, 1, 4096),
        )

    @property
    def broker_key(self) -> str:
        """Identifies one broker connection (for sharing a session)."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.username or ''}@{self.host}:{self.port}"

    def tls_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        if self.tls_insecure:
            context.check_hostname = False
        return context


def _bounded_int(query: dict[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ValueError(f"broker URL: {name}={raw!r} must be an integer {low}..{high}")
    return int(raw)


@dataclass(slots=True)
class SessionStats:
    connects: int = 0
    received: int = 0
    dropped: int = 0  # malformed, unknown or unrouted payloads
    published: int = 0
    handler_errors: dict[str, int] = field(default_factory=dict)

    def count_drop(self, reason: str) -> None:
        self.dropped += 1
        self.handler_errors[reason] = self.handler_errors.get(reason, 0) + 1


@dataclass(frozen=True, slots=True)
class WillMessage:
    topic: str
    payload: bytes
    retain: bool = True


def topic_matches(topic_filter: str, topic: str) -> bool:
    """MQTT filter matching (``+`` one level, ``#`` the rest)."""
    f_parts, t_parts = topic_filter.split("/"), topic.split("/")
    for i, part in enumerate(f_parts):
        if part == "#":
            return True
        if i >= len(t_parts) or (part != "+" and part != t_parts[i]):
            return False
    return len(f_parts) == len(t_parts)


# CONNACK codes that mean "your credentials or rights": 3.1.1 (4, 5) and MQTT 5 (134, 135).
_REFUSALS = frozenset({4, 5, 134, 135})


def _refusal(exc: aiomqtt.MqttCodeError) -> bool:
    rc = exc.rc
    value = getattr(rc, "value", rc)
    return isinstance(exc, MqttConnectError) and value in _REFUSALS


class MqttSession:
    def __init__(
        self,
        settings: MqttSettings,
        *,
        client_id: str | None = None,
        will: WillMessage | None = None,
    ) -> None:
        self.settings = settings
        self.client_id = client_id or f"reelgate-{uuid.uuid4().hex[:12]}"
        self.will = will
        self.stats = SessionStats()
        self.connected = asyncio.Event()
        self._routes: list[tuple[str, Handler]] = []
        self._on_connect: list[ConnectCallback] = []
        self._client: aiomqtt.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._inflight = asyncio.Semaphore(settings.max_inflight)
        self._callbacks: set[asyncio.Task[None]] = set()
        self._refused = asyncio.Event()  # the broker said no to our credentials
        self.last_error = ""
        # Resolved when the current connection is lost (a fresh one per connection).
        self._lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @property
    def refused(self) -> bool:
        """The broker refused our credentials; the session stopped trying."""
        return self._refused.is_set()

    async def wait_settled(self) -> bool:
        """Wait until connected (True) or refused for good (False); callers bound it."""
        connected = asyncio.ensure_future(self.connected.wait())
        refused = asyncio.ensure_future(self._refused.wait())
        try:
            await asyncio.wait({connected, refused}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            connected.cancel()
            refused.cancel()
        return self.connected.is_set()

    # -- registration ------------------------------------------------------------------
    async def route(self, topic_filter: str, handler: Handler) -> None:
        """Deliver messages matching ``topic_filter`` to ``handler`` (now and after every
        reconnect)."""
        self._routes.append((topic_filter, handler))
        client = self._client
        if client is not None and self.connected.is_set():
            with contextlib.suppress(aiomqtt.MqttError):  # the reconnect will subscribe
                await client.subscribe(topic_filter, qos=1)

    def on_connect(self, callback: ConnectCallback) -> None:
        """Run ``callback`` after every (re)connect, once routes are subscribed."""
        self._on_connect.append(callback)

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, *, wait: bool = True) -> None:
        if self._task is None:
            self._closing.clear()
            self._task = asyncio.create_task(self._run(), name=f"mqtt-{self.client_id}")
        if wait:
            connected = asyncio.ensure_future(self.connected.wait())
            refused = asyncio.ensure_future(self._refused.wait())
            await asyncio.wait(
                {connected, refused},
                timeout=self.settings.connect_timeout,
                return_when=asyncio.FIRST_COMPLETED,
            )
            connected.cancel()
            refused.cancel()
            if not self.connected.is_set():
                await self.close()
                where = f"{self.settings.host}:{self.settings.port}"
                if self._refused.is_set():
                    raise MqttUnavailable(f"MQTT broker at {where} refused us: {self.last_error}")
                detail = f" ({self.last_error})" if self.last_error else ""
                raise MqttUnavailable(f"no MQTT broker at {where}{detail}")

    async def close(self) -> None:
        self._closing.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for cb in list(self._callbacks):
            cb.cancel()
        self.connected.clear()

    async def abort(self) -> None:
        """Drop the TCP connection without DISCONNECT, as a crash or cable cut would:
        the broker then publishes our last will.  For fault tests and demos."""
        self._closing.set()
        client = self._client
        if client is not None:
            sock = client._client.socket()  # aiomqtt has no public abort
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):
                    # shutdown, not close: the event loop still watches this descriptor
                    sock.shutdown(socket.SHUT_RDWR)
            task = self._task
            if task is not None:
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(task), 2.0)
        await self.close()

    # -- traffic -----------------------------------------------------------------------
    def publish_now(
        self,
        topic: str,
        payload: bytes,
        *,
        qos: int = 1,
        expiry_s: int | None = None,
        flush: bool = False,
    ) -> None:
        """Hand one message to the MQTT client at once, with no await before it: for a
        burst that must leave together (a bank's start).  The caller learns of delivery
        from the other side's reply, not from the PUBACK (which paho still handles).
        Raises :class:`MqttUnavailable` when not connected; nothing is queued then.
        ``flush``: write it to the socket now rather than on the loop's next writable
        turn (behind every callback already queued: at a heat's start, the 400 acks the
        runner starts awaiting); for one message that must leave at once."""
        client = self._client
        if client is None or not self.connected.is_set() or self._lost.done():
            raise MqttUnavailable(f"could not publish to {topic}: broker unavailable")
        properties = None
        if expiry_s is not None and self.settings.mqtt5:
            properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            properties.MessageExpiryInterval = max(1, int(expiry_s))
        # aiomqtt's publish awaits before it hands the message over; paho's own call is
        # synchronous (aiomqtt ignores the PUBACK of a message id it did not send)
        paho: Any = client._client
        info = paho.publish(topic, payload, qos=qos, properties=properties)
        if info.rc != 0:
            raise MqttUnavailable(f"could not publish to {topic}: client error {info.rc}")
        self.stats.published += 1
        if flush:
            paho.loop_write()  # paho's own writer; a short write leaves the rest queued

    async def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        retain: bool = False,
        qos: int = 1,
        expiry_s: int | None = None,
    ) -> None:
        """Publish (QoS 1 by default).  ``expiry_s``: on MQTT 5, the broker discards the
        message if it cannot deliver it within that time (a stale command must never
        reach a board late); ignored on 3.1.1."""
        properties = None
        if expiry_s is not None and self.settings.mqtt5:
            properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            properties.MessageExpiryInterval = max(1, int(expiry_s))
        async with self._inflight:
            deadline = asyncio.get_running_loop().time() + self.settings.publish_timeout
            while True:
                client = self._client
                lost = self._lost
                if client is not None and self.connected.is_set() and not lost.done():
                    # aiomqtt waits for a PUBACK even after the link died; race it
                    # against the loss of this connection and resend on the next one.
                    sending = asyncio.ensure_future(
                        client.publish(
                            topic,
                            payload,
                            qos=qos,
                            retain=retain,
                            properties=properties,
                            timeout=self.settings.publish_timeout,
                        )
                    )
                    try:
                        await asyncio.wait({sending, lost}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        if not sending.done():
                            sending.cancel()
                    if sending.done() and not sending.cancelled():
                        exc = sending.exception()
                        if exc is None:
                            self.stats.published += 1
                            return
                        if not isinstance(exc, aiomqtt.MqttError):
                            raise exc
                        log.debug("publish to %s failed (%s); waiting for reconnect", topic, exc)
                remaining = deadline - asyncio.get_running_loop().time()
                if remaining <= 0 or self._closing.is_set():
                    raise MqttUnavailable(f"could not publish to {topic}: broker unavailable")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.connected.wait(), min(remaining, 1.0))

    def _dispatch(self, topic: str, payload: bytes) -> None:
        self.stats.received += 1
        for topic_filter, handler in self._routes:
            if topic_matches(topic_filter, topic):
                try:
                    handler(topic, payload)
                except ValueError as exc:  # PayloadError, TopicError: bad input, not a bug
                    self.stats.count_drop(type(exc).__name__)
                    log.warning("dropped message on %s: %s", topic, exc)
                except Exception as exc:  # a handler bug: one message lost, not the session
                    self.stats.count_drop(f"handler-bug:{type(exc).__name__}")
                    log.exception("handler for %s failed; message dropped", topic)
                return
        self.stats.count_drop("unrouted")

    def _make_client(self) -> aiomqtt.Client:
        s = self.settings
        will = None
        if self.will is not None:
            will = aiomqtt.Will(self.will.topic, self.will.payload, qos=1, retain=self.will.retain)
        client = aiomqtt.Client(
            s.host,
            s.port,
            username=s.username,
            password=s.password,
            identifier=self.client_id,
            protocol=aiomqtt.ProtocolVersion.V5 if s.mqtt5 else aiomqtt.ProtocolVersion.V311,
            will=will,
            clean_session=None if s.mqtt5 else True,
            keepalive=s.keepalive,
            timeout=s.connect_timeout,
            max_inflight_messages=s.max_inflight,
            tls_context=s.tls_context(),
            tls_insecure=s.tls_insecure if s.tls else None,
        )
        # We bound in-flight publishes ourselves; aiomqtt's own warning fires at 10.
        client.pending_calls_threshold = s.max_inflight * 2
        return client

    async def _run(self) -> None:
        delay = self.settings.reconnect_min
        while not self._closing.is_set():
            try:
                async with self._make_client() as client:
                    self._lost = asyncio.get_running_loop().create_future()
                    self._client = client
                    early = self._receive_from_paho(client)
                    for topic_filter, _ in list(self._routes):
                        await client.subscribe(topic_filter, qos=1)
                    self.stats.connects += 1
                    self.connected.set()
                    delay = self.settings.reconnect_min
                    for callback in list(self._on_connect):
                        task = asyncio.create_task(self._guard(callback))
                        self._callbacks.add(task)
                        task.add_done_callback(self._callbacks.discard)
                    early.flush()
                    gone = client._disconnected
                    await asyncio.wait({gone})
                    cause = None if gone.cancelled() else gone.exception()
                    raise aiomqtt.MqttError("disconnected from the broker") from cause
            except aiomqtt.MqttError as exc:
                self.last_error = str(exc)
                if isinstance(exc, aiomqtt.MqttCodeError) and _refusal(exc):
                    # Bad credentials or no authorisation: retrying cannot help.
                    log.error("MQTT %s: broker refused the connection: %s", self.client_id, exc)
                    self._refused.set()
                    return
                if not self._closing.is_set():
                    log.info("MQTT %s: connection lost (%s); reconnecting", self.client_id, exc)
            finally:
                self._client = None
                self.connected.clear()
                if not self._lost.done():
                    self._lost.set_result(None)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), delay)
            delay = min(delay * 2, self.settings.reconnect_max)

    def _receive_from_paho(self, client: aiomqtt.Client) -> _EarlyMessages:
        """Dispatch each message from paho's own callback, as it is parsed off the socket.
        aiomqtt's message iterator costs a task, an ``asyncio.wait`` and three loop turns
        per message, each behind every other ready callback of the process: at a
        bank-wide start that hop was most of an emulated board's delay (200 boards share
        one process).  Messages arriving while we subscribe are held until the session
        is connected, as the iterator held them."""
        early = _EarlyMessages(self._dispatch)

        def on_message(_client: Any, _userdata: Any, message: Any) -> None:
            early.receive(message.topic, bytes(message.payload or b""))

        paho: Any = client._client
        paho.on_message = on_message
        return early

    async def _guard(self, callback: ConnectCallback) -> None:
        try:
            await callback()
        except (MqttUnavailable, aiomqtt.MqttError) as exc:
            log.info("resync after connect failed (%s); next connect retries", exc)
