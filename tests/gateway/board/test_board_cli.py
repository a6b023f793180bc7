"""``reelgate board``: mistakes are one line and exit 2; a run serves until stopped."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from emulators.bank import Bank
from gateway.app.cli import main
from gateway.app.commands.board import build_agent, run_board
from gateway.machines.driver import TournamentSupport
from gateway.machines.mqtt import MqttMachineDriver
from protocols.mqtt.broker import EmbeddedBroker

GOOD = [
    "--sas",
    "sas+tcp://127.0.0.1:9?address=1",
    "--mqtt",
    "mqtt://127.0.0.1:1",
    "--site",
    "ridge",
    "--board-id",
    "A01",
]


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
            sas=egm.endpoint,
            mqtt=broker.url,
            site=site,
            board_id="B07",
            poll_interval=0.05,
            event_queue=64,
            aft_registration_key="0123456789abcdef0123456789abcdef01234567",
            aft_pos_id=7001,
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
