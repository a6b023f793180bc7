"""``reelgate tokens``, end to end (issue 24 no. 1): a token made by the command line is
used over ``--server`` for a write, stops working when it expires and when it is revoked.

The API runs in this process (uvicorn on a loopback socket, in a thread) so its clock
can be injected: expiry is tested by moving that clock, never by waiting.  The command
line's real time is injected too (``gateway.app.keyed.REAL_CLOCK``)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from gateway.accounts import service
from gateway.app import keyed
from gateway.app.cli import main
from gateway.app.database import open_engine
from storage import audit
from storage.db import make_sessionmaker

from ..gateway.training_db import PASSWORD, cheap_hashes
from ..keyed_engine import make_engine

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
START_S = 30.0  # bound on the API's start-up and shut-down


@dataclass
class Clock:
    at: datetime

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    found = Clock(T0)
    monkeypatch.setattr(keyed, "REAL_CLOCK", found)
    return found


@pytest.fixture
def accounts(database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cheap_hashes(monkeypatch)

    async def go() -> None:
        engine = make_engine(database)
        try:
            async with make_sessionmaker(engine)() as session, session.begin():
                await service.add_user(session, "lee", "desk", PASSWORD, actor="tests", now=T0)
        finally:
            await engine.dispose()

    asyncio.run(go())


@pytest.fixture
def api(database: str, clock: Clock) -> Iterator[str]:
    """The API on ``database`` with ``clock`` as its clock; its URL."""
    import uvicorn

    from gateway.web.api import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    holder: dict[str, Any] = {}
    ready = threading.Event()

    async def serve() -> None:
        _, engine = await open_engine(database)
        try:
            app = create_app(make_sessionmaker(engine), clock=clock)
            config = uvicorn.Config(app, log_level="warning", lifespan="off")
            server = uvicorn.Server(config)
            holder["server"] = server
            task = asyncio.create_task(server.serve(sockets=[sock]))
            # uvicorn reports readiness only as a flag (as gateway/app/commands/api.py)
            while not server.started and not task.done():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            ready.set()
            await task
        finally:
            await engine.dispose()

    thread = threading.Thread(target=lambda: asyncio.run(serve()), daemon=True)
    thread.start()
    assert ready.wait(START_S)
    try:
        yield f"http://127.0.0.1:{port}/api/v1"
    finally:
        holder["server"].should_exit = True
        thread.join(START_S)
        sock.close()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


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


def test_a_token_from_the_command_line_writes_over_the_server_until_it_expires_or_is_revoked(
    database: str,
    accounts: None,
    clock: Clock,
    api: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The command in docs/guide/technician.md: it used to end in a traceback.
    code, out, err = _run(capsys, "tokens", "create", "--user", "lee", "--expires", "30",
                          "--label", "desk 2", "--database", database, "--json")  # fmt: skip
    assert code == 0, err
    made = json.loads(out)
    assert made["role"] == "desk"
    assert made["token"].startswith("rg_")
    assert datetime.fromisoformat(made["expires_at"]) == T0 + timedelta(days=30)

    # The token writes over --server, recorded under its account.
    monkeypatch.setenv("REELGATE_TOKEN", made["token"])
    code, out, err = _run(capsys, "players", "add", "--id-number", "8001015009087",
                          "--name", "Ann", "--dob", "1980-01-01", "--server", api,
                          "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["name"] == "Ann"
    assert _actors(database, "player.add") == ["lee"]

    # A day before its expiry it still works; at its expiry it is refused.
    clock.at = T0 + timedelta(days=29)
    code, _, err = _run(capsys, "players", "add", "--id-number", "8101015009086",
                        "--name", "Ben", "--dob", "1981-01-01", "--server", api)  # fmt: skip
    assert code == 0, err
    clock.at = T0 + timedelta(days=30)
    code, _, err = _run(capsys, "players", "add", "--id-number", "8201015009085",
                        "--name", "Cy", "--dob", "1982-01-01", "--server", api)  # fmt: skip
    assert code == 2
    assert "authentication: token unknown, expired or revoked" in err
    assert err.count("\n") == 1

    # A second token, revoked by the command line: refused at once.
    clock.at = T0
    code, out, err = _run(capsys, "tokens", "create", "--user", "lee", "--expires",
                          "2026-11-09 08:00", "--database", database, "--json")  # fmt: skip
    assert code == 0, err
    second = json.loads(out)
    monkeypatch.setenv("REELGATE_TOKEN", second["token"])
    code, _, err = _run(capsys, "players", "add", "--id-number", "8201015009085",
                        "--name", "Cy", "--dob", "1982-01-01", "--server", api)  # fmt: skip
    assert code == 0, err
    code, _, err = _run(capsys, "tokens", "revoke", str(second["id"]), "--database", database)
    assert code == 0, err
    code, _, err = _run(capsys, "players", "add", "--id-number", "8301015009084",
                        "--name", "Dee", "--dob", "1983-01-01", "--server", api)  # fmt: skip
    assert code == 2
    assert "token unknown, expired or revoked" in err

    # The list shows both, never a secret; every change is in the audit log.
    code, out, err = _run(capsys, "tokens", "list", "--database", database, "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert [(t["id"], t["revoked"]) for t in listed] == [(made["id"], False), (second["id"], True)]
    assert made["token"] not in out
    assert second["token"] not in out
    assert _actors(database, "player.add") == ["lee", "lee", "lee"]
    assert len(_actors(database, "token.create")) == 2
    assert len(_actors(database, "token.revoke")) == 1


@pytest.mark.parametrize(
    ("expires", "why"),
    [
        ("0", "--expires: 1 to 366 days"),
        ("400", "--expires: 1 to 366 days"),
        ("next week", "--expires: 'next week' is not an ISO 8601 time"),
        ("2026-11-01 08:00", "--expires: the token would already have expired"),
    ],
)
def test_a_bad_expiry_is_one_line_and_makes_no_token(
    database: str,
    accounts: None,
    clock: Clock,
    capsys: pytest.CaptureFixture[str],
    expires: str,
    why: str,
) -> None:
    code, _, err = _run(capsys, "tokens", "create", "--user", "lee", "--expires", expires,
                        "--database", database)  # fmt: skip
    assert code == 2
    assert why in err
    assert err.count("\n") == 1
    assert _actors(database, "token.create") == []


def test_a_token_for_an_unknown_account_is_refused(
    database: str, accounts: None, clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "tokens", "create", "--user", "nobody", "--expires", "30",
                        "--database", database)  # fmt: skip
    assert code == 2
    assert err.count("\n") == 1
    assert _actors(database, "token.create") == []
