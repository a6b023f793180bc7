"""The serial carrier's send side: one message = its wakeup run + one body write, in order,
and the parity switch between them inside the SAS 5 ms inter-byte gap (sas.md §1).

Two rigs, both on a real pseudo-terminal (a pty has no parity on its wire, so the 9th bit
is seen through the UART operations the carrier makes):

* the real :class:`TermiosUart` on the pty, wrapped to record each operation: the order
  of writes, drains and parity changes is the carrier's own;
* :class:`WireModel`, a UART + cable + EGM UART in *line time* (a simulated clock: each
  character 11/19 200 s, a drain returning a set latency after the last character left):
  it hands every byte, with its wakeup bit and its time on the wire, to an emulated EGM
  whose 5 ms gap rule is on, and writes the EGM's replies back into the pty.  Nothing
  depends on the wall clock: the wire times are the model's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator

import pytest

from emulators.bank import Bank
from emulators.machine import EmulatedMachine
from emulators.sas_face import SasFace
from gateway.app.cli import build_parser
from protocols.sas import (
    GeneralPoll,
    HostMessage,
    LinkSettings,
    SendCurrentCredits,
    Shutdown,
    Startup,
    TruncatedFrameError,
    encode_host_message,
)
from protocols.sas.carriers import MemoryCarrier, connect_tcp, open_serial, split_wakeup
from protocols.sas.carriers.uart import TIOCSER_TEMT, TermiosUart
from protocols.sas.client import SasClient, SasTimeout
from protocols.sas.link import EgmLink

CHAR = 11 / 19_200  # one SAS character on the wire (s)
GAP = 0.005  # SAS inter-byte limit
# Host timing for these tests: the replies cross a worker thread and a pty, so the reply
# window is wide; the wire timing under test is the model's, not this.
HOST = LinkSettings(reply_timeout=0.300, inter_byte_gap=0.050)

Op = tuple[str, bytes | bool | None]


@contextlib.contextmanager
def pty() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    os.set_blocking(master, False)
    try:
        yield master, os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


class RecordingUart(TermiosUart):
    """The real UART operations on the pty, each one logged in the order made."""

    def __init__(self, fd: int, log: list[Op]) -> None:
        super().__init__(fd)
        self.log = log

    def write(self, data: bytes) -> None:
        self.log.append(("write", data))
        super().write(data)

    def drain(self) -> None:
        self.log.append(("drain", None))
        super().drain()

    def set_wakeup(self, wakeup: bool) -> None:
        self.log.append(("parity", wakeup))
        super().set_wakeup(wakeup)


async def read_master(master: int, n: int) -> bytes:
    out = bytearray()
    async with asyncio.timeout(5):
        while len(out) < n:
            with contextlib.suppress(BlockingIOError):
                out += os.read(master, 256)
            await asyncio.sleep(0.005)
    return bytes(out)


def expected_ops(messages: list[bytes]) -> list[Op]:
    """What the carrier must do: per parity run one write, a drain + parity change only
    where the parity changes (a general poll is one MARK run; a sync and the next poll's
    address share one)."""
    ops: list[Op] = []
    parity: bool | None = None
    for message in messages:
        for wakeup, raw in split_wakeup(message):
            if wakeup != parity:
                ops += [("drain", None), ("parity", wakeup)]
                parity = wakeup
            ops.append(("write", raw))
    return ops


async def test_each_message_is_its_wakeup_run_then_one_body_write_in_order() -> None:
    polls: list[HostMessage] = [
        Shutdown(1),
        GeneralPoll(1),
        GeneralPoll(2),
        SendCurrentCredits(3),
        Startup(1),
    ]
    messages = [encode_host_message(p) for p in polls]
    messages.append(encode_host_message(GeneralPoll(0)) + encode_host_message(Shutdown(4)))
    log: list[Op] = []
    with pty() as (master, path):
        carrier = await open_serial(path, uart=lambda fd: RecordingUart(fd, log))
        try:
            for message in messages:  # all queued in one loop turn, none awaited
                carrier.write(message)
            raw = b"".join(r for m in messages for _, r in split_wakeup(m))
            assert await read_master(master, len(raw)) == raw
            assert log == expected_ops(messages)
            # the first: 01 with MARK, then 01 51 08 with SPACE -- two writes, no more
            assert log[:6] == [
                ("drain", None),
                ("parity", True),
                ("write", b"\x01"),
                ("drain", None),
                ("parity", False),
                ("write", b"\x01\x51\x08"),
            ]
            assert log[-6:-3] == [("drain", None), ("parity", True), ("write", b"\x80\x04")]
            uart = carrier.uart
            assert isinstance(uart, TermiosUart)
            assert uart.write_calls == sum(1 for op in log if op[0] == "write")
            assert uart.has_lsr is False  # a pty has no TIOCSERGETLSR: tcdrain fallback
            assert carrier.stats.messages == len(messages)
            assert carrier.stats.switches == 4  # LP 01, LP 1A, LP 02, LP 01 (sync + poll)
        finally:
            await carrier.aclose()


class WireModel:
    """UART, cable and EGM UART in line time (see the module doc).  ``drain_latency``:
    how long after the last character left the drain returns -- the host's pause before
    the body of a message."""

    def __init__(self, egm: EgmLink, master: int, drain_latency: float) -> None:
        self.egm = egm
        self.master = master
        self.drain_latency = drain_latency
        self.now = 0.0  # the host thread's time
        self.free_at = 0.0  # when the transmitter finishes what it was given
        self.wakeup = False
        self.ops: list[Op] = []
        self.body_gaps: list[float] = []  # idle line before the first body byte

    def write(self, data: bytes) -> None:
        self.ops.append(("write", data))
        for i, b in enumerate(data):
            start = max(self.now, self.free_at)
            if not self.wakeup and i == 0:
                self.body_gaps.append(start - self.free_at)
            self.free_at = start + CHAR
            wire = bytes((0xFF, 0x00, b)) if self.wakeup else bytes((b,)) * (1 + (b == 0xFF))
            self.egm.receive_data(wire, self.free_at)
        reply = self.egm.data_to_send()
        if reply:  # an EGM's reply has no wakeup bit: raw bytes into the host's port
            os.write(self.master, b"".join(raw for _, raw in split_wakeup(reply)))

    def drain(self) -> None:
        self.ops.append(("drain", None))
        self.now = max(self.now, self.free_at) + self.drain_latency

    def set_wakeup(self, wakeup: bool) -> None:
        self.ops.append(("parity", wakeup))
        self.wakeup = wakeup


@pytest.mark.parametrize(
    ("drain_latency", "accepted"),
    [
        (0.000_15, True),  # TIOCSERGETLSR polling on a 16550-class port
        (0.006, False),  # a host that pauses 6 ms between address and body
    ],
    ids=["ours", "pausing-host"],
)
async def test_the_emulator_gap_option_refuses_a_pausing_host_and_accepts_ours(
    drain_latency: float, accepted: bool
) -> None:
    face = SasFace(EmulatedMachine("G1"), 1, enforce_gap=True)
    with pty() as (master, path):
        models: list[WireModel] = []

        def model(fd: int) -> WireModel:
            models.append(WireModel(face.link, master, drain_latency))
            return models[0]

        carrier = await open_serial(path, uart=model)
        client = SasClient(carrier, 1, settings=HOST, min_spacing=0.0)
        wire = models[0]
        try:
            assert await client.general_poll() == 0  # one MARK byte: no switch, always fine
            if accepted:
                await client.unlock()
                assert await client.credits() == face.machine.credits
                await client.lock()
                assert not [e for e in face.link.events() if isinstance(e, TruncatedFrameError)]
                assert max(wire.body_gaps) < GAP
            else:
                with pytest.raises(SasTimeout):
                    await client.lock()  # LP 01: every try cut by the pause, never answered
                cut = [e for e in face.link.events() if isinstance(e, TruncatedFrameError)]
                assert len(cut) == 3  # the first try and both repeats
                assert min(wire.body_gaps) > GAP
                assert not face.machine.play_locked
            # every message: drain + parity only where it changes, one write per run
            sent = [op[1] for op in wire.ops if op[0] == "write"]
            assert all(isinstance(s, bytes) and s for s in sent)
            assert carrier.stats.runs == len(sent)
        finally:
            await client.close()
            face.close()


class FakeLsr:
    """``TIOCSERGETLSR`` answers: busy ``busy`` times, then transmitter empty; time moves
    only by the polling's own sleeps."""

    def __init__(self, busy: int, *, supported: bool = True) -> None:
        self.busy = busy
        self.supported = supported
        self.reads = 0
        self.now = 0.0

    def read(self, fd: int) -> int:
        self.reads += 1
        if not self.supported:
            raise OSError(25, "Inappropriate ioctl for device")
        if self.reads > self.busy:
            return TIOCSER_TEMT
        return 0

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _uart(fd: int, lsr: FakeLsr) -> TermiosUart:
    return TermiosUart(fd, read_lsr=lsr.read, clock=lambda: lsr.now, sleep=lsr.sleep)


def test_drain_polls_the_transmitter_and_stops_when_it_is_empty() -> None:
    # the address byte takes 0.57 ms: about 12 checks 50 us apart, then the switch
    lsr = FakeLsr(busy=12)
    with pty() as (_, path):
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        try:
            uart = _uart(fd, lsr)
            uart.drain()
            assert lsr.reads == 13
            assert lsr.now == pytest.approx(12 * 50e-6)  # noticed within one interval
            assert uart.has_lsr is True
        finally:
            os.close(fd)


@pytest.mark.parametrize(
    "lsr", [FakeLsr(busy=10**9), FakeLsr(busy=0, supported=False)], ids=["stuck", "no-ioctl"]
)
def test_drain_falls_back_to_tcdrain(lsr: FakeLsr) -> None:
    with pty() as (_, path):
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        try:
            uart = _uart(fd, lsr)
            uart.drain()  # returns (the pty's tcdrain) instead of polling for ever
            if lsr.supported:
                assert lsr.now >= uart.drain_limit
                assert uart.has_lsr is True  # asked again next time
            else:
                assert lsr.reads == 1
                assert uart.has_lsr is False
                uart.drain()
                assert lsr.reads == 1  # never asked again
        finally:
            os.close(fd)


class RecordingMemory(MemoryCarrier):
    """The host end of a memory pair, keeping every write as it was handed over."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def _write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        super()._write(data)


async def test_the_client_hands_the_carrier_each_message_whole() -> None:
    host, egm = RecordingMemory(), MemoryCarrier()
    host._peer, egm._peer = egm, host
    face = SasFace(EmulatedMachine("G1"), 1)
    face.attach(egm)
    client = SasClient(host, 1, settings=HOST, min_spacing=0.0)
    try:
        await client.general_poll()
        await client.general_poll()  # identical: a sync general poll goes first
        await client.unlock()
        await client.credits()
        prepared = client.prepare_lock()
        await prepared.fire()
        sync = encode_host_message(GeneralPoll(0))
        assert host.writes == [
            encode_host_message(GeneralPoll(1)),
            sync + encode_host_message(GeneralPoll(1)),
            encode_host_message(Startup(1)),
            encode_host_message(SendCurrentCredits(1)),
            encode_host_message(Shutdown(1)),
        ]
    finally:
        await client.close()
        face.close()


@pytest.mark.parametrize("enforce_gap", [True, False], ids=["gap-rule", "lenient"])
async def test_emulate_sas_enforce_gap_drops_a_message_paused_mid_way(enforce_gap: bool) -> None:
    """``reelgate emulate sas --enforce-gap`` (the bank option) over TCP: a host pausing
    20 ms after the address byte gets silence; the same poll written whole is answered."""
    args = build_parser("emulate").parse_args(
        ["emulate", "sas", "--machines", "1"] + (["--enforce-gap"] if enforce_gap else [])
    )
    assert args.enforce_gap is enforce_gap
    bank = Bank(1, enforce_gap=args.enforce_gap)
    (machine,) = await bank.start()
    host = await connect_tcp("127.0.0.1", machine.port)
    got = bytearray()
    arrived = asyncio.Event()

    def on_data(data: bytes) -> None:
        got.extend(data)
        arrived.set()

    host.set_handlers(on_data)
    lp01 = encode_host_message(Shutdown(1))  # FF 00 01 | 01 51 08
    try:
        host.write(lp01[:3])
        await asyncio.sleep(0.020)  # never shorter than asked: a pause over 5 ms
        host.write(lp01[3:])
        if enforce_gap:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await arrived.wait()
            assert got == b""
            assert not machine.machine.play_locked
            host.write(lp01)  # one write, one TCP segment: its bytes arrive together
        async with asyncio.timeout(5):
            await arrived.wait()
        assert bytes(got) == b"\x01"  # ACK
        assert machine.machine.play_locked
    finally:
        host.close()
        await bank.close()
