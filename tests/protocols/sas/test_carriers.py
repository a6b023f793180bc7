"""Carriers move the escaped SAS stream unchanged; serial translates the 9th bit."""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios

import pytest

from protocols.sas.carriers import (
    Carrier,
    CarrierClosed,
    connect_tcp,
    memory_pair,
    open_serial,
    serve_tcp,
    split_wakeup,
)
from protocols.sas.carriers.uart import CMSPAR, TermiosUart
from protocols.sas.endpoint import Endpoint, EndpointError, parse_endpoint


class Sink:
    def __init__(self, carrier: Carrier) -> None:
        self.data = bytearray()
        self.lost: list[Exception | None] = []
        self.changed = asyncio.Event()
        carrier.set_handlers(self._on_data, self._on_lost)

    def _on_data(self, data: bytes) -> None:
        self.data += data
        self.changed.set()

    def _on_lost(self, exc: Exception | None) -> None:
        self.lost.append(exc)
        self.changed.set()

    async def wait_for(self, n: int) -> bytes:
        async with asyncio.timeout(5):
            while len(self.data) < n:
                self.changed.clear()
                await self.changed.wait()
        return bytes(self.data)

    async def wait_lost(self) -> None:
        async with asyncio.timeout(5):
            while not self.lost:
                self.changed.clear()
                await self.changed.wait()


async def test_memory_pair_moves_bytes_both_ways_and_reports_close() -> None:
    host, egm = memory_pair()
    at_egm, at_host = Sink(egm), Sink(host)
    host.write(b"\xff\x00\x81")
    egm.write(b"\x00")
    assert await at_egm.wait_for(3) == b"\xff\x00\x81"
    assert await at_host.wait_for(1) == b"\x00"
    host.close()
    await at_egm.wait_lost()
    with pytest.raises(CarrierClosed):
        host.write(b"\x01")


async def test_bytes_before_handlers_are_kept() -> None:
    host, egm = memory_pair()
    host.write(b"\x01\x02")
    await asyncio.sleep(0)
    sink = Sink(egm)
    assert await sink.wait_for(2) == b"\x01\x02"


async def test_tcp_client_and_server_exchange_escaped_stream() -> None:
    accepted: list[Carrier] = []
    got = asyncio.Event()

    def on_connection(carrier: Carrier) -> None:
        accepted.append(carrier)
        got.set()

    server = await serve_tcp("127.0.0.1", 0, on_connection)
    port = server.sockets[0].getsockname()[1]
    try:
        client = await connect_tcp("127.0.0.1", port)
        at_host = Sink(client)
        async with asyncio.timeout(5):
            await got.wait()
        at_egm = Sink(accepted[0])
        client.write(b"\xff\x00\x01\x1a")  # LP 1A to address 1
        assert await at_egm.wait_for(4) == b"\xff\x00\x01\x1a"
        accepted[0].write(b"\x01\x1a\x00\x00\x12\x34\x45\x2d")
        assert await at_host.wait_for(8) == b"\x01\x1a\x00\x00\x12\x34\x45\x2d"
        accepted[0].close()
        await at_host.wait_lost()
        assert client.closed
    finally:
        server.close()
        await server.wait_closed()


async def test_tcp_connect_refused_is_an_os_error() -> None:
    server = await serve_tcp("127.0.0.1", 0, lambda c: None)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    with pytest.raises(OSError):  # noqa: PT011
        await connect_tcp("127.0.0.1", port)


def test_split_wakeup_marks_only_escaped_bytes() -> None:
    assert list(split_wakeup(b"\xff\x00\x01\x01\x51\x08")) == [
        (True, b"\x01"),
        (False, b"\x01\x51\x08"),
    ]
    # FF FF is a literal FF data byte, not a wakeup
    assert list(split_wakeup(b"\x01\xff\xff\x02")) == [(False, b"\x01\xff\x02")]
    # a chirp: the address alone with the wakeup bit
    assert list(split_wakeup(b"\xff\x00\x05")) == [(True, b"\x05")]
    # a sync general poll and the next poll's address: one MARK run, then the body
    assert list(split_wakeup(b"\xff\x00\x80\xff\x00\x01\x01\x51\x08")) == [
        (True, b"\x80\x01"),
        (False, b"\x01\x51\x08"),
    ]
    with pytest.raises(ValueError, match="ends inside an FF escape"):
        list(split_wakeup(b"\x01\xff"))
    with pytest.raises(ValueError, match="bad escape FF 07"):
        list(split_wakeup(b"\xff\x07\x01"))


async def test_serial_carrier_over_a_pty_sets_parity_and_parmrk() -> None:
    """A pseudo-terminal has no parity on the wire, but its line discipline applies the
    same termios input flags: with PARMRK a data FF must arrive doubled (FF FF), i.e. in
    the escaped form, and the send side must switch MARK/SPACE around the wakeup byte."""
    master, slave = os.openpty()
    calls: list[bool] = []

    class RecordParity(TermiosUart):
        def set_wakeup(self, wakeup: bool) -> None:
            calls.append(wakeup)
            super().set_wakeup(wakeup)

    try:
        carrier = await open_serial(os.ttyname(slave), uart=RecordParity)
        try:
            attrs = termios.tcgetattr(carrier.port.fileno())
            assert attrs[0] & termios.PARMRK
            assert attrs[0] & termios.INPCK
            assert not attrs[0] & termios.ISTRIP
            sink = Sink(carrier)
            os.write(master, b"\x01\xff\x02")
            assert await sink.wait_for(4) == b"\x01\xff\xff\x02"

            carrier.write(b"\xff\x00\x01\x01\x51\x08")  # LP 01 shutdown, address 1
            out = bytearray()
            async with asyncio.timeout(5):
                while len(out) < 4:
                    await asyncio.sleep(0.01)
                    with contextlib.suppress(BlockingIOError):
                        out += os.read(master, 64)
            assert bytes(out) == b"\x01\x01\x51\x08"
            assert calls == [True, False]
            cflag = termios.tcgetattr(carrier.port.fileno())[2]
            assert cflag & CMSPAR  # stick parity (a pty clears PARENB itself: no wire)
            assert not cflag & termios.PARODD  # SPACE after the body
        finally:
            await carrier.aclose()
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("sas+tcp://127.0.0.1:7001?address=3", Endpoint("sas+tcp", 3, host="127.0.0.1", port=7001)),
        ("sas+tcp://localhost:7001", Endpoint("sas+tcp", 1, host="localhost", port=7001)),
        (
            "sas+serial:///dev/ttyUSB0?address=127",
            Endpoint("sas+serial", 127, device="/dev/ttyUSB0"),
        ),
        ("SAS+TCP://[::1]:9?address=1", Endpoint("sas+tcp", 1, host="::1", port=9)),
    ],
)
def test_endpoint_parses(uri: str, expected: Endpoint) -> None:
    endpoint = parse_endpoint(uri)
    assert endpoint == expected
    assert parse_endpoint(str(endpoint)) == endpoint


@pytest.mark.parametrize(
    ("uri", "complaint"),
    [
        ("tcp://127.0.0.1:7001", "scheme"),
        ("sas+tcp://127.0.0.1?address=1", "missing port"),
        ("sas+tcp://127.0.0.1:http", "bad port"),
        ("sas+tcp://127.0.0.1:70000", "bad port"),
        ("sas+tcp://:7001", "missing host"),
        ("sas+tcp://127.0.0.1:7001?address=0", "1..127"),
        ("sas+tcp://127.0.0.1:7001?address=128", "1..127"),
        ("sas+tcp://127.0.0.1:7001?address=x", "1..127"),
        ("sas+tcp://127.0.0.1:7001?address=1&address=2", "more than once"),
        ("sas+tcp://127.0.0.1:7001?adress=1", "unknown parameter"),
        ("sas+tcp://127.0.0.1:7001/x", "no path"),
        ("sas+serial://dev/ttyS0", "three slashes"),
        ("sas+serial:///?address=1", "device path"),
    ],
)
def test_endpoint_errors_name_the_problem(uri: str, complaint: str) -> None:
    with pytest.raises(EndpointError, match=complaint):
        parse_endpoint(uri)
