"""Whole heats through gateway → broker → interface-board agent → SAS → EGM.

The heat runner drives MQTT drivers; each driver's board is a ``gateway.board`` agent
talking SAS over loopback TCP to an emulated EGM (one of them without tournament mode,
so its agent runs the heat host-timed over AFT).  Players play on every EGM.

* on Mosquitto (``REELGATE_MQTT_URL``, the gateway on MQTT 5);
* a broker restart mid-heat — a private Mosquitto process killed and started again, or
  the embedded broker restarted (it forgets every retained message and session) — loses
  no score and doubles none: every stored score is the EGM's own count.
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
from emulators.player import Players
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.runner import HeatOutcome, HeatRunner
from gateway.heats.spool import JournalWriter
from gateway.machines.links import MachineLink
from gateway.machines.registry import open_driver
from protocols.mqtt.broker import EmbeddedBroker
from storage.db import make_sessionmaker
from storage.journal import Journal, MachineState, RunState

from ..gateway.board.agents import make_agent, until
from ..protocols.mqtt.mosquitto_proc import Mosquitto

CREDITS = 400
HEAT_S = 3

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
async def journal(engine: AsyncEngine) -> Journal:
    return Journal(make_sessionmaker(engine))


def _games(machine: EmulatedMachine) -> int:
    return machine.meters.games_played + machine.tournament_meters().games_played


async def _agent_heat(
    journal: Journal,
    tmp_path: Path,
    broker_url: str,
    *,
    gateway_query: str = "?timeout=30",
    mid_heat: Callable[[], Awaitable[None]] | None = None,
) -> tuple[HeatOutcome, dict[str, ModelTournamentMeters], int]:
    """One heat on three agent-fronted EGMs; the outcome, each EGM's own meters for the
    heat, and the agents' fewest broker connects."""
    site = f"t{uuid.uuid4().hex[:10]}"
    async with Bank(3, seed=11, no_tournament_support=1, name_prefix="AG") as bank:
        egms = {m.machine.machine_id: m.machine for m in bank.machines}
        host_timed = bank.machines[-1].machine
        agents = [make_agent(bank, i, broker_url, site) for i in range(3)]
        for agent in agents:
            await agent.start()
        links = {
            m: MachineLink(m, open_driver(m, f"{broker_url}/{site}/{m}{gateway_query}"))
            for m in egms
        }
        before = (
            host_timed.meters.games_played,
            host_timed.meters.games_won,
            host_timed.meters.coin_in,
        )
        players = Players(list(egms.values()), seed=8, pace=0.05)
        play = asyncio.create_task(players.run(tick=0.02))
        running = asyncio.Event()
        at_start: dict[str, int] = {}

        def progress(note: ProgressNote) -> None:
            if note.kind is Progress.STATE and note.state == "running" and not running.is_set():
                at_start.update({m: _games(x) for m, x in egms.items()})
                running.set()

        async def fault() -> None:
            if mid_heat is None:
                return
            await asyncio.wait_for(running.wait(), 30)
            await until(
                lambda: all(_games(x) > at_start[m] for m, x in egms.items()),
                "a game on every EGM",
                within=30,
            )
            await mid_heat()
            await until(
                lambda: all(a.core.session.stats.connects >= 2 for a in agents),
                "every agent reconnected",
                within=30,
            )

        injector = asyncio.create_task(fault())
        try:
            await asyncio.gather(*(link.open() for link in links.values()))
            runner = HeatRunner(
                JournalWriter(journal, tmp_path / "spool"),
                links,
                progress=progress,
                poll_interval_s=0.1,
            )
            out = await runner.run_new("AGT", sorted(egms), credits=CREDITS, seconds=HEAT_S)
            await injector
        finally:
            play.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await play
            for link in links.values():
                await link.close()
            connects = min(a.core.session.stats.connects for a in agents)
            bank_commands = min(a.core.stats.bank_commands for a in agents)
            for agent in agents:
                await agent.stop()
        truth = {m: x.last_tournament_meters for m, x in egms.items() if x is not host_timed}
        played = host_timed.meters.games_played - before[0]
        wagered = host_timed.meters.coin_in - before[2]
        truth[host_timed.machine_id] = ModelTournamentMeters(
            games_played=played,
            games_won=host_timed.meters.games_won - before[1],
            credits_wagered=wagered,
            credits_won=-1,  # not kept by the EGM: checked through the score (T12)
        )
        for egm in egms.values():  # back in normal play, no credits left (T12, T18)
            assert not egm.in_tournament
            assert egm.credits == 0
    # Every agent took the heat's start from the bank-wide command, and its end too unless the
    # broker was down when the end went out: a bank-wide command is QoS 0, and the board's own
    # command after BANK_DEADLINE carried the end instead (the scores below show it arrived).
    assert bank_commands >= (1 if mid_heat is not None else 2)
    return out, truth, connects


async def _check_scores(
    journal: Journal, out: HeatOutcome, truth: dict[str, ModelTournamentMeters]
) -> None:
    assert out.state is RunState.CLOSED, out.notes
    assert {m: s.state for m, s in out.seats.items()} == dict.fromkeys(truth, MachineState.RELEASED)
    assert {m: s.support for m, s in out.seats.items()} == {
        "AG-001": "native",
        "AG-002": "native",
        "AG-003": "host-timed",
    }
    results = {r.machine_id: r for r in await journal.results(out.run_id)}
    assert sorted(results) == sorted(truth)
    for machine_id, r in results.items():
        meters = truth[machine_id]  # the EGM's own count: nothing lost, nothing doubled
        assert r.games_played == meters.games_played > 0, machine_id
        assert r.games_won == meters.games_won, machine_id
        assert r.credits_wagered == meters.credits_wagered, machine_id
        if meters.credits_won >= 0:
            assert r.credits_won == meters.credits_won, machine_id
        assert r.score == CREDITS - r.credits_wagered + r.credits_won  # T12


@pytest.mark.mosquitto
async def test_agent_heat_against_mosquitto(
    journal: Journal, tmp_path: Path, mqtt_url: str
) -> None:
    query = "?mqtt5=1&timeout=30"
    out, truth, _ = await _agent_heat(journal, tmp_path, mqtt_url, gateway_query=query)
    await _check_scores(journal, out, truth)


@pytest.mark.parametrize("kind", ["mosquitto-process", "embedded"])
async def test_broker_restart_mid_heat_loses_no_score_through_the_agents(
    journal: Journal, tmp_path: Path, kind: str
) -> None:
    if kind == "mosquitto-process":
        if shutil.which("mosquitto") is None:
            pytest.skip("no mosquitto binary")
        private = Mosquitto(tmp_path)
        private.start()
        try:
            out, truth, connects = await _agent_heat(
                journal,
                tmp_path,
                private.url,
                gateway_query="?mqtt5=1&timeout=30",
                mid_heat=private.restart,
            )
        finally:
            private.stop()
    else:
        async with EmbeddedBroker() as embedded:
            out, truth, connects = await _agent_heat(
                journal, tmp_path, embedded.url, mid_heat=embedded.restart
            )
    assert connects >= 2  # every agent really lost the broker mid-heat and came back
    await _check_scores(journal, out, truth)
