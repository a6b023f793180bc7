"""The running gateway as issue 5 promises it: ``reelgate serve`` with the live feed (MQTT
and the signage page) and SNMP health wired into the heats.

An emulated bank over real SAS/TCP sockets, every board with a real SNMP agent (v2c) on
loopback; the gateway's trap receiver and signage page on free ports; the live feed to a
broker (Mosquitto when ``REELGATE_MQTT_URL`` is set, else the embedded amqtt broker).  A
scheduled heat starts by itself; mid-heat one board's agent sends a door-opened trap:
that machine is out of the heat and its player re-seated in the next heat (T20)
while the others play on and are scored; the sign and the broker carry the heat's
state, the per-seat scores with player names, and the standings without that seat.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
from sqlalchemy import select

from emulators.bank import Bank
from emulators.snmp_agent import SnmpAgent
from gateway.app.commands import serve as serve_command
from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from gateway.web import FanoutFeed
from gateway.web.mqtt_source import MqttFeedSource
from protocols.mqtt import codec
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.topics import Channel, board_topic
from protocols.snmp.mib import Notification
from protocols.snmp.security import V2cCommunity
from storage.journal import MachineState, RunState
from storage.tournament import Seat, SeatStatus

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

TRAPPED = "A-002"  # the machine whose board reports its door opened mid-heat


@pytest.fixture
async def broker_url() -> AsyncIterator[str]:
    url = os.environ.get("REELGATE_MQTT_URL", "")
    if url:
        yield url
        return
    async with EmbeddedBroker() as broker:
        yield broker.url


async def _until(cond: Callable[[], bool], within: float, what: str) -> None:
    for _ in range(int(within / 0.05)):  # bounded
        if cond():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not reached in {within} s")


def _floor(bank: Bank, agents: dict[str, SnmpAgent]) -> str:
    rows = ",\n".join(
        f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}", '
        f'snmp = "udp://127.0.0.1:{agents[b.machine.machine_id].port}", community = "public" }}'
        for b in bank.machines
    )
    return f'[[bank]]\nname = "A"\nmachines = [\n{rows},\n]\n'


async def _tournament(db: str, floor: Path, spool: Path) -> tuple[int, int]:
    """Heat 1 due in two seconds with three seated players; heat 2 later with free seats
    (where T20 re-seats a player whose machine failed)."""
    ctx = await GatewayContext.open(database=db, floor_path=str(floor), spool=spool, upgrade=True)
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "Ridge Classic", SETTINGS, actor="test")
            ids = []
            for number, start in ((1, 2.0), (2, 3600.0)):
                heat = await schedule_heat(
                    s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=start),
                    bank_name="A", duration_seconds=4, starting_credits=500, actor="test",
                    now=now, number=number,
                )  # fmt: skip
                ids.append(heat.id)
            for i in range(3):
                p = await add_player(
                    s, id_number=f"85020{i}5800087", name=f"Player {i + 1}",
                    date_of_birth=date(1985, 2, 1 + i), actor="test", now=now,
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, cashier="test", now=now)
        for i in range(3):
            async with unit_of_work(ctx.sessions) as s:
                await register_for_heat(s, ids[0], f"85020{i}5800087", actor="test", now=now)
        return ids[0], ids[1]
    finally:
        await ctx.close()


def _args(floor: Path, db: str, spool: Path, mqtt: str, site: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    args = parser.parse_args(
        ["serve", "--floor", str(floor), "--database", db, "--spool", str(spool),
         "--tick", "0.2", "--mqtt", mqtt, "--site", site, "--signage-port", "0"]
    )  # fmt: skip
    serve_command.check_arguments(args)
    return args


def _snapshot(url: str) -> dict[str, Any]:
    with urlopen(f"{url}snapshot", timeout=5) as response:  # loopback only
        body: dict[str, dict[str, Any]] = json.loads(response.read())
    return body["retained"]


async def test_serve_publishes_the_live_heat_and_a_door_trap_ends_one_seat(
    tmp_path: Path, broker_url: str
) -> None:
    site = f"t{uuid.uuid4().hex[:10]}"
    bank = Bank(3, name_prefix="A")
    await bank.start()
    bank.start_players(seed=5, pace=0.3)
    agents: dict[str, SnmpAgent] = {}
    sign = FanoutFeed()  # a sign elsewhere on the floor, fed from the broker
    source = MqttFeedSource(sign, broker_url, site)
    task: asyncio.Task[int] | None = None
    stop = asyncio.Event()
    try:
        for b in bank.machines:
            agent = SnmpAgent(b.machine, users=[V2cCommunity("public")])
            await agent.start()
            agents[b.machine.machine_id] = agent
        floor = tmp_path / "floor.toml"
        floor.write_text(_floor(bank, agents))
        db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        spool = tmp_path / "spool"
        heat_1, heat_2 = await _tournament(db, floor, spool)
        await source.start(wait=True)

        ready: list[serve_command.Serving] = []
        args = _args(floor, db, spool, broker_url, site)
        task = asyncio.create_task(serve_command.serve(args, stop, on_ready=ready.append))
        await _until(lambda: bool(ready) or task.done(), 20, "gateway ready")
        serving = ready[0]
        assert serving.signage is not None
        assert serving.health is not None
        assert serving.trap_port
        for agent in agents.values():  # the boards are told where the gateway listens
            await agent.add_trap_target("127.0.0.1", serving.trap_port)

        # With --mqtt the gateway also runs the card desk (issue 30 item 1, T1-T3 at
        # card-in): a card from a board of the site is decided and audited.
        assert serving.cards is not None
        cards = serving.cards
        await _until(cards.session.connected.is_set, 20, "the card desk on the broker")
        card = codec.Card(seq=1, at=datetime.now(UTC), action=codec.CardAction.CARD_IN,
                          machine="A01", card="777001", reader=codec.ReaderKind.RFID)  # fmt: skip
        await source.session.publish(  # type: ignore[union-attr]
            board_topic(site, "A01", Channel.CARD), codec.encode(card)
        )
        await _until(lambda: cards.stats.decided == 1, 20, "the card decided")

        scheduler = serving.scheduler
        await _until(
            lambda: (
                "A" in scheduler.live
                and getattr(scheduler.live["A"].runner, "out", None) is not None
                and scheduler.live["A"].runner.out.state is RunState.RUNNING
            ),
            20,
            "heat running",
        )
        await asyncio.sleep(1.0)  # a second of play
        agents[TRAPPED].notify(Notification.DOOR_OPENED)  # the board's door sensor trips
        await _until(lambda: bool(scheduler.finished), 30, "heat closed")

        outcome = scheduler.finished[0]
        assert outcome.state is RunState.CLOSED
        trapped = outcome.seats[TRAPPED]
        # T20: out of the heat, not scored; back in normal play once the heat closed.
        assert trapped.error == "SNMP trap: door-opened"
        assert trapped.score is None
        assert trapped.state is MachineState.RELEASED
        others = [s for m, s in outcome.seats.items() if m != TRAPPED]
        assert all(s.state is MachineState.RELEASED and s.score is not None for s in others)
        assert serving.health.is_marked(TRAPPED)  # preflight refuses it until cleared
        assert (await serving.health.preflight([TRAPPED]))[TRAPPED] == ["marked: door-opened"]

        # T20: the player is given the first free seat in the next similar heat.
        ctx = await GatewayContext.open(database=db, floor_path=None, spool=spool)
        try:
            async with ctx.sessions() as s:
                seats = (await s.scalars(select(Seat).order_by(Seat.id))).all()
        finally:
            await ctx.close()
        old = next(x for x in seats if x.heat_id == heat_1 and x.machine_id == TRAPPED)
        assert old.status is SeatStatus.MOVED
        moved = next(x for x in seats if x.id == old.moved_to_seat_id)
        assert moved.heat_id == heat_2
        assert moved.entry_id == old.entry_id

        # The signage page served by the gateway itself.
        page = await asyncio.to_thread(_snapshot, serving.signage.url)
        key = str(heat_1)
        assert page["current"] == {
            "heat": key,
            "name": "Ridge Classic - heat 1",
            "stage": "Qualifying",
            "bank": "A",
            "tournament": page["current"]["tournament"],
        }
        assert page["about"] == {"training": False}  # a production database: no TRAINING mark
        # Beside the heat: its tournament's leaderboard, and the bank's next heat.
        board = page[f"tournament/{page['current']['tournament']}/leaderboard"]
        assert board["stage_title"] == "Qualifying"
        assert "bank/A/next" in page
        assert page[f"heat/{key}/state"]["state"] == "closed"
        assert page[f"heat/{key}/state"]["machines"] == ["A-001", "A-002", "A-003"]
        seat = page[f"heat/{key}/seat/{TRAPPED}"]
        assert seat["player"] == "Player 2"
        assert "door-opened" in seat["malfunction"]
        standings = page[f"heat/{key}/standings"]
        assert standings["void"] is False
        rows = standings["rows"]
        assert [r["machine"] for r in rows] == sorted(
            ("A-001", "A-003"),
            key=lambda m: (-outcome.seats[m].score, m),  # type: ignore[operator]
        )  # T13: highest credits first; the failed seat has no place
        assert {r["player"] for r in rows} == {"Player 1", "Player 3"}
        for r in rows:
            assert r["credits"] == outcome.seats[r["machine"]].score  # the stored score

        # The same feed over MQTT, as a sign elsewhere on the floor receives it.
        await _until(
            lambda: sign.retained().get(f"heat/{key}/standings", {}).get("rows") == rows,
            10,
            "standings over MQTT",
        )
        assert sign.retained()["current"]["name"] == "Ridge Classic - heat 1"
    finally:
        stop.set()
        if task is not None:
            assert await asyncio.wait_for(task, 30) == 0
        await source.close()
        for agent in agents.values():
            agent.close()
        await bank.close()


def test_serve_options_are_checked_before_anything_opens(tmp_path: Path) -> None:
    from gateway.errors import OperatorError

    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    base = ["serve", "--floor", str(tmp_path / "f.toml")]
    for extra, names in (
        (["--signage-port", "70000"], "--signage-port"),
        (["--mqtt", "http://x"], "--mqtt"),
        (["--mqtt", "mqtt://127.0.0.1:1883", "--site", "a/b"], "--site"),
        (["--snmp-traps", "nowhere"], "--snmp-traps"),
        (["--poll-interval", "0.1"], "--poll-interval"),
    ):
        with pytest.raises(OperatorError, match=names):
            serve_command.check_arguments(parser.parse_args(base + extra))
