"""``reelgate sas replay``: captures through the host's decoders and link (issue 28).

The fixtures in ``tests/fixtures/sas/`` are captures in the documented format: one
synthetic capture per known quirk, and the third-party EGM's session of issue 28 (its
bytes rebuilt from the issue: LP 1F's base percent in BCD, LP 01/02 answered
``01 01 51 08``).  Each replays with its quirk flagged and the reply taken; money that
breaks its format is refused as before.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulators.machine import EmulatedMachine
from emulators.sas_face import SasFace
from emulators.sas_quirks import Quirks
from protocols.sas.capture import CaptureRecord, parse_capture
from protocols.sas.carriers.memory import memory_pair
from protocols.sas.carriers.tap import CaptureFile, TapCarrier
from protocols.sas.client import SERIAL_SETTINGS, TCP_SETTINGS, SasClient
from protocols.sas.replay import Replay, replay

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "sas"
BIN = Path(sys.executable).parent
REELGATE = shutil.which("reelgate", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def replay_of(name: str) -> Replay:
    _, records = parse_capture((FIXTURES / name).read_text().splitlines())
    return replay(records, TCP_SETTINGS)


def odd(r: Replay) -> list[str]:
    return [o for e in r.entries for o in e.odd]


def test_base_percent_in_bcd_replays_accepted_and_flagged() -> None:
    r = replay_of("base-percent-bcd.jsonl")
    assert odd(r) == ["base percent is not ASCII digits: 00 00 95 00"]
    assert (r.replies, r.failures, r.retries) == (1, 0, 0)
    actions = [a for e in r.entries for a in e.action]
    assert actions == ["accepted; base percent shown as received (display only)"]


def test_bytes_after_an_ack_replay_as_acks_with_trailing_bytes() -> None:
    r = replay_of("ack-echo.jsonl")
    assert odd(r) == [
        "3 byte(s) after the reply to LP 01: 01 51 08",
        "3 byte(s) after the reply to LP 02: 01 51 08",
    ]
    assert (r.replies, r.failures, r.trailing_bytes) == (2, 0, 6)


def test_the_third_party_capture_of_issue_28() -> None:
    """Done when: LP 1F in BCD and the extra bytes after an ACK each flagged, every poll
    answered (the probe and the heat would succeed): the nine bytes no longer vanish."""
    r = replay_of("third-party-egm.jsonl")
    assert r.summary() == {
        "polls": 9,
        "replies": 9,
        "retries": 0,
        "failures": 0,
        "odd": 4,
        "trailing_bytes": 9,
    }
    assert odd(r)[0] == "base percent is not ASCII digits: 00 00 95 00"
    assert all(o.endswith("01 51 08") for o in odd(r)[1:])


def test_real_time_idle_frame_is_taken_after_lp_0e() -> None:
    r = replay_of("rte-idle-frame.jsonl")
    assert odd(r) == []
    whats = [w for e in r.entries for w in e.what]
    assert whats.count("real-time event 00 no activity (to the general poll, try 1)") == 2
    assert "sync (general poll to 0): implied ACK" in whats


def test_credits_that_are_not_bcd_stay_refused() -> None:
    """Strict where money is: LP 1A garbled on every try is a failed request."""
    r = replay_of("credits-bad-bcd.jsonl")
    assert (r.replies, r.retries, r.failures) == (0, 2, 1)
    assert odd(r) == ["LP 1A: corrupt (invalid BCD nibble in '00009a00')"] * 3
    assert "malfunction (T20)" in r.entries[-1].action[-1]


async def test_a_capture_of_the_quirky_emulator_replays_as_it_ran(tmp_path: Path) -> None:
    host_end, egm_end = memory_pair()
    face = SasFace(
        EmulatedMachine("R-1", seed=2), 1, quirks=Quirks(base_percent_bcd=True, ack_echo=True)
    )
    face.attach(egm_end)
    cap = CaptureFile(tmp_path / "c.jsonl", "memory", asyncio.get_running_loop().time)
    client = SasClient(TapCarrier(host_end, cap), 1, min_spacing=0.0)
    try:
        async with asyncio.timeout(10):
            await client.machine_info()
            await client.lock()
            await client.unlock()
            await client.general_poll()
    finally:
        await client.close()
        face.close()
        cap.close()
    _, records = parse_capture((tmp_path / "c.jsonl").read_text().splitlines())
    r = replay(records, TCP_SETTINGS)
    assert (r.polls, r.replies, r.failures) == (4, 4, 0)
    assert r.trailing_bytes == client.stats.trailing_bytes == 6
    assert odd(r)[0] == "base percent is not ASCII digits: 00 00 90 00"


async def _run(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_replay_from_the_command_line() -> None:
    assert REELGATE
    fixture = str(FIXTURES / "third-party-egm.jsonl")
    code, out, err = await _run(REELGATE, "sas", "replay", fixture)
    assert code == 0, err
    assert "! base percent is not ASCII digits: 00 00 95 00" in out
    assert "! 3 byte(s) after the reply to LP 02: 01 51 08" in out
    assert out.splitlines()[-1].startswith("summary polls 9, replies 9, retries 0, failures 0")
    code, out, err = await _run(REELGATE, "sas", "replay", fixture, "--json", "--odd-only")
    assert code == 0, err
    result = json.loads(out)
    assert result["summary"]["trailing_bytes"] == 9
    assert len(result["entries"]) == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read (No such file or directory)"),
        ("garbage\n", "line 1: not JSON"),
        ('{"format": "pcap"}\n', "not a reelgate-sas-capture file"),
        (b"\xff\xfe\x00", "not a capture (not UTF-8 text)"),
    ],
)
async def test_an_unreadable_capture_is_one_line_and_nonzero(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    assert REELGATE
    path = tmp_path / "c.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = await _run(REELGATE, "sas", "replay", str(path))
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


_records = st.lists(
    st.builds(
        CaptureRecord,
        st.floats(0, 100, allow_nan=False),
        st.sampled_from(["host", "egm"]),
        st.binary(min_size=1, max_size=24),
        st.lists(st.integers(0, 23), max_size=3).map(lambda w: tuple(sorted(set(w)))),
    ).filter(lambda r: all(i < len(r.data) for i in r.wakeup)),
    max_size=30,
).map(lambda rs: sorted(rs, key=lambda r: r.t))


@settings(max_examples=300, deadline=None)
@given(_records, st.sampled_from([TCP_SETTINGS, SERIAL_SETTINGS]))
def test_any_capture_replays_without_crashing(records: list[CaptureRecord], s: Any) -> None:
    """A capture from any tool, however odd its bytes, gives a report, never a crash."""
    r = replay(records, s)
    assert r.replies + r.failures <= r.polls + 1  # one poll may be left in flight
    assert len([e for e in r.entries if e.direction != "timer"]) == len(records)
