"""``reelgate signage --source api``: a sign fed by the gateway's API, over real sockets.

The "gateway" here is the API app with the feed stream mounted (as ``serve --http``
does), on 127.0.0.1; the sign follows it with a bearer token and must keep its last
state, marked disconnected, while the gateway is away, then pick up again."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy.ext.asyncio import AsyncEngine

import storage.accounts
from gateway.accounts import service
from gateway.app.cli import main
from gateway.app.commands.signage import run_signage
from gateway.web import FanoutFeed
from gateway.web.api import create_app
from gateway.web.signage import api_source
from gateway.web.signage.api_source import ApiFeedSource, ApiUnavailable, decode_frame
from gateway.web.signage.relay import mount_relay
from gateway.web.signage.server import serve_app
from storage.db import make_sessionmaker

NOW = datetime.now(UTC)
CLOSED_PORT = 1  # a closed loopback port


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )
    monkeypatch.setattr(api_source, "FIRST_RETRY_S", 0.1)
    monkeypatch.setattr(api_source, "MAX_RETRY_S", 0.2)


@dataclass
class Gateway:
    feed: FanoutFeed
    engine: AsyncEngine
    token: str
    port: int = 0
    stop: Callable[[], Any] | None = None

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    async def start(self) -> None:
        app = create_app(make_sessionmaker(self.engine))
        streams = mount_relay(app, self.feed, ping_interval=0.5)
        server, task, self.port = await serve_app(app, "127.0.0.1", self.port)

        async def stop() -> None:
            streams.end_all()
            server.should_exit = True
            await task

        self.stop = stop

    async def close(self) -> None:
        if self.stop is not None:
            await self.stop()
            self.stop = None


@pytest.fixture
async def gateway(engine: AsyncEngine) -> AsyncIterator[Gateway]:
    sessions = make_sessionmaker(engine)
    async with sessions() as s, s.begin():
        await service.add_user(s, "sign", "auditor", "a long password", actor="t", now=NOW)
        _, secret = await service.create_token(
            s, "sign", role=None, expires_at=NOW + timedelta(days=1), label="sign",
            actor="t", now=NOW,
        )  # fmt: skip
    gw = Gateway(FanoutFeed(), engine, secret)
    await gw.start()
    try:
        yield gw
    finally:
        await gw.close()


async def until(check: Callable[[], bool], limit: float = 10.0) -> None:
    async with asyncio.timeout(limit):
        while not check():  # noqa: ASYNC110  (bounded by the timeout)
            await asyncio.sleep(0.02)


async def test_the_sign_keeps_its_last_state_while_the_gateway_restarts(gateway: Gateway) -> None:
    await gateway.feed.publish("current", {"heat": "4", "bank": "A"}, retain=True)
    sign = FanoutFeed()
    source = ApiFeedSource(sign, gateway.api, gateway.token)
    await source.start(wait=True)
    try:
        await until(lambda: sign.retained().get("current") == {"heat": "4", "bank": "A"})
        assert sign.upstream == "connected"
        await gateway.feed.publish("heat/4/seat/A01", {"credits": 900}, retain=True)
        await until(lambda: "heat/4/seat/A01" in sign.retained())

        await gateway.close()  # the gateway restarts
        await until(lambda: sign.upstream == "disconnected")
        assert sign.retained()["heat/4/seat/A01"] == {"credits": 900}  # last state kept

        gateway.feed = FanoutFeed()  # a restarted gateway starts empty
        await gateway.start()  # same port
        await until(lambda: sign.upstream == "connected")
        assert sign.retained()["current"] == {"heat": "4", "bank": "A"}  # still shown
        await gateway.feed.publish("heat/4/seat/A01", {"credits": 1250}, retain=True)
        await until(lambda: sign.retained()["heat/4/seat/A01"] == {"credits": 1250})
        assert source.connects == 2
    finally:
        await source.close()


async def test_a_refused_token_fails_wait_in_one_line(gateway: Gateway) -> None:
    source = ApiFeedSource(FanoutFeed(), gateway.api, "not-a-token")
    with pytest.raises(ApiUnavailable, match="HTTP 401"):
        await source.start(wait=True)


async def test_no_gateway_fails_wait_and_the_command_says_so() -> None:
    source = ApiFeedSource(FanoutFeed(), f"http://127.0.0.1:{CLOSED_PORT}/api/v1", "t0ken")
    with pytest.raises(Exception, match="cannot connect") as caught:
        await run_signage(source.feed, source, "127.0.0.1", 0, wait=True)
    assert type(caught.value).__name__ == "OperatorError"


async def test_the_command_serves_boards_from_the_api(gateway: Gateway, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(gateway.token + "\n")
    sign = FanoutFeed()
    source = ApiFeedSource(sign, gateway.api, api_source.read_token(str(token)))
    stop = asyncio.Event()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        task = asyncio.create_task(run_signage(sign, source, "127.0.0.1", 0, stop=stop))
        await until(lambda: "signage on http://127.0.0.1:" in out.getvalue())
    assert "/api/v1/feed/events" in out.getvalue()
    await gateway.feed.publish("super9/jackpot", {"jackpot_cents": 500_000}, retain=True)
    await until(lambda: sign.retained() == {"super9/jackpot": {"jackpot_cents": 500_000}})
    stop.set()
    assert await asyncio.wait_for(task, 10) == 0


def test_bad_frames_are_refused_before_the_feed() -> None:
    sign = FanoutFeed()
    source = ApiFeedSource(sign, "http://127.0.0.1:1/api/v1", "t")
    for bad in ("not json", "[1]", '{"topic": 3}', '{"topic": "a/b", "payload": [1]}',
                '{"topic": "a//b", "payload": {}}', "[" * 5000):  # fmt: skip
        source.handle(bad)
    assert source.dropped == 6
    assert sign.retained() == {}
    source.handle('{"seq": 1, "topic": "current", "retain": true, "payload": {"heat": "1"}}')
    source.handle('{"seq": 2, "topic": "current", "retain": true, "payload": null}')
    assert sign.retained() == {}  # set, then cleared
    assert decode_frame('{"topic": "x", "payload": null}')["payload"] is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--source", "api"], "--api"),
        (["--source", "api", "--api", "http://127.0.0.1:1/api/v1"], "--token-file"),
        (["--source", "api", "--api", "ftp://x", "--token-file", "/dev/null"], "--token-file"),
        (["--colour", "accent=red"], "colour"),
        (["--venue-tz", "Mars/Olympus"], "time zone"),
        (["--logo", "/nonexistent.png"], "logo"),
        (["--page-seconds", "0.5"], "page seconds"),
    ],
)
def test_operator_mistakes_are_one_line_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["signage", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reelgate: error: ")
    assert message in err
    assert "\n" not in err


def test_a_bad_api_url_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = tmp_path / "token"
    token.write_text("secret")
    argv = ["signage", "--source", "api", "--api", "ftp://x", "--token-file", str(token)]
    assert main(argv) == 2
    assert "--api" in capsys.readouterr().err
