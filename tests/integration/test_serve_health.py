"""``reelgate serve --http``: ``/metrics`` after a heat on emulated machines, and
``/readyz`` turning unhealthy when the database, the broker or a bank's links go away,
and healthy again once they are back.

An emulated bank over real SAS/TCP sockets on loopback, the live feed to an embedded
broker (stopped and started again on its port), the gateway in-process (``serve``) on a
SQLite file and, when ``REELGATE_DATABASE_URL`` is set, on a PostgreSQL database of its
own (:func:`tests.integration.conftest.database`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text
from sqlalchemy.engine import make_url

from emulators.bank import LOOPBACK, Bank
from gateway.app.commands import serve as serve_command
from gateway.app.context import GatewayContext
from gateway.floor.store import set_bank_enabled
from gateway.tournament.rules.enums import EntryValidity, Stage
from gateway.tournament.services import add_player, register_for_heat, sell_entries, unit_of_work
from gateway.tournament.services.setup import create_tournament, schedule_heat
from gateway.tournament.settings import TournamentSettings
from protocols.mqtt.broker import EmbeddedBroker
from protocols.sas.carriers import serve_tcp
from storage.db import make_engine
from storage.journal import RunState

# Entries are sold on the wall clock moments before the heat: T5's 48 h entries, so a run at
# the venue's midnight still reaches its heat (a T7 same-day entry would not).
SETTINGS = TournamentSettings(validity=EntryValidity.HOURS_48)

pytestmark = [pytest.mark.filterwarnings("ignore::ResourceWarning"), pytest.mark.slow]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def _until(cond: Callable[[], Any], within: float, what: str) -> None:
    for _ in range(int(within / 0.1)):  # bounded
        if await cond() if asyncio.iscoroutinefunction(cond) else cond():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what}: not reached in {within} s")


async def _prepare(db: str, floor: Path, spool: Path, *, heat_in_s: float | None) -> None:
    ctx = await GatewayContext.open(database=db, floor_path=str(floor), spool=spool)
    try:
        await set_bank_enabled(ctx.sessions, "A", enabled=True, actor="tech")
        if heat_in_s is None:
            return
        now = datetime.now(UTC)
        async with unit_of_work(ctx.sessions) as s:
            t = await create_tournament(s, "Metrics Cup", SETTINGS, actor="test")
            heat = await schedule_heat(
                s, t.id, stage=Stage.QUALIFYING, starts_at=now + timedelta(seconds=heat_in_s),
                bank_name="A", duration_seconds=3, starting_credits=300, actor="test", now=now,
            )  # fmt: skip
            for i in range(2):
                p = await add_player(
                    s, id_number=f"90010{i}5800083", name=f"Player {i + 1}",
                    date_of_birth=date(1990, 1, 1 + i), actor="test", now=now,
                )  # fmt: skip
                await sell_entries(s, t.id, p.id, cashier="test", now=now)
            heat_id = heat.id
        for i in range(2):
            async with unit_of_work(ctx.sessions) as s:
                await register_for_heat(s, heat_id, f"90010{i}5800083", actor="test", now=now)
    finally:
        await ctx.close()


def _args(floor: Path, db: str, spool: Path, mqtt: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve_command.register(parser.add_subparsers())
    args = parser.parse_args(
        ["serve", "--floor", str(floor), "--database", db, "--spool", str(spool),
         "--tick", "0.2", "--mqtt", mqtt, "--site", f"t{uuid.uuid4().hex[:8]}",
         "--http", "127.0.0.1:0"]
    )  # fmt: skip
    serve_command.check_arguments(args)
    return args


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urlopen(url, timeout=10) as response:  # loopback only
            return int(response.status), response.read()
    except HTTPError as exc:
        return exc.code, exc.read()


async def _ready(base: str) -> tuple[int, dict[str, Any]]:
    status, body = await asyncio.to_thread(_get, f"{base}/readyz")
    return status, json.loads(body)


async def _metrics(base: str) -> Samples:
    status, body = await asyncio.to_thread(_get, f"{base}/metrics")
    assert status == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }


def _sample(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


@contextlib.asynccontextmanager
async def _serving(
    tmp_path: Path, database: str, bank: Bank, broker: EmbeddedBroker, heat_in_s: float | None
) -> AsyncIterator[tuple[serve_command.Serving, str]]:
    floor = tmp_path / "floor.toml"
    rows = ",\n".join(f'  {{ id = "{b.machine.machine_id}", endpoint = "{b.endpoint}" }}'
                      for b in bank.machines)  # fmt: skip
    floor.write_text(f'[[bank]]\nname = "A"\nmachines = [\n{rows},\n]\n')
    spool = tmp_path / "spool"
    await _prepare(database, floor, spool, heat_in_s=heat_in_s)
    ready: list[serve_command.Serving] = []
    stop = asyncio.Event()
    args = _args(floor, database, spool, broker.url)
    task = asyncio.create_task(serve_command.serve(args, stop, on_ready=ready.append))
    try:
        await _until(lambda: bool(ready) or task.done(), 30, "gateway serving")
        serving = ready[0]
        assert serving.http is not None
        yield serving, serving.http.url.removesuffix("/api/v1")
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0


@pytest.fixture
async def broker() -> AsyncIterator[EmbeddedBroker]:
    async with EmbeddedBroker() as b:
        yield b


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """The service manager's end of sd_notify: a datagram socket, watchdog every 0.1 s."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(30)  # bounded
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "200000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    try:
        yield sock
    finally:
        sock.close()


def _drain(sock: socket.socket) -> None:
    sock.setblocking(False)
    try:
        for _ in range(10_000):  # bounded
            sock.recv(4096)
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)
        sock.settimeout(30)


async def _notified(sock: socket.socket, key: str) -> list[str]:
    """Datagrams up to the first one that sets ``key`` (bounded)."""
    seen = []
    for _ in range(200):
        seen.append((await asyncio.to_thread(sock.recv, 4096)).decode())
        if any(line.startswith(f"{key}=") for line in seen[-1].splitlines()):
            return seen
    raise AssertionError(f"no {key}= in {seen}")


async def test_metrics_after_a_heat_name_every_machine(
    tmp_path: Path, database: str, broker: EmbeddedBroker, systemd: socket.socket
) -> None:
    async with Bank(2, name_prefix="A") as bank:
        bank.start_players(seed=3, pace=0.3)
        async with _serving(tmp_path, database, bank, broker, heat_in_s=2.0) as (serving, base):
            # systemd: READY=1 once the bank is recovered, then the watchdog.
            first = await _notified(systemd, "READY")
            assert first[-1].splitlines()[0] == "READY=1"
            assert all("WATCHDOG=1" not in d for d in first)  # never before READY
            assert (await _notified(systemd, "WATCHDOG"))[-1] == "WATCHDOG=1"
            scheduler = serving.scheduler
            await _until(lambda: bool(scheduler.finished), 40, "heat closed")
            assert scheduler.finished[0].state is RunState.CLOSED
            assert (await asyncio.to_thread(_get, f"{base}/healthz"))[0] == 200
            await asyncio.to_thread(_get, f"{base}/api/v1/players/1")  # 401: no token
            got = await _metrics(base)
            _drain(systemd)  # what the watchdog sent meanwhile (a full queue drops, never waits)
        assert "STOPPING=1" in (await _notified(systemd, "STOPPING"))[-1]

    for b in bank.machines:
        m = b.machine.machine_id
        assert _sample(got, "reelgate_machine_polls_total", bank="A", machine=m) > 0
        assert _sample(got, "reelgate_machine_replies_total", bank="A", machine=m) > 0
        for name in ("timeouts", "nacks", "retries", "failures"):
            assert _sample(got, f"reelgate_machine_{name}_total", bank="A", machine=m) >= 0
        assert _sample(got, "reelgate_machine_link_up", bank="A", machine=m) == 1
    assert _sample(got, "reelgate_heat_state", bank="A", state="closed") == 1
    assert _sample(got, "reelgate_heat_state", bank="A", state="running") == 0
    assert _sample(got, "reelgate_heats_finished_total", bank="A", state="closed") == 1
    assert _sample(got, "reelgate_heat_start_skew_seconds_count", bank="A") == 1
    assert _sample(got, "reelgate_heat_end_to_stored_seconds_count", bank="A") == 1
    assert _sample(got, "reelgate_heat_last_end_to_stored_seconds", bank="A") >= 0
    assert _sample(got, "reelgate_spool_depth") == 0
    assert _sample(got, "reelgate_database_read_ok") == 1
    assert _sample(got, "reelgate_bank_lease_held", bank="A") == 1
    holder = {labels for (name, labels) in got if name == "reelgate_bank_lease"}
    assert len(holder) == 1
    assert dict(next(iter(holder)))["holder"] == "serve"
    latency = "reelgate_api_request_duration_seconds_count"
    assert _sample(got, latency, method="GET", route="/healthz", status="200") == 1
    assert _sample(got, latency, method="GET", route="/api/v1/players/{ref}", status="401") == 1


async def _outage(database: str, tmp_path: Path) -> tuple[Any, Any]:
    """Take the database away and return the way to bring it back."""
    url = make_url(database)
    if url.get_backend_name() == "sqlite":
        file, aside = Path(url.database or ""), tmp_path / "moved-away.db"
        os.replace(file, aside)
        return lambda: asyncio.to_thread(os.replace, aside, file), None
    engine = make_engine(database, isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text("ALTER SCHEMA public RENAME TO public_away"))

    async def back() -> None:
        async with engine.connect() as conn:
            await conn.execute(text("ALTER SCHEMA public_away RENAME TO public"))
        await engine.dispose()

    return back, engine


def _failing(body: dict[str, Any]) -> set[str]:
    return {name for name, check in body["checks"].items() if not check["ok"]}


async def test_readyz_follows_the_database_the_broker_and_the_links(
    tmp_path: Path, database: str, broker: EmbeddedBroker
) -> None:
    async with (
        Bank(2, name_prefix="A") as bank,
        _serving(tmp_path, database, bank, broker, heat_in_s=None) as (serving, base),
    ):

        async def ready() -> bool:
            return (await _ready(base))[0] == 200

        await _until(ready, 30, "ready at the start")
        status, body = await _ready(base)
        assert set(body["checks"]) == {
            "database",
            "audit witness",
            "spool",
            "broker",
            "recovery",
            "bank:A",
        }

        back, _ = await _outage(database, tmp_path)  # the database goes away
        status, body = await _ready(base)
        assert status == 503
        assert body["status"] == "unavailable"
        assert _failing(body) == {"database"}
        assert (await asyncio.to_thread(_get, f"{base}/healthz"))[0] == 200  # still live
        await back()
        await _until(ready, 20, "ready with the database back")

        await broker.stop()  # the broker goes away
        feed = serving.mqtt
        assert feed is not None
        await _until(lambda: not feed.session.connected.is_set(), 20, "feed down")
        status, body = await _ready(base)
        assert status == 503
        assert _failing(body) == {"broker"}
        await broker.start()  # on the same port
        await _until(ready, 30, "ready with the broker back")

        egm = bank.machines[1]  # one machine's board goes away
        egm.server.close()
        await egm.server.wait_closed()
        assert egm.face.carrier is not None
        egm.face.carrier.close()

        async def links_down() -> bool:
            status, body = await _ready(base)
            return status == 503 and _failing(body) == {"bank:A"}

        await _until(links_down, 20, "bank A's links down")
        assert egm.machine.machine_id in (await _ready(base))[1]["checks"]["bank:A"]["detail"]
        egm.server = await serve_tcp(LOOPBACK, egm.port, egm.face.attach)
        await _until(ready, 30, "ready with the machine back")
