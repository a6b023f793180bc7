"""The ``reelgate demo`` run: a whole qualifying heat, start to finish, with nothing to set up.

An embedded SQLite database in a fresh temporary folder (migrated to head); a bank of
emulated slot machines served over real SAS/TCP sockets on loopback, one of them without
native tournament support (host-timed); simulated players; a tournament with a field of
players who bought entries at the cash desk and registered in person for the heat
(T5, T11, T16); the bank checked and enabled by the technician; the heat put on the
schedule a few seconds ahead and started *by the scheduler* (the start announced,
T22), played with live progress, stopped by the heat clock, scored (T12) and
closed; then the qualifying standings (T13, T14, T19).

The signage page (``docs/signage.md``) runs on a free loopback port for the whole run
and its URL is printed first: open it to watch the countdown, the live scores and the
standings as a floor sign shows them.  ``--mqtt URL`` also publishes the same feed to a
broker (``docs/mqtt.md``); without it nothing outside the process is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from emulators.bank import Bank
from gateway.app.context import GatewayContext
from gateway.app.database import init as init_database
from gateway.app.gateway import GatewaySettings, RunningGateway
from gateway.app.identity import host_actor
from gateway.errors import OperatorError
from gateway.floor.store import set_bank_enabled
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.preflight import check_bank
from gateway.heats.runner import HeatOutcome
from gateway.heats.scheduler import Scheduler
from gateway.machines.links import MachineLink
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import (
    add_player,
    register_for_heat,
    sell_entries,
    unit_of_work,
)
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.services.standings import stage_standings
from gateway.tournament.settings import TournamentSettings
from gateway.web import FanoutFeed, SignageServer, start_signage
from protocols.mqtt.feed import MqttFeed

if TYPE_CHECKING:
    from protocols.mqtt.broker import EmbeddedBroker

BANK = "A"
ACTOR = "demo"
# Entries are sold seconds before the heat; with T7's same-day entries a demo run at the
# venue's midnight would sell for a day the heat is not in, so the demo sells T5's 48 h ones.
DEMO_SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)
PLAYERS = [
    ("Thandi Mokoena", "8203155800081"), ("Pieter van Wyk", "7507235800082"),
    ("Aisha Patel", "9011025800083"), ("Sipho Dlamini", "8806175800084"),
    ("Lerato Nkosi", "9302285800085"), ("Johan Botha", "6912045800086"),
    ("Naledi Khumalo", "9508115800087"), ("Ruan Pretorius", "8410305800088"),
    ("Zanele Mthembu", "7905215800089"), ("Kagiso Molefe", "9107135800080"),
]  # fmt: skip


class Board:
    """What the live screen shows, fed by the heat's progress notes."""

    def __init__(self, machines: list[str], seated: dict[str, str]) -> None:
        self.machines = machines
        self.seated = seated
        self.state = "scheduled"
        self.ends_at: float | None = None
        self.credits: dict[str, int] = {}
        self.notes: dict[str, str] = {}

    def on_progress(self, note: ProgressNote) -> None:
        if note.kind is Progress.STATE:
            self.state = note.state
            if note.seconds_left is not None:
                self.ends_at = time.monotonic() + note.seconds_left
        elif note.kind in (Progress.CREDITS, Progress.SCORE) and note.value is not None:
            self.credits[note.machine_id] = note.value
        elif note.kind is Progress.MALFUNCTION:
            self.notes[note.machine_id] = f"malfunction: {note.detail}"

    def render(self) -> Table:
        left = ""
        if self.ends_at is not None and self.state == "running":
            left = f" — {max(0.0, self.ends_at - time.monotonic()):4.1f} s left"
        table = Table(title=f"Qualifying heat 1 on bank {BANK}: {self.state}{left}")
        table.add_column("machine")
        table.add_column("player")
        table.add_column("credits", justify="right")
        table.add_column("what happened")
        for m in self.machines:
            table.add_row(
                m,
                self.seated.get(m, "-"),
                str(self.credits.get(m, "")),
                self.notes.get(m, ""),
            )
        return table


async def run(args: argparse.Namespace, folder: Path) -> int:
    console = Console()
    console.print(f"[bold]Reelgate demo[/bold] — working folder {folder}")
    broker = await _embedded_broker(args, console)
    mqtt: MqttFeed | None = None
    if getattr(args, "mqtt", ""):
        mqtt = await MqttFeed.connect(args.mqtt, args.site, wait=False)
    feed = FanoutFeed(mqtt)
    signage = await start_signage(feed, "127.0.0.1", 0)
    console.print(
        f"signage page: [bold]{signage.url}[/bold] (open it now to watch the heat; "
        "--linger S keeps it up after the standings)"
    )
    if mqtt is not None:
        console.print(f"live feed also on {args.mqtt} under reelgate/v1/{args.site}/feed/")
    try:
        code = await _run(args, folder, console, feed)
        console.print(Group(*(Text(x) for x in what_next(folder, bool(args.keep)))))
        return code
    finally:
        linger = float(getattr(args, "linger", 0.0))
        if linger > 0:
            console.print(f"signage page stays up {linger:.0f} s more ({signage.url})")
            await asyncio.sleep(linger)
        await _close_feed(signage, mqtt)
        if broker is not None:
            await broker.stop()


async def _embedded_broker(args: argparse.Namespace, console: Console) -> EmbeddedBroker | None:
    """``--mqtt embedded``: the demo's own broker on loopback (the ``embedded`` extra);
    ``args.mqtt`` becomes its URL, for ``reelgate signage --mqtt URL --site demo``."""
    if getattr(args, "mqtt", "") != "embedded":
        return None
    from gateway.app.embedded import embedded_broker

    broker = embedded_broker("--mqtt embedded")()
    await broker.start()
    args.mqtt = broker.url
    console.print(f"embedded MQTT broker at {broker.url}")
    return broker


DEMO_AFT_KEY = "44454d4f" * 5  # "DEMO" x 5: the demo floor's AFT registration key
DEMO_AFT_POS_ID = 1


async def _close_feed(signage: SignageServer, mqtt: MqttFeed | None) -> None:
    await signage.close()
    if mqtt is not None:
        with contextlib.suppress(TimeoutError):
            await mqtt.flush(2.0)
        await mqtt.close()


async def _run(args: argparse.Namespace, folder: Path, console: Console, feed: FanoutFeed) -> int:
    bank = Bank(args.machines, no_tournament_support=1, name_prefix=BANK)
    await bank.start()
    bank.start_players(seed=7, pace=0.8, bet=5)  # tournament players play max bet
    floor = folder / "floor.toml"
    rows = ",\n".join(
        f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}" }}' for b in bank.machines
    )
    # The host-timed machine enforces AFT as a real EGM does: the gateway registers
    # with this key and POS ID before loading its credits.
    aft = f'aft_registration_key = "{DEMO_AFT_KEY}"\naft_pos_id = {DEMO_AFT_POS_ID}\n'
    floor.write_text(f'[[bank]]\nname = "{BANK}"\n{aft}machines = [\n{rows},\n]\n')
    console.print(f"{args.machines} emulated machines on loopback SAS/TCP; floor file {floor}")
    url = f"sqlite+aiosqlite:///{folder / 'reelgate.db'}"
    # A demonstration is a rehearsal: its own database is a training one (TRAINING shown).
    await init_database(url, training=True, by=host_actor())
    settings = GatewaySettings(
        database=url,
        floor=str(floor),
        spool=folder / "journal.spool",
        poll_interval_s=0.5,
        tick_s=0.25,
        actor=ACTOR,
        upgrade=True,  # the demo's own fresh file (already created above)
        active_only=True,
        holder="demo",
    )
    try:
        async with RunningGateway(settings, feed) as gateway:
            return await _play(args, console, gateway)
    finally:
        await bank.close()


async def _play(args: argparse.Namespace, console: Console, gateway: RunningGateway) -> int:
    ctx = gateway.context
    spec = ctx.bank(BANK)
    links = gateway.links[BANK]
    await _check_and_enable(console, ctx, links)
    _heat_id, seated = await _tournament(ctx, args, [m.id for m in spec.active])
    console.print(
        f"{len(PLAYERS)} players bought entries; {len(seated)} registered for the heat "
        "(first come, first served, machines in order: rule 11)"
    )
    board = Board([m.id for m in spec.active], seated)
    scheduler = gateway.running
    to_feed = scheduler.progress

    def progress(note: ProgressNote) -> None:
        board.on_progress(note)  # the console
        if to_feed is not None:
            to_feed(note)  # the signage page (and MQTT with --mqtt)

    scheduler.progress = progress
    stop = asyncio.Event()
    running = asyncio.create_task(gateway.run(stop))
    try:
        outcome = await _watch(console, board, scheduler, args.seconds)
    finally:
        stop.set()
        await running
    await ctx.writer.drain(10.0)
    console.print()
    _summary(console, outcome)
    await _standings(console, ctx)
    return 0 if outcome.state.value == "closed" else 1


async def _check_and_enable(
    console: Console, ctx: GatewayContext, links: dict[str, MachineLink]
) -> None:
    """The technician's bank check, then the bank enabled (the scheduler only starts
    heats on enabled banks)."""
    checks = await check_bank(links)
    blocked = [c for c in checks if not c.ok]
    if blocked:
        raise OperatorError(f"bank check failed: {blocked[0].machine_id} {blocked[0].blockers}")
    host_timed = [c.machine_id for c in checks if c.tournament == "host-timed"]
    own = len(checks) - len(host_timed)
    timed = (
        f"; {', '.join(host_timed)} cannot, so the gateway times "
        f"{'it' if len(host_timed) == 1 else 'them'} and loads the credits"
        if host_timed
        else ""
    )
    console.print(
        f"bank check: all {len(checks)} machines ready; {own} run the heat clock themselves "
        f"(the machine's own tournament mode){timed}"
    )
    await set_bank_enabled(ctx.sessions, BANK, enabled=True, actor=ACTOR)
    await ctx.reload_floor()


async def _tournament(
    ctx: GatewayContext, args: argparse.Namespace, machines: list[str]
) -> tuple[int, dict[str, str]]:
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        t = await create_tournament(s, "Reelgate demo", DEMO_SETTINGS, actor=ACTOR)
        heat = await schedule_heat(
            s,
            t.id,
            stage=Stage.QUALIFYING,
            starts_at=now + timedelta(seconds=3),
            bank_name=BANK,
            duration_seconds=args.seconds,
            starting_credits=args.credits,
            actor=ACTOR,
            now=now,
        )
        for i, (name, id_number) in enumerate(PLAYERS):
            player = await add_player(
                s,
                id_number=id_number,
                name=name,
                date_of_birth=date(1970 + i, 1 + i, 10 + i),
                actor=ACTOR,
                now=now,
            )
            await sell_entries(s, t.id, player.id, cashier=ACTOR, now=now)  # T5: R50
        heat_id = heat.id
    seated: dict[str, str] = {}
    for name, id_number in PLAYERS[: len(machines)]:
        async with unit_of_work(ctx.sessions) as s:
            seat = await register_for_heat(
                s, heat_id, id_number, actor=ACTOR, now=datetime.now(UTC)
            )
            seated[seat.machine_id] = name
    return heat_id, seated


async def _watch(console: Console, board: Board, scheduler: Scheduler, seconds: int) -> HeatOutcome:
    deadline = time.monotonic() + seconds + 60  # bounded, whatever happens
    with Live(board.render(), console=console, refresh_per_second=4) as live:
        while time.monotonic() < deadline:
            live.update(board.render())
            if scheduler.finished:
                live.update(board.render())
                return scheduler.finished[0]
            await asyncio.sleep(0.25)
    raise OperatorError("demo heat did not finish in time")


def _summary(console: Console, outcome: HeatOutcome) -> None:
    acks = [s.unlock_ack_ms for s in outcome.seats.values() if s.unlock_ack_ms is not None]
    skew = (max(acks) - min(acks)) if acks else 0.0
    lines = [
        f"heat {outcome.state.value}: {len(acks)} machines unlocked together "
        f"(unlock acknowledgements spread over {skew:.2f} ms)",
    ]
    if outcome.committed_at is not None and outcome.ends_at is not None:
        ms = (outcome.committed_at - outcome.ends_at).total_seconds() * 1000
        lines.append(f"all scores stored {ms:.0f} ms after the heat clock's end")
    for m, s in outcome.seats.items():
        if s.error:
            lines.append(f"{m}: {s.error}")
    console.print(Group(*(Text(x) for x in lines)))


def what_next(folder: Path, keep: bool) -> list[str]:
    """Where to go from the demo, in commands that run as written."""
    db = f"sqlite:///{folder / 'reelgate.db'}"
    if not keep:
        return [
            "What next:",
            "  reelgate demo --keep          keeps this folder: its database, floor file and "
            "journal, to look into with the commands below",
            "  docs/guide/README.md          a guide for each job at the venue",
        ]
    return [
        f"What next (this folder is kept: {folder}):",
        f'  reelgate tournament standings "Reelgate demo" --database {db}',
        f"  reelgate audit verify --database {db}",
        "  docs/guide/README.md          a guide for each job at the venue",
    ]


async def _standings(console: Console, ctx: GatewayContext) -> None:
    async with ctx.sessions() as s:
        st = await stage_standings(s, "Reelgate demo", Stage.QUALIFYING)
    table = Table(title="Qualifying standings (best single entry, rules 13-14)")
    table.add_column("place", justify="right")
    table.add_column("player")
    table.add_column("credits", justify="right")
    table.add_column("tie")
    for line in st.lines:
        table.add_row(
            str(line.place),
            line.player_name,
            str(line.credits),
            "tie: card draw (rule 19)" if line.tied else "",
        )
    console.print(table)
    with contextlib.suppress(Exception):
        if st.ties_to_draw:
            console.print(f"{len(st.ties_to_draw)} tie(s) to settle by card draw (rule 19)")
