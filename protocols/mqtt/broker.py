"""Embedded MQTT 3.1.1 broker (amqtt) for the zero-setup default, demos and tests.

It binds loopback only, port 0 unless told otherwise, and reports the port it got.
Anonymous clients only: it never leaves the machine; sites with a real broker
(Mosquitto, with passwords and TLS) point ``--broker`` at that instead.

amqtt clears sessions and retained messages when it starts, so a restart here is a
harsher test than a Mosquitto restart with persistence: boards must republish their
retained state and the gateway must resync (see ``protocols.mqtt.client``).
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Any

from amqtt.broker import Broker

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SHUTDOWN_TIMEOUT = 5.0


def _config(host: str, port: int) -> dict[str, Any]:
    return {
        "listeners": {"default": {"type": "tcp", "bind": f"{host}:{port}"}},
        # Only anonymous auth: the default plugin set also starts $SYS and packet
        # loggers we do not want in a gateway process.
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }


class EmbeddedBroker:
    """``async with EmbeddedBroker() as broker: broker.url`` -> ``mqtt://127.0.0.1:PORT``."""

    def __init__(self, host: str = LOOPBACK, port: int = 0) -> None:
        if host not in (LOOPBACK, "localhost", "::1"):
            raise ValueError("the embedded broker binds loopback only")
        self.host = host
        self.port = port
        self._broker: Broker | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def running(self) -> bool:
        return self._broker is not None

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("broker not started")
        return f"mqtt://{self.host}:{self.port}"

    async def start(self) -> int:
        """Start listening; returns the bound port (the same one again after a restart)."""
        if self._broker is not None:
            return self.port
        broker = Broker(_config(self.host, self.port), loop=asyncio.get_running_loop())
        accept = broker.stream_connected

        async def track(
            reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener_name: str
        ) -> None:
            self._writers.add(writer)
            try:
                await accept(reader, writer, listener_name=listener_name)
            finally:
                self._writers.discard(writer)

        broker.stream_connected = track  # type: ignore[method-assign,unused-ignore]  # stop()
        await broker.start()
        server = broker._servers["default"].instance  # amqtt exposes no bound-port API
        self.port = int(server.sockets[0].getsockname()[1])
        self._broker = broker
        log.info("embedded MQTT broker on %s:%d", self.host, self.port)
        return self.port

    async def stop(self) -> None:
        """Stop like a crashed or restarted broker: connections are cut, not closed
        politely.  amqtt's own shutdown can wait forever on a session whose reader is
        mid-read (Python 3.11 ``wait_for``), so we stop accepting, abort every client
        transport first, and bound the rest."""
        broker, self._broker = self._broker, None
        if broker is None:
            return
        for server in broker._servers.values():
            if server.instance is not None:
                server.instance.close()
        for writer in list(self._writers):
            writer.transport.abort()
        try:
            await asyncio.wait_for(broker.shutdown(), SHUTDOWN_TIMEOUT)
        except TimeoutError:
            log.warning("embedded broker shutdown took over %.0f s; abandoned", SHUTDOWN_TIMEOUT)

    async def restart(self, downtime: float = 0.0) -> None:
        """Stop, stay down ``downtime`` seconds, start again on the same port."""
        await self.stop()
        if downtime > 0:
            await asyncio.sleep(downtime)
        await self.start()

    async def __aenter__(self) -> EmbeddedBroker:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
