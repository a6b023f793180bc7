"""Serve the signage app with uvicorn in the running event loop: ``start_signage``."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import uvicorn

from gateway.web.fanout import FanoutFeed
from gateway.web.signage.app import PREFIX, Signage, create_signage_app
from gateway.web.signage.settings import SignageSettings

LOOPBACK = "127.0.0.1"
_START_POLL_S = 0.01
_START_LIMIT_S = 10.0


class _Quiet(uvicorn.Server):
    """Leaves signals to the command that runs it (it stops the gateway first)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@dataclass
class SignageServer:
    """A running signage server: ``url`` (the floor board) to open, ``close()`` to stop."""

    feed: FanoutFeed
    sign: Signage
    host: str
    port: int
    server: Any  # uvicorn.Server
    task: asyncio.Task[None]

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}{PREFIX}/"

    async def close(self) -> None:
        self.sign.streams.end_all()  # open streams would hold uvicorn's shutdown up
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def __aenter__(self) -> SignageServer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def start_signage(
    feed: FanoutFeed,
    host: str = LOOPBACK,
    port: int = 0,
    *,
    settings: SignageSettings | None = None,
    ping_interval: float = 15.0,
) -> SignageServer:
    """Serve the boards for ``feed`` on ``host:port`` (port 0: a free port, see ``.port``).
    Returns once listening; raises ``OSError`` when it cannot listen there."""
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} must be 0..65535")
    app, sign = create_signage_app(feed, settings, ping_interval=ping_interval)
    server, task, bound = await serve_app(app, host, port)
    return SignageServer(feed, sign, host, bound, server, task)


async def serve_app(app: Any, host: str, port: int) -> tuple[Any, asyncio.Task[None], int]:
    """Run an ASGI ``app`` with uvicorn in this event loop: (server, its task, the port).
    Stop it with ``server.should_exit = True`` and await the task."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # streams and boards would flood the log
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    server = _Quiet(config)
    # Our socket, bound here: a port in use is an OSError now, not uvicorn's SystemExit
    # inside a task.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"http-{host}:{port}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _START_LIMIT_S
    # uvicorn reports readiness only as a flag.
    while not server.started and not task.done() and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(_START_POLL_S)
    if not server.started:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}")
    return server, task, int(sock.getsockname()[1])
