"""The capture file and the tap (issue 28, capture; docs/sas.md, real machines).

The tap records every byte both ways and changes nothing on the line; the file is the
documented JSON-lines format, bounded by a size limit and rotation; what it holds turns
back into the very escaped stream the carriers moved.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulators.machine import EmulatedMachine
from emulators.sas_face import SasFace
from emulators.sas_quirks import Quirks
from protocols.sas.capture import (
    EGM,
    HOST,
    CaptureError,
    CaptureRecord,
    parse_capture,
    records_of,
)
from protocols.sas.carriers.memory import memory_pair
from protocols.sas.carriers.tap import CaptureFile, TapCarrier
from protocols.sas.client import SasClient
from protocols.sas.wire import StreamDecoder, escape


class Clock:
    """Monotonic seconds moved by hand (no wall clock in a unit test)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_record_line_is_the_documented_format() -> None:
    rec = CaptureRecord(0.0123456, HOST, bytes.fromhex("01 01 51 08"), (0,))
    assert json.loads(rec.to_json()) == {
        "t": 0.012346,
        "dir": "host",
        "hex": "01 01 51 08",
        "wakeup": [0],
    }
    assert rec.escaped() == bytes.fromhex("ff 00 01 01 51 08")


# escaped streams as carriers move them: wakeup bytes, literal FF, plain bytes
_pieces = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=6).map(lambda b: escape(b, wakeup=False)),
        st.integers(0, 255).map(lambda b: escape(bytes((b,)), wakeup=True)),
    ),
    max_size=12,
)


@given(_pieces)
def test_records_give_back_the_escaped_stream(pieces: list[bytes]) -> None:
    wire = b"".join(pieces)
    recs = records_of(1.0, EGM, StreamDecoder().feed_chunks(wire))
    assert b"".join(r.escaped() for r in recs) == wire
    lines = ['{"format": "reelgate-sas-capture", "version": 1}'] + [r.to_json() for r in recs]
    assert parse_capture(lines)[1] == recs


def test_the_file_rotates_past_its_limit_and_keeps_k(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "egm.sascap"
    cap = CaptureFile(path, "sas+tcp://127.0.0.1:1?address=1", clock, max_bytes=1024, keep=2)
    for _ in range(200):
        clock.now += 0.2
        cap.record(HOST, escape(bytes((1, 0x1A)), wakeup=True))
        cap.record(EGM, bytes.fromhex("01 1a 00 00 00 00 12 34"))
    cap.close()
    assert cap.records == 400
    assert cap.rotations > 2
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["egm.sascap", "egm.sascap.1", "egm.sascap.2"]  # the oldest dropped
    for p in tmp_path.iterdir():
        assert p.stat().st_size <= 1024
        header, records = parse_capture(p.read_text().splitlines())
        assert header.endpoint == "sas+tcp://127.0.0.1:1?address=1"
        assert records
    _, last = parse_capture(path.read_text().splitlines())
    assert last[-1].t == pytest.approx(200 * 0.2)
    assert last[-1].data == bytes.fromhex("01 1a 00 00 00 00 12 34")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"t": -1, "dir": "host", "hex": "01"}', "line 2: t must be seconds >= 0"),
        ('{"t": 1, "dir": "up", "hex": "01"}', "line 2: dir must be host or egm"),
        ('{"t": 1, "dir": "egm", "hex": "0x1"}', "line 2: hex '0x1' is not hexadecimal"),
        ('{"t": 1, "dir": "egm", "hex": "01", "wakeup": [3]}', "line 2: wakeup must list"),
    ],
)
def test_a_bad_line_is_named(line: str, message: str) -> None:
    head = '{"format": "reelgate-sas-capture", "version": 1}'
    with pytest.raises(CaptureError, match=message):
        parse_capture([head, line])


def test_not_a_capture_is_refused() -> None:
    with pytest.raises(CaptureError, match="empty capture"):
        parse_capture([])
    with pytest.raises(CaptureError, match="not a reelgate-sas-capture file"):
        parse_capture(['{"format": "pcap"}'])


async def test_the_tap_changes_nothing_on_the_line(tmp_path: Path) -> None:
    """A probe's polls through the tap: the client reads the same, and the capture holds
    exactly the bytes each way (re-escaped, they are what crossed the carrier)."""
    host_end, egm_end = memory_pair()
    sent: list[bytes] = []
    face = SasFace(EmulatedMachine("T-1", seed=3), 1, quirks=Quirks(ack_echo=True))
    face.attach(egm_end)
    loop = asyncio.get_running_loop()
    cap = CaptureFile(tmp_path / "c.jsonl", "memory", loop.time)
    tap = TapCarrier(host_end, cap)
    write = host_end.write

    def spy(data: bytes) -> None:
        sent.append(data)
        write(data)

    host_end.write = spy  # type: ignore[method-assign]
    client = SasClient(tap, 1, min_spacing=0.0)
    try:
        async with asyncio.timeout(10):
            info = await client.machine_info()
            await client.lock()
            credits = await client.credits()
    finally:
        await client.close()
        face.close()
        cap.close()
    assert info.game_id == face.machine.identity.game_id
    assert credits == face.machine.credits
    _, records = parse_capture((tmp_path / "c.jsonl").read_text().splitlines())
    host = b"".join(r.escaped() for r in records if r.direction == HOST)
    egm = b"".join(r.escaped() for r in records if r.direction == EGM)
    assert host == b"".join(sent)
    assert egm.startswith(bytes.fromhex("01 1f"))
    assert bytes.fromhex("01 01 51 08") in egm  # the quirk's bytes, as they came
    assert [r.t for r in records] == sorted(r.t for r in records)
