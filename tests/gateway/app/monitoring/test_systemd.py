"""sd_notify to a test datagram socket: READY=1 once recovery is done, WATCHDOG=1 only
while the liveness checks pass, STATUS= with what /readyz says, STOPPING=1 at the end."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from gateway.app.monitoring.systemd import Notifier, status_line, watch, watchdog_interval
from gateway.web.api.ops import Check


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(10)  # bounded: a message that never comes fails the test
    try:
        yield sock, str(path)
    finally:
        sock.close()


def _fields(datagram: bytes) -> dict[str, str]:
    return dict(line.split("=", 1) for line in datagram.decode().splitlines())


async def _next(sock: socket.socket) -> dict[str, str]:
    return _fields(await asyncio.to_thread(sock.recv, 4096))


def test_notify_sends_one_datagram_of_key_value_lines(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    notifier = Notifier(path)
    try:
        assert notifier.notify(READY=1, STATUS="serving\nbank A")
        assert _fields(sock.recv(4096)) == {"READY": "1", "STATUS": "serving bank A"}
    finally:
        notifier.close()


def test_abstract_socket_names_start_with_an_at() -> None:
    name = f"reelgate-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(10)
    notifier = Notifier.from_env({"NOTIFY_SOCKET": "@" + name})
    try:
        assert notifier.notify(WATCHDOG=1)
        assert _fields(sock.recv(4096)) == {"WATCHDOG": "1"}
    finally:
        notifier.close()
        sock.close()


def test_without_notify_socket_nothing_is_sent(tmp_path: Path) -> None:
    notifier = Notifier.from_env({})
    assert not notifier.enabled
    assert not notifier.notify(READY=1)
    gone = Notifier(str(tmp_path / "nobody-listens.sock"))
    assert not gone.notify(READY=1)  # logged once, never raised: the floor goes on
    gone.close()


def test_watchdog_interval_is_half_the_usec_for_this_process() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    mine = str(os.getpid())
    assert watchdog_interval({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": mine}) == 1.0
    assert watchdog_interval({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert watchdog_interval({}) is None


def test_status_line_names_the_failing_checks() -> None:
    assert status_line([Check("database", True, "revision 0010")]) == "ready"
    line = status_line([Check("database", False, "gone"), Check("bank:A", False, "A-002")])
    assert line == "not ready: database: gone; bank:A: A-002"


async def test_watch_readies_after_recovery_then_pings_while_live(
    listener: tuple[socket.socket, str],
) -> None:
    sock, path = listener
    recovered = asyncio.Event()
    live = [Check("event_loop", True, "lag 0 ms")]
    ready: list[Check] = [Check("database", True, "revision 0010")]

    async def readiness() -> Sequence[Check]:
        return ready

    notifier = Notifier(path)
    task = asyncio.create_task(
        watch(
            notifier,
            recovered=recovered.wait,
            liveness=lambda: live,
            readiness=readiness,
            interval_s=0.01,
        )
    )
    try:
        await asyncio.sleep(0)
        recovered.set()  # nothing was sent before: READY=1 comes first
        assert await _next(sock) == {"READY": "1", "STATUS": "ready"}
        assert await _next(sock) == {"WATCHDOG": "1"}
        assert await _next(sock) == {"STATUS": "ready"}

        ready = [Check("broker", False, "not connected")]  # an outage: reported, still pinged
        seen = [await _next(sock) for _ in range(4)]
        assert {"WATCHDOG": "1"} in seen
        assert {"STATUS": "not ready: broker: not connected"} in seen

        live = [Check("event_loop", False, "no heartbeat for 12.0 s")]  # stuck: no ping
        for _ in range(20):  # bounded: up to the first tick that saw the stuck loop
            if (await _next(sock)).get("STATUS", "").startswith("not ready: event_loop"):
                break
        else:
            raise AssertionError("the stuck loop never showed in STATUS")
        following = [await _next(sock) for _ in range(3)]
        assert all("WATCHDOG" not in f for f in following)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert await _next(sock) == {"STOPPING": "1"}
    notifier.close()
