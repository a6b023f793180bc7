"""Full heats on a mixed bank: SAS machines (over TCP) and MQTT boards side by side,
driven by the real heat runner (gateway/heats) through the one driver interface.

* against Mosquitto (``REELGATE_MQTT_URL``, MQTT 5 for the gateway's session);
* the heat's start and end go bank-wide (one publish each for the boards), and a board
  that misses that publish is started and stopped by its own command after the deadline;
* a broker restart mid-heat loses no score: a second Mosquitto process on a free
  loopback port that the test kills and starts again (or, without the binary, the
  embedded broker restarted).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.bank import Bank
from emulators.machine import EmulatedMachine, ModelTournamentMeters
from emulators.mqtt_board import MqttBoard
from emulators.player import Players
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.machines.mqtt import MqttMachineDriver
from gateway.machines.mqtt_bank import BANK_DEADLINE
from gateway.machines.registry import open_driver
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSettings
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from ..protocols.mqtt.mosquitto_proc import Mosquitto

CREDITS = 500
HEAT_S = 3

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


async def _mixed_heat(
    journal: Journal,
    tmp_path: Path,
    broker_url: str,
    *,
    gateway_query: str = "",
    mid_heat: Callable[[], Awaitable[None]] | None = None,
    deaf: frozenset[str] = frozenset(),
) -> tuple[HeatOutcome, dict[str, ModelTournamentMeters], int, dict[str, tuple[int, int]]]:
    """Run one heat; returns the outcome, each machine's own meters for the heat, the
    boards' fewest connects and per board the commands the gateway sent as its share of a
    bank-wide one and those it then sent alone.  ``deaf`` boards never see a bank-wide
    command (a board that joined late or was reconnecting as it went out)."""
    site = f"t{uuid.uuid4().hex[:10]}"
    settings = MqttSettings.from_url(broker_url)
    # MQ3's EGM has no tournament mode: its board runs the heat host-timed.
    boards = [
        MqttBoard(
            EmulatedMachine(f"MQ{i}", seed=40 + i, tournament_supported=i != 3), settings, site
        )
        for i in (1, 2, 3)
    ]
    _deafen([b for b in boards if b.machine.machine_id in deaf])
    async with Bank(2, name_prefix="SAS", seed=7) as sas:
        for board in boards:
            await board.start()
        endpoints = {b.machine.machine_id: b.endpoint for b in sas.machines}
        for board in boards:
            m = board.machine.machine_id
            endpoints[m] = f"{broker_url}/{site}/{m}{gateway_query}"
        machines = {b.machine.machine_id: b.machine for b in sas.machines}
        machines |= {b.machine.machine_id: b.machine for b in boards}
        links = {m: MachineLink(m, open_driver(m, uri)) for m, uri in endpoints.items()}
        players = Players(list(machines.values()), seed=5, pace=0.05)
        play = asyncio.create_task(players.run(tick=0.02))
        running = asyncio.Event()
        games_at_start: dict[str, int] = {}

        def progress(note: ProgressNote) -> None:
            if note.kind is Progress.STATE and note.state == "running" and not running.is_set():
                games_at_start.update({m: _games(x) for m, x in machines.items()})
                running.set()

        def every_machine_played() -> bool:
            return all(_games(x) > games_at_start[m] for m, x in machines.items())

        async def fault() -> None:
            if mid_heat is not None:
                await asyncio.wait_for(running.wait(), 30)
                # Mid-heat means play under way on every machine, not a guessed delay.
                await _until(every_machine_played, "a game on every machine")
                await mid_heat()
                # The heat may end while the boards are still reconnecting (a slow
                # machine): wait for them before stopping them, so none is counted
                # as never having come back.
                await _until(
                    lambda: all(b.session.stats.connects >= 2 for b in boards),
                    "every board reconnected",
                )

        injector = asyncio.create_task(fault())
        try:
            await asyncio.gather(*(link.open() for link in links.values()))
            writer = JournalWriter(journal, tmp_path / "spool")
            runner = HeatRunner(writer, links, progress=progress, poll_interval_s=0.1)
            out = await runner.run_new("MIX", sorted(machines), credits=CREDITS, seconds=HEAT_S)
            await injector
            bank = _bank_stats(links)
        finally:
            play.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await play
            for link in links.values():
                await link.close()
            for board in boards:
                await board.stop()
    truth = {m: machine.last_tournament_meters for m, machine in machines.items()}
    truth |= {
        b.machine.machine_id: b.last_host_meters for b in boards if b.machine.machine_id == "MQ3"
    }
    for machine in machines.values():  # back in normal play, no credits left (T12, T18)
        assert not machine.in_tournament
        assert not machine.play_locked
        assert machine.credits == 0
    return out, truth, min(b.session.stats.connects for b in boards), bank


def _deafen(boards: list[MqttBoard]) -> None:
    """These boards never hear a bank-wide command (set before they subscribe)."""

    def ignore(topic: str, payload: bytes) -> None:
        return None

    for board in boards:
        board.core._on_bank_command = ignore  # type: ignore[method-assign]


def _bank_stats(links: dict[str, MachineLink]) -> dict[str, tuple[int, int]]:
    """Per MQTT board: shares of bank-wide commands sent, and those then sent alone."""
    return {
        m: (link.driver.stats.bank, link.driver.stats.bank_fallbacks)
        for m, link in links.items()
        if isinstance(link.driver, MqttMachineDriver)
    }


def _games(machine: EmulatedMachine) -> int:
    """Games played, in or out of tournament mode (native tournament games count apart)."""
    return machine.meters.games_played + machine.tournament_meters().games_played


async def _until(predicate: Callable[[], bool], what: str, within: float = 30.0) -> None:
    """Wait (bounded) for a condition that play or reconnects bring about."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def _check_every_score_stored(
    journal: Journal, out: HeatOutcome, machines: dict[str, ModelTournamentMeters]
) -> None:
    assert out.state is RunState.CLOSED, out.notes
    assert {m: s.state for m, s in out.seats.items()} == dict.fromkeys(
        machines, MachineState.RELEASED
    )
    results = {r.machine_id: r for r in await journal.results(out.run_id)}
    assert sorted(results) == sorted(machines)
    for machine_id, r in results.items():
        meters = machines[machine_id]  # the machine's (or host-timed board's) own count
        assert r.games_played == meters.games_played > 0, machine_id
        assert (r.credits_wagered, r.credits_won) == (meters.credits_wagered, meters.credits_won)
        assert r.score == CREDITS - r.credits_wagered + r.credits_won  # T12


@pytest.mark.mosquitto
async def test_mixed_bank_full_heat_against_mosquitto(
    journal: Journal, tmp_path: Path, mqtt_url: str
) -> None:
    out, machines, _, bank = await _mixed_heat(
        journal, tmp_path, mqtt_url, gateway_query="?mqtt5=1"
    )
    await _check_every_score_stored(journal, out, machines)
    # Start and end (and any pause) went bank-wide to every board; none needed its own.
    assert all(sent >= 2 and fallbacks == 0 for sent, fallbacks in bank.values()), bank
    assert {m: s.support for m, s in out.seats.items() if m.startswith("MQ")} == {
        "MQ1": "native",
        "MQ2": "native",
        "MQ3": "host-timed",
    }


@pytest.mark.parametrize("kind", ["mosquitto-process", "embedded"])
async def test_broker_restart_mid_heat_loses_no_score(
    journal: Journal, tmp_path: Path, kind: str
) -> None:
    if kind == "mosquitto-process":
        if shutil.which("mosquitto") is None:
            pytest.skip("no mosquitto binary")
        private = Mosquitto(tmp_path)
        private.start()
        try:
            out, machines, connects, _ = await _mixed_heat(
                journal,
                tmp_path,
                private.url,
                gateway_query="?mqtt5=1",
                mid_heat=private.restart,
            )
        finally:
            private.stop()
    else:
        async with EmbeddedBroker() as embedded:
            out, machines, connects, _ = await _mixed_heat(
                journal, tmp_path, embedded.url, mid_heat=embedded.restart
            )
    assert connects >= 2  # every board really lost the broker mid-heat and came back
    await _check_every_score_stored(journal, out, machines)


@pytest.mark.mosquitto
async def test_a_board_that_misses_the_bank_wide_start_and_end_still_plays_its_heat(
    journal: Journal, tmp_path: Path, mqtt_url: str
) -> None:
    """No machine silently left out: MQ2 never sees a bank-wide command; the gateway sends
    it its own unlock and lock (same ids) after the deadline, and its score is stored."""
    out, machines, _, bank = await _mixed_heat(
        journal, tmp_path, mqtt_url, gateway_query="?mqtt5=1", deaf=frozenset({"MQ2"})
    )
    await _check_every_score_stored(journal, out, machines)
    sent, fallbacks = bank["MQ2"]
    assert sent >= 2
    assert fallbacks == sent  # every share of MQ2's went again, alone
    assert all(f == 0 for m, (_, f) in bank.items() if m != "MQ2"), bank
    ack_ms = out.seats["MQ2"].unlock_ack_ms
    assert ack_ms is not None
    assert ack_ms >= BANK_DEADLINE * 1000  # started, late: after its own unlock went
