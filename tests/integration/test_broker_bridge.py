"""A venue broker bridges the live feed to a central Mosquitto (deploy/mosquitto/venue-bridge.conf).

Two real ``mosquitto`` processes on free loopback ports: the venue's, loaded with the
shipped bridge file (only its ``address`` line pointed at the central port), and the
central one.  The gateway's own feed publisher (:class:`protocols.mqtt.feed.MqttFeed`)
publishes on the venue broker; a sign's subscriber on the central broker (aiomqtt)
receives the feed, and nothing else of the venue.  Then the venue is cut off (the central
broker SIGKILLed) while the heat goes on publishing, and once the centre is back the
venue delivers what it queued (QoS 1, persistent bridge session).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiomqtt
import pytest

from protocols.mqtt.feed import MqttFeed

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "deploy" / "mosquitto" / "venue-bridge.conf"
SITE = "ridge"  # the site the shipped file names
FEED = f"reelgate/v1/{SITE}/feed"
MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Broker:
    """One mosquitto process (``mosquitto -c FILE``), restartable on the same port."""

    def __init__(self, name: str, folder: Path, extra: str = "") -> None:
        self.name, self.port = name, _free_port()
        self.data = folder / name
        self.data.mkdir()
        self.log = folder / f"{name}.log"
        self.conf = folder / f"{name}.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            f"user {getpass.getuser()}\n"  # as root, mosquitto would switch to its own user
            "persistence true\n"
            f"persistence_location {self.data}/\n"
            "max_queued_messages 20000\n"
            f"log_dest file {self.log}\n"
            "log_type all\n" + extra
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def _spawn(self) -> subprocess.Popen[bytes]:
        assert MOSQUITTO is not None
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self.proc

    async def start(self) -> None:
        proc = self._spawn()
        for _ in range(100):  # bounded: 5 s for the listener to accept
            if proc.poll() is not None:
                raise AssertionError(f"{self.name} broker exited: {self.tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{self.name} broker did not listen on {self.port}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        self.proc = None

    def tail(self) -> str:
        return self.log.read_text()[-2000:] if self.log.exists() else "(no log)"


def venue_bridge(central_port: int) -> str:
    """The shipped bridge file with its central address pointed at the test's broker."""
    text = BRIDGE.read_text()
    text, n = re.subn(r"(?m)^address .*$", f"address 127.0.0.1:{central_port}", text)
    assert n == 1, "the bridge file has one address line"
    return text


@pytest.fixture
def brokers(tmp_path: Path) -> Iterator[tuple[Broker, Broker]]:
    central = Broker("central", tmp_path)
    venue = Broker("venue", tmp_path, venue_bridge(central.port))
    try:
        yield venue, central
    finally:  # never leave a broker behind, whatever failed
        venue.kill()
        central.kill()


@contextlib.asynccontextmanager
async def sign_at(central: Broker) -> AsyncIterator[aiomqtt.Client]:
    """A sign's subscriber on the central broker: the venue's feed and its bridge state."""
    async with aiomqtt.Client("127.0.0.1", central.port, identifier="sign-central") as sign:
        await sign.subscribe(f"{FEED}/#", qos=1)
        await sign.subscribe(f"reelgate/v1/{SITE}/#", qos=1)  # to see what must not cross
        yield sign


async def received(sign: aiomqtt.Client, wanted: set[str], within: float) -> dict[str, object]:
    """Messages on the central broker until every ``wanted`` topic has arrived."""
    seen: dict[str, object] = {}
    async with asyncio.timeout(within):
        async for message in sign.messages:
            assert isinstance(message.payload, bytes)
            seen[message.topic.value] = message.payload
            if wanted <= seen.keys():
                return seen
    raise AssertionError("unreachable")  # pragma: no cover


async def bridge_up(sign: aiomqtt.Client, central: Broker, within: float = 30.0) -> None:
    """Wait for the bridge's own notification (retained ``1``) at the centre."""
    state = f"reelgate/v1/{SITE}/bridge/state"
    try:
        async with asyncio.timeout(within):
            async for message in sign.messages:
                if message.topic.value == state and message.payload == b"1":
                    return
    except TimeoutError:
        raise AssertionError(f"bridge never connected: {central.tail()}") from None


def feed_payload(raw: object) -> dict[str, object]:
    assert isinstance(raw, bytes)
    data = json.loads(raw)
    assert isinstance(data, dict)
    return data


async def test_feed_crosses_to_the_centre_and_queues_while_the_venue_is_cut_off(
    brokers: tuple[Broker, Broker],
) -> None:
    venue, central = brokers
    await central.start()
    await venue.start()
    feed = await MqttFeed.connect(venue.url, SITE)
    try:
        # 1. Connected: the gateway's feed reaches a sign at the centre, boards' topics do not.
        async with sign_at(central) as sign:
            await bridge_up(sign, central)
            async with aiomqtt.Client("127.0.0.1", venue.port) as board_side:
                await board_side.publish(
                    f"reelgate/v1/{SITE}/board/A01/state", b'{"v":1}', qos=1, retain=True
                )
            feed.publish_nowait("current", {"heat": "h7"}, retain=True)
            feed.publish_nowait("heat/h7/state", {"state": "running"}, retain=True)
            feed.publish_nowait("heat/h7/seat/A01", {"credits": 420}, retain=True)
            await feed.flush()
            wanted = {f"{FEED}/current", f"{FEED}/heat/h7/state", f"{FEED}/heat/h7/seat/A01"}
            seen = await received(sign, wanted, within=10)
            assert feed_payload(seen[f"{FEED}/heat/h7/seat/A01"]) == {"v": 1, "credits": 420}
            assert feed_payload(seen[f"{FEED}/current"])["heat"] == "h7"
            # the board's message went to the venue first: had it crossed, it would be here
            assert not [t for t in seen if "/board/" in t], seen.keys()

        # 2. Cut off: the centre goes away while the heat plays on and publishes.  The
        # machine events are not retained: only the bridge's queue can bring them over
        # (a retained value would also come back as the bridge re-subscribes at the venue).
        central.kill()
        seats: dict[str, dict[str, object]] = {
            f"heat/h7/seat/A{i:02d}": {"credits": 1000 + i} for i in range(1, 21)
        }
        for topic, payload in seats.items():
            feed.publish_nowait(topic, payload, retain=True)
        events: dict[str, dict[str, object]] = {
            f"machine/A{i:02d}/event": {"event": "door-opened"} for i in range(1, 11)
        }
        for topic, payload in events.items():
            feed.publish_nowait(topic, payload)
        feed.publish_nowait("heat/h7/standings", {"rows": [], "official": True}, retain=True)
        await feed.flush()  # all of it acknowledged by the venue broker, none at the centre

        # 3. The centre returns: the venue delivers what it queued while away.
        await central.start()
        async with sign_at(central) as sign:
            wanted = {f"{FEED}/{t}" for t in (*seats, *events, "heat/h7/standings")}
            try:
                seen = await received(sign, wanted, within=40)
            except TimeoutError:
                raise AssertionError(
                    f"queued feed not delivered; venue log: {venue.tail()}"
                ) from None
            for topic, payload in (seats | events).items():
                assert feed_payload(seen[f"{FEED}/{topic}"]) == {"v": 1, **payload}
            assert feed_payload(seen[f"{FEED}/heat/h7/standings"])["official"] is True
    finally:
        await feed.close()
