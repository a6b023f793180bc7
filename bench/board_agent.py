"""Interface-board agent benchmark: heats through gateway → broker → agent → SAS → EGM.

    python bench/board_agent.py                          # 20 EGMs, 3 heats, embedded broker
    REELGATE_MQTT_URL=mqtt://127.0.0.1:1883 python bench/board_agent.py --machines 40

Emulated EGMs (SAS/TCP on loopback; a quarter without tournament mode, so their agents
run the heat host-timed over AFT), each behind a ``gateway.board`` agent at the SAS
cadence (200 ms poll spacing, exception drains every 200 ms), driven by the gateway's
MQTT drivers and the heat runner, all in this process.  Per heat:

* command round trip — ``read-credits`` from the gateway's driver to the EGM and back
  (one LP 1A behind the broker), median over every machine;
* start skew — spread of the EGM-side times at which play was enabled (each emulated
  EGM stamps its PLAY_ENABLED event); a poll already on the line holds an unlock up to
  the 200 ms spacing, which bounds it;
* end -> stored — from the heat clock's end until the last score was committed.

Prints a table of medians (worst run in brackets).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from emulators.bank import Bank  # noqa: E402
from emulators.machine import Event, ModelEvent  # noqa: E402
from emulators.player import Players  # noqa: E402
from gateway.board.agent import BoardAgent  # noqa: E402
from gateway.heats.runner import HeatRunner  # noqa: E402
from gateway.heats.spool import JournalWriter  # noqa: E402
from gateway.machines.links import MachineLink  # noqa: E402
from gateway.machines.mqtt import MqttMachineDriver  # noqa: E402
from gateway.machines.sas import SasDriver  # noqa: E402
from protocols.mqtt.broker import EmbeddedBroker  # noqa: E402
from protocols.mqtt.client import MqttSettings  # noqa: E402
from storage.db import Base, make_engine, make_sessionmaker  # noqa: E402
from storage.journal import Journal, RunState  # noqa: E402


async def one_heat(
    bank: Bank, broker_url: str, site: str, folder: Path, seconds: int
) -> dict[str, float]:
    engine = make_engine(f"sqlite+aiosqlite:///{folder / f'bench-{time.time_ns()}.db'}")
    async with engine.begin() as conn:
        import storage.models  # noqa: F401

        await conn.run_sync(Base.metadata.create_all)
    journal = Journal(make_sessionmaker(engine))
    enabled: dict[str, list[float]] = {m.machine.machine_id: [] for m in bank.machines}

    def stamper(times: list[float]) -> Callable[[ModelEvent], None]:
        def stamp(note: ModelEvent) -> None:
            if note.event is Event.PLAY_ENABLED:
                times.append(note.at)  # the EGM's own monotonic clock

        return stamp

    stamps = {m.machine.machine_id: stamper(enabled[m.machine.machine_id]) for m in bank.machines}
    for m in bank.machines:
        m.machine.subscribe(stamps[m.machine.machine_id])
    drivers = {
        m: MqttMachineDriver.from_uri(m, f"{broker_url}/{site}/{m}?timeout=10") for m in enabled
    }
    links = {m: MachineLink(m, d) for m, d in drivers.items()}
    try:
        await asyncio.gather(*(ln.open() for ln in links.values()))
        trips: list[float] = []
        for d in drivers.values():
            t0 = time.perf_counter()
            await d.credits()
            trips.append((time.perf_counter() - t0) * 1000)
        for times in enabled.values():
            times.clear()
        runner = HeatRunner(JournalWriter(journal, folder / "spool"), links)
        out = await runner.run_new("AGT", sorted(links), credits=1000, seconds=seconds)
    finally:
        for ln in links.values():
            await ln.close()
        for m in bank.machines:
            m.machine.unsubscribe(stamps[m.machine.machine_id])
    if out.state is not RunState.CLOSED or out.committed_at is None or out.ends_at is None:
        raise RuntimeError(f"heat ended {out.state.value}: {out.notes[:5]}")
    scored = len(await journal.results(out.run_id))
    await engine.dispose()
    if scored != len(links):
        raise RuntimeError(f"only {scored} of {len(links)} scores stored")
    firsts = [times[0] for times in enabled.values() if times]
    if len(firsts) != len(enabled):
        raise RuntimeError("an EGM never enabled play")
    return {
        "trip": statistics.median(trips),
        "skew": (max(firsts) - min(firsts)) * 1000,
        "stored": (out.committed_at - out.ends_at).total_seconds() * 1000,
    }


def _driver(machine_id: str, endpoint: str) -> SasDriver:
    driver = SasDriver.from_uri(machine_id, endpoint)
    driver.use_aft_host("0123456789abcdef0123456789abcdef01234567", 7001)  # strict AFT EGMs
    return driver


async def run(args: argparse.Namespace, console: Console) -> list[dict[str, float]]:
    site = f"bench{uuid.uuid4().hex[:6]}"
    rows: list[dict[str, float]] = []
    async with contextlib.AsyncExitStack() as stack:
        url = args.broker
        if not url:
            url = (await stack.enter_async_context(EmbeddedBroker())).url
        bank = await stack.enter_async_context(
            Bank(args.machines, seed=9, no_tournament_support=args.machines // 4, name_prefix="AG")
        )
        agents = [
            BoardAgent(m.machine.machine_id, _driver(m.machine.machine_id, m.endpoint),
                       MqttSettings.from_url(url), site)
            for m in bank.machines
        ]  # fmt: skip
        for agent in agents:
            await agent.start()
            stack.push_async_callback(agent.stop)
        players = Players([m.machine for m in bank.machines], seed=4, pace=args.pace)
        play = asyncio.create_task(players.run(tick=0.05))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(args.runs):
                    r = await one_heat(bank, url, site, Path(tmp), args.seconds)
                    rows.append(r)
                    console.print(
                        f"  heat {i + 1}: round trip {r['trip']:.0f} ms, start skew "
                        f"{r['skew']:.1f} ms, end -> stored {r['stored']:.0f} ms"
                    )
        finally:
            play.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await play
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="heats through interface-board agents")
    parser.add_argument("--machines", type=int, default=20, help="EGMs, one agent each")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3, help="heat length")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds between spins")
    parser.add_argument("--broker", default=os.environ.get("REELGATE_MQTT_URL", ""),
                        help="MQTT broker URL (default: REELGATE_MQTT_URL, else embedded)")
    args = parser.parse_args(argv)
    if args.runs < 1 or not 1 <= args.machines <= 200:
        parser.error("--runs >= 1, --machines 1..200")
    console = Console()
    rows = asyncio.run(run(args, console))
    broker = args.broker or "embedded amqtt"
    table = Table(
        title=f"{args.machines} EGMs behind board agents, one heat ({broker}); "
        f"median of {args.runs} (worst)"
    )
    for col in ("machines", "command round trip ms", "start skew ms", "end -> stored ms"):
        table.add_column(col, justify="right")

    def cell(key: str, fmt: str) -> str:
        values = [r[key] for r in rows]
        return f"{format(statistics.median(values), fmt)} ({format(max(values), fmt)})"

    table.add_row(str(args.machines), cell("trip", ".0f"), cell("skew", ".1f"),
                  cell("stored", ".0f"))
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
