"""MQTT vs SAS heat benchmark: 200 MQTT boards and 200 SAS machines in one heat.

    python bench/mqtt_heat.py                        # 200 + 200, 3 heats, embedded broker
    REELGATE_MQTT_URL=mqtt://127.0.0.1:1883 python bench/mqtt_heat.py --runs 5
    python bench/mqtt_heat.py --mqtt 50 --sas 50 --broker mqtt://127.0.0.1:1883

One mixed bank, one heat runner (``gateway/heats``), both kinds of machine through the
same ``MachineDriver`` interface.  The SAS bank runs in its own process
(``bench/bank_host.py``, SAS/TCP on loopback, 200 ms poll spacing); the MQTT boards run
in another child process (this file with ``--serve-boards``) on the broker: Mosquitto
when ``--broker``/``REELGATE_MQTT_URL`` names one, else an embedded amqtt broker in that
child.  Per kind of machine:

* start skew — spread of the machine-side times at which play was enabled (each
  emulated EGM stamps its PLAY_ENABLED event; CLOCK_MONOTONIC is shared by processes);
* score collection — from the heat clock's end to the last score of that kind read
  (lock, then the tournament meters);
* end -> stored (whole heat) — until the last score was committed to the journal.

Prints a table of medians (worst run in brackets).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bank_host import BankProcess  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from gateway.heats.runner import HeatRunner  # noqa: E402
from gateway.heats.spool import JournalWriter  # noqa: E402
from gateway.machines.driver import MachineDriver  # noqa: E402
from gateway.machines.links import MachineLink  # noqa: E402
from gateway.machines.registry import open_driver  # noqa: E402
from gateway.records import chain  # noqa: E402
from gateway.scores import HeatScore, TournamentMeters  # noqa: E402
from storage.db import Base, make_engine, make_sessionmaker  # noqa: E402
from storage.journal import Journal, RunState  # noqa: E402


# -- child: the MQTT boards ---------------------------------------------------------------
async def serve_boards(count: int, broker_url: str, site: str, pace: float, first: int = 1) -> int:
    from emulators.machine import EmulatedMachine, Event, ModelEvent
    from emulators.mqtt_board import MqttBoard
    from emulators.player import Players
    from protocols.mqtt.broker import EmbeddedBroker
    from protocols.mqtt.client import MqttSettings

    embedded = None
    if not broker_url:
        embedded = EmbeddedBroker()
        await embedded.start()
        broker_url = embedded.url
    settings = MqttSettings.from_url(broker_url)
    unlocks: dict[str, list[float]] = {}
    received = _stamp_unlock_receipts()
    boards: list[MqttBoard] = []
    for i in range(first - 1, first - 1 + count):
        machine = EmulatedMachine(f"MQ-{i + 1:03d}", seed=10_000 + i)
        times = unlocks.setdefault(machine.machine_id, [])

        def on_event(note: ModelEvent, times: list[float] = times) -> None:
            if note.event is Event.PLAY_ENABLED:
                times.append(note.at)

        machine.subscribe(on_event)
        boards.append(MqttBoard(machine, settings, site))
    await asyncio.gather(*(b.start() for b in boards))
    players = Players([b.machine for b in boards], seed=3, pace=pace)
    play = asyncio.create_task(players.run())
    base, _, query = broker_url.partition("?")
    suffix = f"?{query}" if query else ""
    endpoints = [
        {
            "machine": b.machine.machine_id,
            "endpoint": f"{base}/{site}/{b.machine.machine_id}{suffix}",
        }
        for b in boards
    ]
    print(json.dumps({"ready": True, "machines": endpoints}), flush=True)
    try:
        while True:  # bounded by the parent: one command per line, "quit" ends
            line = (await asyncio.to_thread(sys.stdin.readline)).strip()
            if not line or line == "quit":
                break
            if line == "unlocks":
                print(json.dumps({"unlocks": unlocks, "received": received}), flush=True)
                for v in unlocks.values():
                    v.clear()
                received.clear()
            else:
                print(json.dumps({"error": f"unknown command {line!r}"}), flush=True)
    finally:
        play.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await play
        await asyncio.gather(*(b.stop() for b in boards))
        if embedded is not None:
            await embedded.stop()
    return 0


def _is_unlock(payload: bytes) -> bool:
    return b'"cmd":"unlock"' in payload


def _stamp_unlock_receipts() -> dict[str, list[float]]:
    """Board side of the start profile: per command topic, when the unlock was parsed off
    the socket (paho's callback: aiomqtt's, or the session's own where it takes messages
    from paho directly) and when our session dispatched it."""
    import aiomqtt

    from protocols.mqtt import client as mqtt_client

    # Keyed by the board's session, not the topic: a bank-wide unlock reaches every
    # board on one topic.
    received: dict[str, list[float]] = {}

    def note(key: str, payload: bytes) -> None:
        if _is_unlock(payload) and key not in received:
            received[key] = [time.monotonic()]  # the start's; not a later release

    on_message = aiomqtt.Client._on_message

    def parsed(self: Any, client: Any, userdata: Any, message: Any) -> None:
        note(str(id(self)), message.payload)
        on_message(self, client, userdata, message)

    aiomqtt.Client._on_message = parsed  # type: ignore[method-assign]
    early: Any = getattr(mqtt_client, "_EarlyMessages", None)
    if early is not None:
        receive = early.receive

        def parsed_direct(self: Any, topic: str, payload: bytes) -> None:
            note(str(id(self._dispatch.__self__)), payload)
            receive(self, topic, payload)

        early.receive = parsed_direct
    dispatch = mqtt_client.MqttSession._dispatch

    def dispatched(self: mqtt_client.MqttSession, topic: str, payload: bytes) -> None:
        key = str(id(self))
        if _is_unlock(payload) and len(received.get(key, ())) == 1:
            received[key].append(time.monotonic())
        dispatch(self, topic, payload)

    mqtt_client.MqttSession._dispatch = dispatched  # type: ignore[method-assign]
    return received


def _stamp_unlock_sends() -> list[float]:
    """Gateway side of the start profile: when each unlock was handed to the client."""
    from protocols.mqtt.client import MqttSession

    sent: list[float] = []
    publish_now = MqttSession.publish_now

    def stamped(self: MqttSession, topic: str, payload: bytes, **kw: Any) -> None:
        publish_now(self, topic, payload, **kw)
        if _is_unlock(payload):
            sent.append(time.monotonic())

    MqttSession.publish_now = stamped  # type: ignore[method-assign]
    return sent


def start_profile(
    sent: list[float], stamps: dict[str, list[float]], received: dict[str, list[float]]
) -> dict[str, float]:
    """Where the MQTT start skew goes (ms): the gateway's burst (first to last unlock
    handed over), the broker's fan-out (spread of the boards' socket reads), the board
    code (socket read -> our dispatch -> play enabled, worst board)."""
    plays = sorted(times[0] for times in stamps.values() if times)
    reads = sorted(r[0] for r in received.values())
    lags = [r[1] - r[0] for r in received.values() if len(r) == 2]
    ms = 1000.0
    return {
        "burst": (max(sent) - min(sent)) * ms if sent else float("nan"),
        "first_read": (reads[0] - min(sent)) * ms if sent and reads else float("nan"),
        "read_spread": (reads[-1] - reads[0]) * ms if reads else float("nan"),
        "read_to_dispatch": max(lags) * ms if lags else float("nan"),
        "last_read_to_play": (plays[-1] - reads[-1]) * ms if plays and reads else float("nan"),
    }


class BoardProcess:
    def __init__(self, count: int, broker_url: str, pace: float, first: int = 1) -> None:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve-boards",
            str(count),
            "--first",
            str(first),
            "--site",
            f"bench{uuid.uuid4().hex[:8]}",
            "--pace",
            str(pace),
        ]
        if broker_url:
            cmd += ["--broker", broker_url]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        ready = self.ask(None)
        if not ready.get("ready"):
            raise RuntimeError(f"MQTT boards did not start: {ready}")
        self.machines: list[dict[str, str]] = ready["machines"]

    def ask(self, command: str | None) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        if command is not None:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("MQTT board process ended")
        data: dict[str, Any] = json.loads(line)
        return data

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=20)
            except Exception:
                self.proc.kill()
                self.proc.wait(timeout=5)


class BoardGroup:
    """The MQTT boards split over several processes (a floor's boards are devices of
    their own; one interpreter serving every board's MQTT client reads them in turn)."""

    def __init__(self, count: int, broker_url: str, pace: float, processes: int) -> None:
        sizes = [count // processes + (1 if i < count % processes else 0) for i in range(processes)]
        firsts = [1 + sum(sizes[:i]) for i in range(processes)]
        self.parts: list[BoardProcess] = []
        try:
            for size, first in zip(sizes, firsts, strict=True):
                self.parts.append(BoardProcess(size, broker_url, pace, first))
        except BaseException:
            self.close()
            raise
        self.machines = [m for part in self.parts for m in part.machines]

    def ask(self, command: str) -> dict[str, Any]:
        merged: dict[str, Any] = {"unlocks": {}, "received": {}}
        for part in self.parts:
            answer = part.ask(command)
            for key in merged:
                merged[key].update(answer.get(key, {}))
        return merged

    def close(self) -> None:
        for part in self.parts:
            part.close()


# -- parent: the gateway ------------------------------------------------------------------
class Timed:
    """Delegates to a driver and notes when its last score read finished."""

    def __init__(self, inner: MachineDriver) -> None:
        self.inner = inner
        self.machine_id = inner.machine_id
        self.scored_at: datetime | None = None

    async def heat_score(self) -> HeatScore:
        score = await self.inner.heat_score()
        self.scored_at = datetime.now(UTC)
        return score

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name != "tournament_meters":
            return attr

        # Native SAS machines are scored from one LP 99 read when the driver offers it
        # (the runner looks the method up): that read is the score's collection.
        async def timed_meters() -> TournamentMeters:
            meters: TournamentMeters = await attr()
            self.scored_at = datetime.now(UTC)
            return meters

        return timed_meters


def _query(uri: str, per_board: bool) -> str:
    """``bank=0``: each board's start and end sent to it alone (the earlier way)."""
    return uri + ("&" if "?" in uri else "?") + "bank=0" if per_board else uri


def _skew_ms(stamps: dict[str, list[float]]) -> float:
    firsts = [times[0] for times in stamps.values() if times]
    if len(firsts) != len(stamps):
        raise RuntimeError("a machine never enabled play")
    return (max(firsts) - min(firsts)) * 1000


async def one_heat(
    sas: BankProcess,
    mqtt: BoardGroup,
    folder: Path,
    seconds: int,
    sent: list[float],
    per_board: bool = False,
) -> dict[str, float]:
    url = f"sqlite+aiosqlite:///{folder / f'bench-{time.time_ns()}.db'}"
    engine = make_engine(url)
    chain.throwaway_keys()
    chain.bind(engine, url)
    async with engine.begin() as conn:
        import storage.models  # noqa: F401

        await conn.run_sync(Base.metadata.create_all)
    journal = Journal(make_sessionmaker(engine))
    endpoints = {m["machine"]: str(m["endpoint"]) for m in sas.machines}
    endpoints |= {m["machine"]: _query(m["endpoint"], per_board) for m in mqtt.machines}
    timed = {m: Timed(open_driver(m, uri)) for m, uri in endpoints.items()}
    links = {m: MachineLink(m, d) for m, d in timed.items()}
    try:
        opened = await asyncio.gather(*(ln.open() for ln in links.values()), return_exceptions=True)
        failed = [m for m, r in zip(links, opened, strict=True) if isinstance(r, BaseException)]
        if failed:
            raise RuntimeError(f"could not open {len(failed)} links: {failed[:3]}")
        await asyncio.to_thread(sas.ask, "unlocks")  # clear earlier stamps
        await asyncio.to_thread(mqtt.ask, "unlocks")
        sent.clear()
        runner = HeatRunner(JournalWriter(journal, folder / "spool"), links)
        out = await runner.run_new("MIX", sorted(links), credits=1000, seconds=seconds)
    finally:
        for ln in links.values():
            await ln.close()
    if out.state is not RunState.CLOSED or out.committed_at is None or out.ends_at is None:
        raise RuntimeError(f"heat ended {out.state.value}: {out.notes[:5]}")
    scored = len(await journal.results(out.run_id))
    await engine.dispose()
    # A score lost at the end (a loaded machine's read timing out) is counted, not fatal:
    # the start was measured on every machine all the same.
    lost = len(links) - scored
    ends = out.ends_at

    def collected(kind: str) -> float:
        done = [t.scored_at for m, t in timed.items() if m.startswith(kind) and t.scored_at]
        if not done:  # every score of that kind lost (counted in "lost")
            return float("nan")
        return (max(done) - ends).total_seconds() * 1000

    boards = await asyncio.to_thread(mqtt.ask, "unlocks")
    profile = start_profile(sent, boards["unlocks"], boards["received"])
    return {
        "sas_skew": _skew_ms((await asyncio.to_thread(sas.ask, "unlocks"))["unlocks"]),
        "mqtt_skew": _skew_ms(boards["unlocks"]),
        **profile,
        "sas_scores": collected("SAS"),
        "mqtt_scores": collected("MQ"),
        "stored": (out.committed_at - ends).total_seconds() * 1000,
        "lost": float(lost),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="MQTT vs SAS: start skew and score collection")
    parser.add_argument("--mqtt", type=int, default=200, help="MQTT boards")
    parser.add_argument("--sas", type=int, default=200, help="SAS machines")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3, help="heat length")
    parser.add_argument(
        "--broker",
        default=os.environ.get("REELGATE_MQTT_URL", ""),
        help="MQTT broker URL (default: REELGATE_MQTT_URL, else embedded)",
    )
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between spins")
    parser.add_argument(
        "--board-processes", type=int, default=1, help="processes the MQTT boards are split over"
    )
    parser.add_argument(
        "--per-board",
        action="store_true",
        help="send each board its own start and stop (no bank-wide command), to compare",
    )
    parser.add_argument("--serve-boards", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--site", default="bench", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_boards:
        return asyncio.run(
            serve_boards(args.serve_boards, args.broker, args.site, args.pace, args.first)
        )
    if args.runs < 1 or not 1 <= args.mqtt <= 500 or not 1 <= args.sas <= 500:
        parser.error("--runs >= 1, --mqtt and --sas 1..500")
    if not 1 <= args.board_processes <= min(8, args.mqtt):
        parser.error("--board-processes 1..8, at most one per board")
    console = Console()
    rows: list[dict[str, float]] = []
    sent = _stamp_unlock_sends()
    with BankProcess(args.sas, players=True, pace=args.pace, prefix="SAS") as sas:
        mqtt = BoardGroup(args.mqtt, args.broker, args.pace, args.board_processes)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(args.runs):
                    r = asyncio.run(
                        one_heat(sas, mqtt, Path(tmp), args.seconds, sent, args.per_board)
                    )
                    rows.append(r)
                    console.print(
                        f"  heat {i + 1}: skew SAS {r['sas_skew']:.1f} ms / MQTT "
                        f"{r['mqtt_skew']:.1f} ms; scores SAS {r['sas_scores']:.0f} ms / MQTT "
                        f"{r['mqtt_scores']:.0f} ms; stored {r['stored']:.0f} ms; scores lost "
                        f"{r['lost']:.0f}\n"
                        f"    MQTT start: gateway burst {r['burst']:.1f} ms, first board read "
                        f"+{r['first_read']:.1f} ms, reads spread {r['read_spread']:.1f} ms, "
                        f"read -> dispatch <= {r['read_to_dispatch']:.1f} ms, last read -> "
                        f"last play-enabled {r['last_read_to_play']:.1f} ms; load "
                        f"{os.getloadavg()[0]:.2f}"
                    )
        finally:
            mqtt.close()
    broker = args.broker or "embedded amqtt"
    table = Table(
        title=f"{args.mqtt} MQTT ({args.board_processes} board processes, "
        f"{'per-board' if args.per_board else 'bank-wide'} start) + {args.sas} SAS "
        f"machines, one heat ({broker}); "
        f"median of {args.runs} (worst); load average {os.getloadavg()[0]:.2f}"
    )
    for col in ("machines", "start skew ms", "score collection ms", "end -> stored ms"):
        table.add_column(col, justify="right")

    def cell(key: str, fmt: str) -> str:
        values = [r[key] for r in rows]
        return f"{format(statistics.median(values), fmt)} ({format(max(values), fmt)})"

    stored = cell("stored", ".0f")
    table.add_row(f"{args.mqtt} MQTT", cell("mqtt_skew", ".1f"), cell("mqtt_scores", ".0f"), stored)
    table.add_row(f"{args.sas} SAS", cell("sas_skew", ".1f"), cell("sas_scores", ".0f"), stored)
    console.print(table)
    ratios = [r["mqtt_skew"] / r["sas_skew"] for r in rows if r["sas_skew"] > 0]
    if ratios:
        each = ", ".join(f"{x:.1f}" for x in ratios)
        lost = sum(r["lost"] for r in rows)
        console.print(
            f"MQTT/SAS start skew: median {statistics.median(ratios):.2f}x (per heat {each}); "
            f"scores lost {lost:.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
