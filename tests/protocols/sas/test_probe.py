"""``reelgate sas probe`` against ``reelgate emulate sas``, both as separate processes,
typed exactly as a technician would."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
REELGATE = shutil.which("reelgate", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


async def run(*argv: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
async def emulated_bank() -> AsyncIterator[list[dict[str, object]]]:
    assert REELGATE, "the reelgate console script is not installed (pip install -e .)"
    proc = await asyncio.create_subprocess_exec(
        REELGATE, "emulate", "sas", "--machines", "2", "--base-port", "0", "--seed", "7",
        "--no-tournament-support", "1",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    rows: list[dict[str, object]] = []
    try:
        async with asyncio.timeout(30):
            while True:
                line = await proc.stdout.readline()
                assert line, "emulator exited early"
                row = json.loads(line)
                if row.get("ready"):
                    break
                rows.append(row)
        yield rows
    finally:
        proc.terminate()
        async with asyncio.timeout(10):
            await proc.wait()


async def test_probe_reads_a_machine_from_the_command_line(
    emulated_bank: list[dict[str, object]],
) -> None:
    assert REELGATE
    first = emulated_bank[0]
    port = first["port"]
    code, out, err = await run(REELGATE, "sas", "probe", f"sas+tcp://127.0.0.1:{port}?address=1")
    assert code == 0, err
    assert out.splitlines()[0] == f"endpoint      sas+tcp://127.0.0.1:{port}?address=1"
    assert "game RG" in out
    assert "SAS version   6.02" in out
    assert f"serial        {first['machine']}-7" in out
    assert "denomination  0.01 (code 01)" in out
    assert "tournament    supported (LP A0 bit 3)" in out
    assert "credits       0" in out
    assert f"AFT           supported; asset number {first['asset_number']}, 80 not" in out
    assert "exceptions    none" in out


async def test_probe_json_and_host_timed_machine(emulated_bank: list[dict[str, object]]) -> None:
    assert REELGATE
    second = emulated_bank[1]
    code, out, err = await run(REELGATE, "sas", "probe", str(second["endpoint"]), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["tournament_supported"] is False
    assert result["aft_supported"] is True
    # LP 73 FF: the asset number the emulator was started with, nobody registered yet
    assert result["aft_asset_number"] == second["asset_number"]
    assert result["aft_registration"] == "80 not registered"
    assert result["aft_pos_id"] is None
    assert result["serial_number"] == f"{second['machine']}-7"
    assert result["credits"] == 0
    assert result["exceptions"] == []
    assert len(result["clock"]) == 19  # YYYY-MM-DD HH:MM:SS


async def test_probe_of_nothing_is_one_line_and_nonzero() -> None:
    assert REELGATE
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    code, out, err = await run(REELGATE, "sas", "probe", f"sas+tcp://127.0.0.1:{port}?address=1")
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert "cannot connect" in err


async def test_probe_of_a_bad_endpoint_is_one_line_and_nonzero() -> None:
    assert REELGATE
    code, _, err = await run(REELGATE, "sas", "probe", "sas+tcp://127.0.0.1:7001?address=999")
    assert code != 0
    assert err.count("\n") == 1
    assert "address must be 1..127" in err


async def test_probe_of_garbage_or_silence_is_one_line_and_nonzero() -> None:
    """A port that answers every poll with noise, and one that never answers."""
    assert REELGATE

    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.read(64):
                writer.write(b"\x01\x1f\x99\x98\x97")  # an ID reply that is cut and wrong
        finally:
            writer.close()

    async def silence(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await reader.read(64):
                pass
        finally:
            writer.close()

    for handler, expected in ((garbage, "failed after 3 tries"), (silence, "no reply")):
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            code, out, err = await run(
                REELGATE, "sas", "probe", f"sas+tcp://127.0.0.1:{port}?address=1"
            )
        finally:
            server.close()
            await server.wait_closed()
        assert code != 0, err
        assert out == "", err
        assert err.count("\n") == 1, err
        assert expected in err, err


async def test_emulated_players_play_a_native_heat_across_processes() -> None:
    """``--play``: simulated players spin as soon as the host enables play."""
    from protocols.sas.client import SasClient

    assert REELGATE
    proc = await asyncio.create_subprocess_exec(
        REELGATE, "emulate", "sas", "--machines", "1", "--play", "--pace", "0.05",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            endpoint = json.loads(await proc.stdout.readline())["endpoint"]
            assert json.loads(await proc.stdout.readline())["play"] is True
        async with await SasClient.connect(endpoint, min_spacing=0.05) as client:
            await client.enter_tournament(200, 60)
            await client.unlock()
            codes: list[int] = []
            for _ in range(40):  # bounded: players spin every ~50 ms
                codes += await client.events()
                if 0x7F in codes:
                    break
            await client.lock()
            meters = await client.tournament_meters()
            assert 0x7E in codes
            assert 0x7F in codes  # game started / ended
            assert meters.games_played >= 1
            await client.exit_tournament()
    finally:
        proc.terminate()
        async with asyncio.timeout(10):
            await proc.wait()


async def test_probe_lists_pending_exceptions_by_name() -> None:
    from emulators.bank import Bank
    from gateway.app.commands.sas import format_probe, probe

    async with Bank(1, seed=2) as bank:
        b = bank.machines[0]
        b.machine.open_slot_door()
        b.machine.tilt()
        result = await probe(b.endpoint)
    assert result["exceptions"] == [
        {"code": "11", "name": "slot door opened"},
        {"code": "20", "name": "general tilt"},
    ]
    assert "exceptions    11 slot door opened, 20 general tilt" in format_probe(result)


async def test_probe_succeeds_on_a_quirky_machine_and_shows_its_quirks() -> None:
    """Issue 28: LP 1F's base percent in BCD and bytes after an ACK, as a third-party EGM
    sends them: the probe succeeds (exit 0) and names both (docs/sas.md, real machines)."""
    assert REELGATE
    proc = await asyncio.create_subprocess_exec(
        REELGATE, "emulate", "sas", "--machines", "1", "--quirks", "base-percent-bcd,ack-echo",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            row = json.loads(await proc.stdout.readline())
        assert row["quirks"] == ["base-percent-bcd", "ack-echo"]
        code, out, err = await run(REELGATE, "sas", "probe", str(row["endpoint"]))
        assert code == 0, err
        assert "base 00 00 90 00" in out
        assert "quirk         LP 1F: base percent is not ASCII digits (kept as received)" in out
        assert "LP 0E: 4 byte(s) after the reply (flagged, ignored): 0e 00 cc c0" in out
        code, out, err = await run(REELGATE, "sas", "probe", str(row["endpoint"]), "--json")
        assert code == 0, err
        result = json.loads(out)
        assert result["base_percent"] == "00 00 90 00"
        assert {q["poll"] for q in result["quirks"]} == {"1F", "0E"}
    finally:
        proc.terminate()
        async with asyncio.timeout(10):
            await proc.wait()


async def test_emulator_refuses_an_unknown_quirk_in_one_line() -> None:
    assert REELGATE
    code, out, err = await run(REELGATE, "emulate", "sas", "--quirks", "ack-echo,sparkles")
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert "--quirks: unknown quirk 'sparkles'" in err


async def test_capture_and_probe_capture_write_the_documented_file(tmp_path: Path) -> None:
    """``sas capture URL --out FILE`` and ``sas probe --capture FILE``: every byte both
    ways in the JSON-lines format (docs/sas.md), the quirks named in the summary."""
    from protocols.sas.capture import parse_capture

    assert REELGATE
    proc = await asyncio.create_subprocess_exec(
        REELGATE, "emulate", "sas", "--machines", "1", "--quirks", "base-percent-bcd,ack-echo",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(30):
            endpoint = str(json.loads(await proc.stdout.readline())["endpoint"])
        out_file = tmp_path / "egm.jsonl"
        code, out, err = await run(
            REELGATE, "sas", "capture", endpoint, "--out", str(out_file), "--seconds", "0.5",
            "--json",
        )  # fmt: skip
        assert code == 0, err
        summary = json.loads(out)
        assert summary["records"] > 10
        assert {q["poll"] for q in summary["quirks"]} == {"1F", "0E"}
        header, records = parse_capture(out_file.read_text().splitlines())
        assert header.endpoint == endpoint
        assert len(records) == summary["records"]
        assert {r.direction for r in records} == {"host", "egm"}
        probe_file = tmp_path / "probe.jsonl"
        code, out, err = await run(REELGATE, "sas", "probe", endpoint, "--capture", str(probe_file))
        assert code == 0, err
        assert parse_capture(probe_file.read_text().splitlines())[1]
    finally:
        proc.terminate()
        async with asyncio.timeout(10):
            await proc.wait()


async def test_capture_to_a_missing_folder_is_one_line_and_nonzero(tmp_path: Path) -> None:
    assert REELGATE
    target = tmp_path / "no" / "such.jsonl"
    code, out, err = await run(
        REELGATE, "sas", "capture", "sas+tcp://127.0.0.1:7001?address=1", "--out", str(target)
    )
    assert code != 0
    assert out == ""
    assert err.count("\n") == 1
    assert "no such folder" in err
    assert not target.parent.exists()
