"""The syslog witness: RFC 5424 messages, RFC 6587 octet-counted frames, and the heads
sent over loopback TCP and UDP to ``witness-receive`` (a second gateway), whose file
``audit verify`` then reads (issue 25.1)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records import syslog, witness_check
from gateway.records.witness import Witness
from gateway.records.witness_receiver import WitnessReceiver
from gateway.records.witness_sinks import FileSink, SyslogSink, parse_spec
from storage import audit
from storage.audit import ChainKeys
from storage.db import make_sessionmaker

from ..tournament.conftest import Desk


def test_rfc5424_message_and_octet_counting() -> None:
    at = datetime(2026, 12, 2, 18, 0, 1, 250000, tzinfo=UTC)
    message = syslog.format_message(
        "reelgate-witness/1 head 7 ab", at=at, hostname="gw one", procid="42"
    )
    assert message == (
        b"<109>1 2026-12-02T18:00:01.250000Z gwone reelgate 42 witness - "
        b"reelgate-witness/1 head 7 ab"
    )
    assert syslog.message_text(message) == "reelgate-witness/1 head 7 ab"
    stream = syslog.frame(message) + syslog.frame(b"<13>1 - - - - - - x")
    messages, rest = syslog.unframe(stream[:-3])
    assert (messages, rest) == ([message], syslog.frame(b"<13>1 - - - - - - x")[:-3])
    messages, rest = syslog.unframe(stream)
    assert (len(messages), rest) == (2, b"")
    with pytest.raises(ValueError, match="octet count"):
        syslog.unframe(b"abc <13>1 x")


def test_witness_spec_forms() -> None:
    assert parse_spec("syslog+tcp://127.0.0.1:6514").describe() == "syslog+tcp://127.0.0.1:6514"
    assert parse_spec("/var/lib/reelgate/audit.witness").kind == "file"
    assert parse_spec("none").kind == "none"
    for bad, says in (
        ("syslog://h:1", "must be a file path"),
        ("syslog+udp://:514", "needs a host and a port"),
        ("syslog+tcp://h:0", "needs a host and a port"),
        ("  ", "empty witness"),
    ):
        with pytest.raises(ValueError, match=says):
            parse_spec(bad)


async def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(1000):  # bounded: loopback delivery, not a timing assertion
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("transport", ["syslog+tcp", "syslog+udp"])
async def test_heads_reach_a_second_gateway_over_syslog(
    engine: AsyncEngine, tmp_path: Path, record_keys: ChainKeys, transport: str
) -> None:
    kept = tmp_path / "second-gateway.witness"
    receiver = WitnessReceiver(FileSink(kept))
    port = await receiver.start("127.0.0.1", 0)
    sink = SyslogSink(parse_spec(f"{transport}://127.0.0.1:{port}"), hostname="gw1")
    found = Witness(engine, sink, record_keys)
    audit.bind_witness(engine, found)
    try:
        desk = Desk(make_sessionmaker(engine))
        await desk.tournament()
        await found.settled()
        await desk.player("8001015009087", "Ann")
        await found.settled()
        await _until(lambda: receiver.received >= found.batches, "every batch received")
        text = await asyncio.to_thread(kept.read_text)
        async with make_sessionmaker(engine)() as s:
            report = await witness_check.check(s, record_keys, text, "copy")
        assert report.findings == []
        assert report.entries == found.batches >= 2
    finally:
        audit.bind_witness(engine, None)
        await found.close()
        await receiver.close()
