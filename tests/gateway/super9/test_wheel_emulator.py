"""The emulated wheel: its noisy stream debounces to exactly its true results."""

from __future__ import annotations

import asyncio

import pytest

from emulators.wheel import WheelModel, WheelServer
from protocols.wheel import Debouncer, LineFramer, open_wheel, parse_wheel_url, read_results
from protocols.wheel.debounce import WheelResult


def test_model_stream_debounces_to_truth_with_every_fault_kind() -> None:
    model = WheelModel(seed=7, garbage_rate=0.1, restart_rate=0.2, misspin_rate=0.15)
    framer, bouncer = LineFramer(), Debouncer(confirmations=2)
    posted: list[WheelResult] = []
    for _ in range(300):
        for raw in model.next_game():
            for line in framer.feed(raw):
                result = bouncer.feed(line)
                if result is not None:
                    posted.append(result)
    assert posted == model.truth
    assert model.misspins
    assert model.restarts
    assert bouncer.counts["garbage"] > 0
    assert bouncer.counts["repeat"] > 0
    assert bouncer.counts["flagged"] > 0
    assert bouncer.counts["restart"] > 0


def test_same_seed_same_games() -> None:
    a, b = WheelModel(seed=3), WheelModel(seed=3)
    assert [a.next_game() for _ in range(20)] == [b.next_game() for _ in range(20)]


def test_wheel_urls() -> None:
    assert parse_wheel_url("wheel+tcp://127.0.0.1:4001").port == 4001
    serial = parse_wheel_url("wheel+serial:///dev/ttyUSB0?baud=19200")
    assert (serial.kind, serial.target, serial.baud) == ("serial", "/dev/ttyUSB0", 19200)
    for bad, why in (
        ("tcp://127.0.0.1:1", "scheme"),
        ("wheel+tcp://127.0.0.1", "HOST:PORT"),
        ("wheel+tcp://127.0.0.1:99999", "bad port"),
        ("wheel+tcp://127.0.0.1:abc", "bad port"),
        ("wheel+tcp://127.0.0.1:4001?baud=9600", "unknown parameter(s) baud"),
        ("wheel+serial://", "no serial device"),
        ("wheel+serial:///dev/ttyUSB0?baud=fast", "baud must be one of"),
        ("wheel+serial:///dev/ttyUSB0?baud=9601", "baud must be one of"),
        ("wheel+serial:///dev/ttyUSB0?parity=E", "unknown parameter(s) parity"),
        ("wheel+serial:///dev/ttyUSB0?&&", "malformed query"),
    ):
        with pytest.raises(ValueError) as err:  # noqa: PT011
            parse_wheel_url(bad)
        assert repr(bad) in str(err.value), bad
        assert why in str(err.value), bad


async def test_tcp_carrier_against_emulator() -> None:
    server = WheelServer(WheelModel(seed=11), line_interval=0, games=40)
    await server.start()
    try:
        link = await open_wheel(f"wheel+tcp://127.0.0.1:{server.port}")
        results = [r async for r in read_results(link.reader)]
        await link.close()
    finally:
        await asyncio.wait_for(server.close(), 5)
    assert results == server.model.truth
    assert len(results) >= 30


async def test_serial_carrier_over_a_pty() -> None:
    """The serial carrier (pyserial-asyncio, 9600 8N1 RTS/CTS) on a pseudo-terminal."""
    import os

    master, slave = os.openpty()
    try:
        link = await open_wheel(f"wheel+serial://{os.ttyname(slave)}")
        model = WheelModel(seed=2)
        games = [b"".join(model.next_game()) for _ in range(12)]

        def write_all() -> None:  # a thread: a full pty buffer blocks the writer
            for game in games:
                os.write(master, game)

        writer = asyncio.create_task(asyncio.to_thread(write_all))
        results: list[WheelResult] = []

        async def collect() -> None:
            async for result in read_results(link.reader):
                results.append(result)
                if len(results) == len(model.truth):
                    return

        await asyncio.wait_for(collect(), 10)
        await writer
        await link.close()
    finally:
        os.close(master)
        os.close(slave)
    assert results == model.truth
    assert results


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--port", "-1"], "--port -1: must be 0..65535"),
        (["--port", "70000"], "--port 70000"),
        (["--host", "192.0.2.1"], "loopback only"),
        (["--host", "not-a-host"], "loopback only"),
        (["--games", "0"], "--games 0"),
        (["--interval", "-1"], "--interval and --pause"),
    ],
)
def test_emulate_wheel_rejects_bad_options_in_one_line(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.app.cli import main

    assert main(["emulate", "wheel", *argv]) == 2
    err = capsys.readouterr().err
    assert complaint in err
    assert err.count("\n") == 1


def test_emulate_wheel_on_a_taken_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    from gateway.app.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["emulate", "wheel", "--port", str(port), "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "cannot serve the wheel" in err
    assert err.count("\n") == 1
