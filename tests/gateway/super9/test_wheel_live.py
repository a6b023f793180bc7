"""The wheel emulator over TCP into a drawing session: results become spins (S9-12),
repeats and garbage do not, and the live draw is published for displays.

Clauses: docs/rules.md#s9-12.
"""

from __future__ import annotations

import asyncio
import socket
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from emulators.wheel import WheelModel, WheelServer
from gateway.errors import OperatorError
from gateway.feed import MemoryFeed
from gateway.super9.desk import Super9Desk
from gateway.super9.desk.wheel import follow_wheel

from .conftest import key_in

SAST = ZoneInfo("Africa/Johannesburg")
WED = date(2026, 12, 2)


def at(hh: int, mm: int = 0) -> datetime:
    return datetime(WED.year, WED.month, WED.day, hh, mm, tzinfo=SAST)


async def test_emulated_wheel_drives_the_draw(desk: Super9Desk, feed: MemoryFeed) -> None:
    for serial, player, numbers in (
        ("A", "C1", "0 1 2 3 4 5 6 7 8"),
        ("B", "C2", "9 10 11 12 13 14 15 16 17"),
        ("C", "C3", "18 19 20 21 22 23 24 25 26"),
    ):
        await desk.sell(serial, player, actor="cashier", now=at(10))
        await key_in(desk, serial, numbers, actor="grd", now=at(18))
    sid = await desk.open_session(at(19), actor="director", now=at(19))
    model = WheelModel(seed=21, garbage_rate=0.1, restart_rate=0.1, misspin_rate=0.1)
    server = WheelServer(model, line_interval=0, games=60)
    await server.start()
    try:
        run = await asyncio.wait_for(
            follow_wheel(
                desk,
                sid,
                f"wheel+tcp://127.0.0.1:{server.port}",
                clock=lambda: at(19, 30),
                max_results=40,
                max_attempts=1,
            ),
            timeout=60,
        )
    finally:
        await server.close()
    assert [s.number for s in run.results] == [r.number for r in model.truth[:40]]
    assert run.stopped_because == "40 results"
    live = feed.retained[f"super9/{sid}/draw"]
    distinct = list(dict.fromkeys(r.number for r in model.truth[:40]))
    assert live["called"] == distinct
    assert live["spins"] == 40
    assert live["counted_spins"] == len(distinct)  # S9-19 default: repeats not counted
    assert live["jackpot_cents"] == 500_000
    done = {c["ticket"] for c in live["completed"]}
    for serial, won in (("A", range(0, 9)), ("B", range(9, 18)), ("C", range(18, 27))):
        assert (serial in done) == set(won).issubset(distinct)


async def test_wheel_errors_are_one_line_and_change_nothing(desk: Super9Desk) -> None:
    with pytest.raises(OperatorError, match="session 99 does not exist"):
        await follow_wheel(desk, 99, "wheel+tcp://127.0.0.1:1", clock=lambda: at(19))
    await desk.sell("A", "C1", actor="cashier", now=at(10))
    await key_in(desk, "A", "0 1 2 3 4 5 6 7 8", actor="grd", now=at(18))
    sid = await desk.session_for(at(19))
    assert sid is not None
    with pytest.raises(OperatorError, match="not drawing"):  # not opened yet
        await follow_wheel(desk, sid, "wheel+tcp://127.0.0.1:1", clock=lambda: at(19))
    await desk.open_session(at(19), actor="director", now=at(19))
    with socket.socket() as probe:  # a loopback port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(OperatorError, match=r"after 0 connection\(s\) and 2 attempt") as err:
        await follow_wheel(
            desk, sid, f"wheel+tcp://127.0.0.1:{port}", clock=lambda: at(19), max_attempts=2
        )
    assert "\n" not in str(err.value)
    assert "rule 29" in str(err.value)
    assert (await desk.report(sid))["status"] == "drawing"
