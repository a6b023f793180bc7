"""``reelgate api --http HOST:PORT``: the desks' HTTP API alone, for a desk host that
talks to no machine; ``reelgate serve --http HOST:PORT`` runs the same API beside the
gateway.  Handlers and rules: :mod:`gateway.web.api`; who may do what: docs/roles.md."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from gateway.app.database import open_engine, require_audit_key
from gateway.app.options import add_database
from gateway.errors import OperatorError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "api", help="serve the desks' HTTP API (/api/v1) on a desk host"
    )
    add_database(parser)
    add_http_argument(parser, required=True)
    parser.set_defaults(handler=_api)


def add_http_argument(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        required=required,
        help="serve the HTTP API (/api/v1) on this address (port 0: a free one, printed)",
    )
    parser.add_argument(
        "--tls-cert", metavar="FILE", help="certificate for HTTPS (session cookies are Secure)"
    )
    parser.add_argument("--tls-key", metavar="FILE", help="private key for --tls-cert")


def http_address(spec: str) -> tuple[str, int]:
    host, _, port = spec.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OperatorError("--http must be HOST:PORT (port 0: a free one)")
    return host, int(port)


def _api(args: argparse.Namespace) -> int:
    http_address(args.http)
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    server = await start_http(args)
    assert server is not None
    try:
        await stop.wait()
    finally:
        await server.close()
    return 0


@dataclass
class HttpApi:
    server: Any  # uvicorn.Server
    task: asyncio.Task[None]
    engine: Any
    url: str

    async def close(self) -> None:
        self.server.should_exit = True
        await self.task
        await self.engine.dispose()


async def start_http(args: argparse.Namespace) -> HttpApi | None:
    """Start the API when ``--http`` was given (None otherwise); prints its URL."""
    spec = getattr(args, "http", None)
    if not spec:
        return None
    host, port = http_address(spec)
    import uvicorn  # loads slowly: only when serving HTTP

    from gateway.web.api import create_app
    from storage.db import make_sessionmaker

    tls = bool(getattr(args, "tls_cert", None))
    if tls != bool(getattr(args, "tls_key", None)):
        raise OperatorError("--tls-cert and --tls-key go together")
    _, engine = await open_engine(args.database)
    try:
        require_audit_key(engine, "the API")
    except OperatorError:
        await engine.dispose()
        raise
    app = create_app(make_sessionmaker(engine), secure_cookies=True if tls else None)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        ssl_certfile=args.tls_cert if tls else None,
        ssl_keyfile=args.tls_key if tls else None,
    )
    server = _server_class()(config)
    task = asyncio.create_task(server.serve())
    # uvicorn reports readiness only as a flag.
    while not server.started and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    if task.done():  # uvicorn exits (SystemExit) when it cannot listen
        await engine.dispose()
        with contextlib.suppress(BaseException):
            task.result()
        raise OperatorError(f"--http {spec}: cannot listen there")
    bound = server.servers[0].sockets[0].getsockname()[1]
    url = f"{'https' if tls else 'http'}://{host}:{bound}/api/v1"
    print(f"api on {url}", flush=True)
    return HttpApi(server, task, engine, url)


def _server_class() -> type:
    import uvicorn

    class Quiet(uvicorn.Server):
        """Leaves signals to the command (``serve`` stops the gateway first)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            yield

    return Quiet
