"""``--server URL``: the CLI's desk writes through a real API (``reelgate api`` in its own
process, uvicorn on loopback) with a token from ``$REELGATE_TOKEN`` or ``--token-file``.
The API records each change under the token's account; dual-control writes come back
pending; what the API does not cover, and a keyed time, are refused in one line."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from gateway.accounts import service
from gateway.app.cli import main
from storage import audit
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine

from ..gateway.training_db import PASSWORD, cheap_hashes
from ..keyed_engine import make_engine

ANN, BEN = "8001015009087", "8101015009086"
START_S = 30.0  # bound on the API's start-up and shut-down


async def _seed(url: str) -> dict[str, str]:
    """Bank A on the floor; accounts and a token each."""
    engine = make_engine(url)
    now = datetime.now(UTC)
    tokens: dict[str, str] = {}
    try:
        async with make_sessionmaker(engine)() as session, session.begin():
            session.add(FloorBank(name="A", enabled=True))
            await session.flush()
            for i in (1, 2):
                endpoint = f"tcp://127.0.0.1:{7000 + i}"
                session.add(
                    FloorMachine(machine_id=f"A-{i}", bank_name="A", position=i,
                                 endpoint=endpoint, updated_at=now)
                )  # fmt: skip
            accounts = (("thandi", "cashier"), ("lee", "desk"), ("dana", "director"),
                        ("sam", "supervisor"))  # fmt: skip
            for name, role in accounts:
                await service.add_user(session, name, role, PASSWORD, actor="tests", now=now)
                _, tokens[name] = await service.create_token(
                    session, name, role=None, expires_at=now + timedelta(days=1),
                    label="cli", actor="tests", now=now,
                )  # fmt: skip
    finally:
        await engine.dispose()
    return tokens


def _actors(url: str, action: str) -> list[str]:
    async def go() -> list[str]:
        engine = make_engine(url)
        try:
            async with make_sessionmaker(engine)() as s:
                query = select(audit.AuditEntry.actor).where(audit.AuditEntry.action == action)
                return list((await s.scalars(query)).all())
        finally:
            await engine.dispose()

    return asyncio.run(go())


@pytest.fixture
def api(database: str) -> Iterator[str]:
    """``reelgate api --http 127.0.0.1:0`` on the database; the URL it prints."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.app.cli", "api", "--http", "127.0.0.1:0",
         "--database", database],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    out = proc.stdout
    assert out is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # ends when the process closes its output
        for line in out:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    try:
        first = lines.get(timeout=START_S)
        assert first.startswith("api on http://127.0.0.1:"), first
        yield first.split()[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=START_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=START_S)


class Cli:
    def __init__(self, database: str, server: str, capsys: pytest.CaptureFixture[str]):
        self.database, self.server, self.capsys = database, server, capsys

    def direct(self, *argv: str) -> None:
        assert main([*argv, "--database", self.database]) == 0, self.capsys.readouterr().err
        self.capsys.readouterr()

    def ok(self, *argv: str) -> Any:
        self.capsys.readouterr()
        code = main([*argv, "--server", self.server, "--json"])
        out, err = self.capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    def fails(self, *argv: str) -> str:
        self.capsys.readouterr()
        assert main([*argv, "--server", self.server]) == 2
        err = self.capsys.readouterr().err
        assert err.count("\n") == 1
        return err.strip()


@pytest.fixture
def tokens(database: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    cheap_hashes(monkeypatch)
    return asyncio.run(_seed(database))


def test_desk_writes_go_through_the_api_under_the_token_account(
    database: str,
    tokens: dict[str, str],
    api: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database, api, capsys)
    # T5/T6 48-hour entries are valid for a heat tomorrow (venue-local), whatever the hour.
    venue_now = datetime.now(ZoneInfo("Africa/Johannesburg"))
    tomorrow = (venue_now + timedelta(days=1)).strftime("%Y-%m-%d 18:00")
    cli.direct("tournament", "create", "Ridge", "--validity", "48h")
    cli.direct("heat", "schedule", "-t", "Ridge", "--start", tomorrow, "--bank", "A")

    monkeypatch.delenv("REELGATE_TOKEN", raising=False)
    assert "no token" in cli.fails("players", "add", "--id-number", ANN, "--name", "Ann",
                                   "--dob", "1980-01-01")  # fmt: skip
    # The guest-relations desk adds the player, with the token in a file.
    token_file = tmp_path / "desk.token"
    token_file.write_text(tokens["lee"] + "\n")
    player = cli.ok("players", "add", "--id-number", ANN, "--name", "Ann", "--dob", "1980-01-01",
                    "--token-file", str(token_file))  # fmt: skip
    assert player["name"] == "Ann"
    # The cashier sells, from the environment's token.
    monkeypatch.setenv("REELGATE_TOKEN", tokens["thandi"])
    sale = cli.ok("entries", "sell", ANN, "-t", "Ridge")
    assert sale["seats"] == 1
    seat = cli.ok("heat", "register", "1", ANN)
    assert seat["seat"] == 1
    # A refund is dual control: it waits for a second account to approve it.
    spare = cli.ok("entries", "sell", ANN, "-t", "Ridge")["entries"][0]
    pending = cli.ok("entries", "refund", str(spare), "--rule", "23",
                     "--reason", "changed plans")  # fmt: skip
    assert pending["status"] == "pending"
    assert pending["requested_by"] == "thandi"
    # Recorded under the accounts of the tokens, not the host's.
    assert _actors(database, "player.add") == ["lee"]
    assert _actors(database, "purchase.sell") == ["thandi", "thandi"]
    assert _actors(database, "seat.register") == ["thandi"]
    assert _actors(database, "dual.request") == ["thandi"]
    # The API's own refusals come back as the CLI's one line.
    assert "permission: role cashier may not heat.manual-score" in cli.fails(
        "heat", "score", "1", "--credits", "10", "--reason", "x"
    )
    assert "rule 16" in cli.fails("heat", "register", "1", ANN)


def test_what_the_api_cannot_take_is_refused_in_one_line(
    database: str,
    tokens: dict[str, str],
    api: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database, api, capsys)
    monkeypatch.setenv("REELGATE_TOKEN", tokens["dana"])
    err = cli.fails("tournament", "create", "Autumn")
    assert "reelgate tournament create is not available through the API" in err
    assert "--now: the API records its own clock" in cli.fails(
        "entries", "sell", ANN, "-t", "Ridge", "--now", "2026-11-02 10:00"
    )
    assert "--second: over --server the second person approves" in cli.fails(
        "heat", "score", "1", "--credits", "10", "--reason", "x", "--second", "dana"
    )
    assert "--as: over --server the token's account is the first person" in cli.fails(
        "heat", "score", "1", "--credits", "10", "--reason", "x", "--as", "dana"
    )
    monkeypatch.setenv("REELGATE_TOKEN", "rg_not-a-token")
    assert "authentication: token unknown" in cli.fails("entries", "sell", ANN, "-t", "Ridge")
    assert _actors(database, "purchase.sell") == []


def test_an_unreachable_server_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:  # a closed loopback port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("REELGATE_TOKEN", "rg_x")
    code = main(["entries", "sell", ANN, "-t", "Ridge", "--server", f"http://127.0.0.1:{port}"])
    assert code == 2
    assert "cannot reach the API" in capsys.readouterr().err


def _snapshot(api: str) -> dict[str, Any]:
    import httpx

    base = api.removesuffix("/api/v1")
    response = httpx.get(f"{base}/signage/snapshot", timeout=5.0)
    assert response.status_code == 200
    retained: dict[str, Any] = response.json()["retained"]
    return retained


def test_a_manual_score_keyed_on_the_host_reaches_the_signs_of_the_api(
    database: str,
    tokens: dict[str, str],
    api: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 24: a dual-controlled manual score (T23) written by the CLI on the host —
    another process, straight to the database — reaches the API process's signs (its
    change reader follows the database), the new leader marked manual."""
    from ..gateway.training_db import make_training, type_passwords

    make_training(database)  # the script keys its times with --now
    cli = Cli(database, api, capsys)
    now = ("--now", "2026-11-02 17:00")
    cli.direct("tournament", "create", "Ridge", "--validity", "48h")
    cli.direct("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
               *now)  # fmt: skip
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        cli.direct("players", "add", "--id-number", id_number, "--name", name,
                   "--dob", "1980-01-01")  # fmt: skip
        cli.direct("entries", "sell", id_number, "-t", "Ridge", *now)
        cli.direct("heat", "register", "1", id_number, *now)
    cli.direct("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    type_passwords(monkeypatch, *[PASSWORD] * 4)  # sam keys, dana confirms: each types theirs
    for seat, credits in ((1, "1500"), (2, "1700")):
        cli.direct("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
                   "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip
    deadline = time.monotonic() + START_S  # generous on a loaded host; the reader polls 200 ms
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        board = _snapshot(api).get("tournament/1/leaderboard")
        rows = board["rows"] if board else []
        if len(rows) == 2:
            break
        time.sleep(0.1)
    assert [(r["player"], r["credits"], r["manual"]) for r in rows] == [
        ("Ben", 1700, True),
        ("Ann", 1500, True),
    ]


def test_desk_reads_over_the_api_print_what_the_host_prints(
    database: str,
    tokens: dict[str, str],
    api: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 31, item 3: a desk with no database reads the tournaments, a heat list, the
    players and the standings over ``--server`` — the same table the gateway host prints
    (the standings without the host's venue column); what only the host can read is one
    line; a token the API refuses is one line."""
    from ..gateway.training_db import make_training, type_passwords

    make_training(database)
    cli = Cli(database, api, capsys)
    now = ("--now", "2026-11-02 17:00")
    cli.direct("tournament", "create", "Ridge", "--validity", "48h")
    cli.direct("heat", "schedule", "-t", "Ridge", "--start", "2026-11-02 18:00", "--bank", "A",
               *now)  # fmt: skip
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        cli.direct("players", "add", "--id-number", id_number, "--name", name,
                   "--dob", "1980-01-01")  # fmt: skip
        cli.direct("entries", "sell", id_number, "-t", "Ridge", *now)
        cli.direct("heat", "register", "1", id_number, *now)
    cli.direct("heat", "begin", "1", "--present", "1,2", "--now", "2026-11-02 18:00")
    type_passwords(monkeypatch, *[PASSWORD] * 4)
    for seat, credits in ((1, "1500"), (2, "1700")):
        cli.direct("heat", "score", str(seat), "--credits", credits, "--reason", "link lost",
                   "--as", "sam", "--second", "dana", "--now", "2026-11-02 18:11")  # fmt: skip

    def printed(*argv: str, server: bool) -> str:
        capsys.readouterr()
        where = ["--server", api] if server else ["--database", database]
        assert main([*argv, *where]) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    monkeypatch.setenv("REELGATE_TOKEN", tokens["dana"])
    for argv in (["tournament", "list"], ["heat", "list", "-t", "Ridge"], ["players", "list"]):
        assert printed(*argv, server=True) == printed(*argv, server=False), argv
    host = cli_table(printed("tournament", "standings", "Ridge", server=False))
    desk = cli_table(printed("tournament", "standings", "Ridge", server=True))
    assert [row[:-1] for row in host] == desk  # every column but the host's venue
    assert [row[5] for row in desk[1:]] == ["Ben", "Ann"]  # the header, then by credits
    assert cli.ok("tournament", "list")[0]["name"] == "Ridge"

    assert "--as-of: read on the gateway host" in cli.fails(
        "tournament", "standings", "Ridge", "--as-of", "2026-11-02 19:00"
    )
    monkeypatch.setenv("REELGATE_TOKEN", "rg_not-a-token")
    assert "authentication: token unknown" in cli.fails("players", "list")


def cli_table(text: str) -> list[list[str]]:
    """A rich table's rows (header first) as lists of cells, frame characters dropped."""
    rows = []
    for line in text.splitlines():
        if "│" in line or "┃" in line:
            inner = line.replace("┃", "│").strip()
            rows.append([c.strip() for c in inner.removeprefix("│").removesuffix("│").split("│")])
    return rows
