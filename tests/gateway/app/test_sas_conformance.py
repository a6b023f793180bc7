"""``reelgate sas conformance``: the safe polls a heat needs, judged per poll (issue 28).

Run against every SAS face the command line reaches: a strict emulated EGM over TCP, one
with the third-party quirks, a host-timed machine (no tournament support), a machine on a
multi-drop loop at address 2, and one that enforces SAS's 5 ms gap.  (The interface
board speaks MQTT, not SAS: the command does not reach it.)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from emulators.bank import Bank
from emulators.sas_quirks import Quirks
from gateway.app.sas_conformance import CHECKS, conformance, format_report
from protocols.sas.capture import parse_capture
from protocols.sas.carriers.tap import CaptureFile

BIN = Path(sys.executable).parent
REELGATE = shutil.which("reelgate", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
HEAT_POLLS = [c.label for c in CHECKS]


@pytest.fixture
async def bank_factory() -> AsyncIterator[Callable[..., Any]]:
    banks: list[Bank] = []

    async def start(**kwargs: Any) -> list[str]:
        bank = Bank(kwargs.pop("count", 1), **kwargs)
        banks.append(bank)
        return [m.endpoint for m in await bank.start()]

    yield start
    for bank in banks:
        await bank.close()


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {p["poll"]: p["status"] for p in report["polls"]}


async def test_a_strict_emulated_egm_answers_every_poll(bank_factory: Any) -> None:
    (endpoint,) = await bank_factory()
    report = await conformance(endpoint)
    assert list(statuses(report)) == HEAT_POLLS
    assert set(statuses(report).values()) == {"answered"}
    assert report["summary"] == {
        "answered": len(CHECKS),
        "odd": 0,
        "silent": 0,
        "refused": 0,
        "garbled": 0,
    }
    row = report["polls"][HEAT_POLLS.index("1A")]
    assert row["host"] == ["01 1a"]
    assert row["egm"] == ["01 1a 00 00 00 00 c3 fc"]


async def test_the_third_party_quirks_are_odd_not_failures(bank_factory: Any) -> None:
    (endpoint,) = await bank_factory(quirks=Quirks(base_percent_bcd=True, ack_echo=True))
    report = await conformance(endpoint)
    odd = {p["poll"]: p["odd"] for p in report["polls"] if p["status"] == "odd"}
    assert odd == {
        "0E": ["4 byte(s) after the reply: 0e 00 cc c0"],
        "1F": ["base percent is not ASCII digits: 00 00 90 00 (kept as received)"],
        "01": ["3 byte(s) after the reply: 01 51 08"],
        "02": ["3 byte(s) after the reply: 02 ca 3a"],
    }
    assert report["summary"]["answered"] == len(CHECKS) - 4
    text = format_report(report)
    assert "! base percent is not ASCII digits: 00 00 90 00 (kept as received)" in text
    assert text.splitlines()[-1] == f"summary answered {len(CHECKS) - 4}, odd 4, silent 0, " \
        "refused 0, garbled 0"  # fmt: skip


async def test_a_host_timed_machine_is_silent_to_lp_99_as_expected(bank_factory: Any) -> None:
    (endpoint,) = await bank_factory(no_tournament_support=1)
    report = await conformance(endpoint, lock=False)
    assert "01" not in statuses(report)  # --no-lock: play never disabled
    row = report["polls"][HEAT_POLLS.index("99")]
    assert row["status"] == "silent"
    assert row["egm"] == []
    assert row["host"] == ["01 99 00 00 dc 09"] * 3  # every try, nothing back
    assert "expected: LP A0 says no tournament support" in row["odd"]


async def test_a_machine_on_a_multidrop_loop_and_one_enforcing_the_gap(
    bank_factory: Any,
) -> None:
    loop = await bank_factory(count=2, loop_size=2)
    gap = await bank_factory(enforce_gap=True)
    for endpoint in (loop[1], gap[0]):
        report = await conformance(endpoint)
        assert set(statuses(report).values()) == {"answered"}, endpoint
    assert loop[1].endswith("address=2")


async def test_the_conformance_run_can_be_captured(bank_factory: Any, tmp_path: Path) -> None:
    (endpoint,) = await bank_factory()
    capture = CaptureFile(tmp_path / "c.jsonl", endpoint, asyncio.get_running_loop().time)
    report = await conformance(endpoint, capture=capture)
    capture.close()
    _, records = parse_capture((tmp_path / "c.jsonl").read_text().splitlines())
    host = [r.data.hex(" ") for r in records if r.direction == "host"]
    assert host == [h for p in report["polls"] for h in p["host"]]


async def _run(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_conformance_from_the_command_line(bank_factory: Any) -> None:
    assert REELGATE
    (endpoint,) = await bank_factory(quirks=Quirks(ack_echo=True))
    code, out, err = await _run(REELGATE, "sas", "conformance", endpoint, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["summary"]["odd"] == 3  # LP 0E, 01, 02: bytes after the ACK
    code, out, err = await _run(REELGATE, "sas", "conformance", endpoint, "--no-lock")
    assert code == 0, err
    assert out.splitlines()[1].split() == ["poll", "name", "status", "reply"]
    assert "disable play" not in out


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        ("http://127.0.0.1:7001", "sas+tcp"),
        ("sas+tcp://127.0.0.1:7001?address=0", "address must be 1..127"),
    ],
)
async def test_a_bad_url_is_one_line_and_nonzero(endpoint: str, message: str) -> None:
    assert REELGATE
    code, out, err = await _run(REELGATE, "sas", "conformance", endpoint)
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


async def test_nothing_listening_is_one_line_and_nonzero() -> None:
    assert REELGATE
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    code, out, err = await _run(
        REELGATE, "sas", "conformance", f"sas+tcp://127.0.0.1:{port}?address=1"
    )
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert "cannot connect" in err
