"""``reelgate board``: mistakes are one line and exit 2; a run serves until stopped."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest

from emulators.bank import Bank
from gateway.app.cli import main
from gateway.app.commands.board import build_agent, run_board
from gateway.machines.driver import TournamentSupport
from gateway.machines.mqtt import MqttMachineDriver
from protocols.mqtt.broker import EmbeddedBroker

GOOD = ["--sas", "sas+tcp://127.0.0.1:9?address=1", "--mqtt", "mqtt://127.0.0.1:1",
        "--site", "ridge", "--board-id", "A01"]


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"--sas": "http://127.0.0.1/x"}, "--sas"),
        ({"--mqtt": "tcp://127.0.0.1"}, "--mqtt"),
        ({"--site": "a/b"}, "--site/--board-id"),
        ({"--board-id": "A 01"}, "--site/--board-id"),
        ({"--poll-interval": "0.001"}, "--poll-interval"),
        ({"--event-queue": "1"}, "--event-queue"),
        ({"--aft-pos-id": "7001"}, "--aft-registration-key and --aft-pos-id go together"),
        ({"--aft-registration-key": "00" * 20, "--aft-pos-id": "7001"}, "not all zero"),
    ],
)
def test_operator_mistakes(
    change: dict[str, str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = list(GOOD)
    for flag, value in change.items():
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    assert main(["board", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reelgate: error: ")
    assert complaint in err
    assert err.count("\n") == 1


async def test_a_run_serves_the_egm_until_stopped(
    broker: EmbeddedBroker, site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with Bank(1, seed=2, no_tournament_support=1) as bank:
        egm = bank.machines[0]
        ns = argparse.Namespace(
            sas=egm.endpoint, mqtt=broker.url, site=site, board_id="B07",
            poll_interval=0.05, event_queue=64,
            aft_registration_key="0123456789abcdef0123456789abcdef01234567", aft_pos_id=7001,
        )
        agent = build_agent(ns)
        stop = asyncio.Event()
        task = asyncio.create_task(run_board(agent, ns.sas, stop))
        driver = MqttMachineDriver.from_uri("B07", f"{broker.url}/{site}/B07?timeout=5")
        try:
            await driver.open()
            assert (await driver.identity()).tournament is TournamentSupport.HOST_TIMED
        finally:
            await driver.close()
            stop.set()
        assert await asyncio.wait_for(task, 10) == 0
        out = capsys.readouterr().out
        assert f"board B07: {egm.endpoint} <-> {broker.url}" in out
        assert "user" not in out


def test_flags_may_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The systemd unit's EnvironmentFile: the broker URL (and its password) off argv.
    monkeypatch.setenv("REELGATE_BOARD_SAS", "sas+tcp://127.0.0.1:9?address=1")
    monkeypatch.setenv("REELGATE_BOARD_MQTT", "tcp://127.0.0.1")
    monkeypatch.setenv("REELGATE_BOARD_SITE", "ridge")
    assert main(["board", "--board-id", "A01"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reelgate: error: --mqtt")
    assert err.count("\n") == 1


async def test_a_run_with_capture_records_the_egm_port(
    broker: EmbeddedBroker, site: str, tmp_path: Path
) -> None:
    """``reelgate board --capture FILE`` (issue 28): every byte to and from the EGM, in
    the capture format, one file for its port; the board serves as without it."""
    from gateway.app.sas_capture import port_captures, port_file
    from protocols.sas.capture import parse_capture

    async with Bank(1, seed=2) as bank:
        egm = bank.machines[0]
        base = tmp_path / "b07.jsonl"
        ns = argparse.Namespace(
            sas=egm.endpoint, mqtt=broker.url, site=site, board_id="B07",
            poll_interval=0.05, event_queue=64, aft_registration_key=None, aft_pos_id=None,
            capture=str(base), capture_max_bytes=1 << 20, capture_keep=1,
        )  # fmt: skip
        agent = build_agent(ns)
        stop = asyncio.Event()
        with port_captures(ns):
            task = asyncio.create_task(run_board(agent, ns.sas, stop))
            driver = MqttMachineDriver.from_uri("B07", f"{broker.url}/{site}/B07?timeout=5")
            try:
                await driver.open()
                assert (await driver.identity()).tournament is TournamentSupport.NATIVE
            finally:
                await driver.close()
                stop.set()
            assert await asyncio.wait_for(task, 10) == 0
    path = port_file(str(base), f"sas+tcp://127.0.0.1:{egm.port}")
    assert path.name == f"b07.jsonl.127.0.0.1_{egm.port}"
    header, records = parse_capture(path.read_text().splitlines())
    assert header.endpoint == f"sas+tcp://127.0.0.1:{egm.port}"
    assert bytes.fromhex("01 1f") in [r.data for r in records if r.direction == "host"]


def test_board_takes_the_capture_options() -> None:
    from gateway.app.cli import build_parser

    args = build_parser("board").parse_args(["board", *GOOD, "--capture", "x.jsonl"])
    assert (args.capture, args.capture_keep) == ("x.jsonl", 3)
