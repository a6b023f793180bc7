"""``reelgate api --http HOST:PORT``: the desks' HTTP API alone, for a desk host that
talks to no machine; ``reelgate serve --http HOST:PORT`` runs the same API beside the
gateway.  Handlers and rules: :mod:`gateway.web.api`; who may do what: docs/roles.md.

The address and TLS come from the flags, else the configuration's ``[http]`` section
(``listen``, ``tls_cert``, ``tls_key``).  With a certificate and key the API is served
over HTTPS only and the session cookie is ``Secure``.  Plain HTTP is served on loopback
only, unless ``--insecure-http`` (``[http] insecure_http``) says so in so many words.
Bodies, slow clients and connections are limited by ``[http]`` ``max_body``,
``body_timeout``, ``keep_alive`` and ``max_connections``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import signal
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.app.configfile import fill_unset, settings_of
from gateway.app.database import close_engine, open_engine, require_audit_key, watch_chain
from gateway.app.options import add_database
from gateway.errors import OperatorError

if TYPE_CHECKING:
    from gateway.app.monitoring.ops import ProcessOps
    from gateway.web.fanout import FanoutFeed


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "api", help="serve the desks' HTTP API (/api/v1) on a desk host"
    )
    add_database(parser)
    add_http_argument(parser)
    parser.set_defaults(handler=_api)


def add_http_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve the HTTP API (/api/v1) on this address (port 0: a free one, printed; "
        "default [http] listen)",
    )
    parser.add_argument(
        "--tls-cert", metavar="FILE", help="certificate for HTTPS (session cookies are Secure)"
    )
    parser.add_argument("--tls-key", metavar="FILE", help="private key for --tls-cert")
    parser.add_argument(
        "--insecure-http",
        action="store_true",
        default=None,
        help="serve plain HTTP on an address other than loopback (passwords and session "
        "cookies then cross the network readable; default [http] insecure_http, off)",
    )


def http_address(spec: str) -> tuple[str, int]:
    host, _, port = spec.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OperatorError("--http must be HOST:PORT (port 0: a free one)")
    return host, int(port)


def configured_http(args: argparse.Namespace) -> None:
    """``--http``, ``--tls-cert``/``--tls-key`` (a pair on the command line wins as a
    pair) and ``--database`` from the configuration when not given."""
    s = settings_of(args)
    if not getattr(args, "tls_cert", None) and not getattr(args, "tls_key", None):
        args.tls_cert = str(s.http.tls_cert) if s.http.tls_cert else None
        args.tls_key = str(s.http.tls_key) if s.http.tls_key else None
    fill_unset(
        args,
        {"http": s.http.listen, "database": s.database.url, "insecure_http": s.http.insecure_http},
    )


def _api(args: argparse.Namespace) -> int:
    configured_http(args)
    if not args.http:
        raise OperatorError("--http: give HOST:PORT (or set [http] listen)")
    check_transport(args, check_tls(args))
    from gateway.app.logs import configure_logging

    configure_logging(settings_of(args))
    return asyncio.run(_run(args))


def check_tls(args: argparse.Namespace) -> bool:
    """Whether the API serves HTTPS; the certificate and key are loaded once here, so a
    wrong file is one line naming it rather than a listener that never comes up."""
    cert: str | None = getattr(args, "tls_cert", None)
    key: str | None = getattr(args, "tls_key", None)
    if not cert or not key:
        if cert or key:
            raise OperatorError("--tls-cert and --tls-key go together")
        return False
    import ssl

    for option, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not Path(path).is_file():
            raise OperatorError(f"{option} {path}: no such file")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise OperatorError(f"--tls-cert {cert} / --tls-key {key}: cannot load: {exc}") from None
    return True


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost`` (an address only this
    machine reaches).  A name is not resolved: any other name counts as the network."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_transport(args: argparse.Namespace, tls: bool) -> None:
    """Refuse plain HTTP on an address other than loopback, unless ``--insecure-http``
    (or ``[http] insecure_http = true``) says so: passwords and session cookies would
    cross the venue's network readable by anyone on it."""
    host, _ = http_address(args.http)
    if tls or is_loopback(host) or getattr(args, "insecure_http", None):
        return
    raise OperatorError(
        f"--http {args.http}: plain HTTP off loopback; give --tls-cert/--tls-key "
        "(docs/operations.md) or --insecure-http"
    )


def check_http(args: argparse.Namespace) -> None:
    """With ``--http``: its address, TLS files and transport, checked up front."""
    if getattr(args, "http", None):
        check_transport(args, check_tls(args))


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
    own_ops: ProcessOps | None = None  # made here (``reelgate api``), closed here
    app: Any = None  # the FastAPI application (the console is attached to it)
    streams: tuple[Any, ...] = ()  # the open feed streams (gateway.web.signage.stream)
    changes: Any = None  # its own change reader (``reelgate api``: gateway.app.changes)

    async def close(self) -> None:
        for streams in self.streams:
            streams.end_all()  # an open stream would hold uvicorn's shutdown up
        self.server.should_exit = True
        await self.task
        if self.changes is not None:
            await self.changes.close()
        await close_engine(self.engine)  # the witness settled, a last checkpoint
        if self.own_ops is not None:
            await self.own_ops.close()


async def start_http(
    args: argparse.Namespace,
    ops: ProcessOps | None = None,
    *,
    feed: FanoutFeed | None = None,
    settings: Any = None,
) -> HttpApi | None:
    """Start the API when ``--http`` was given (None otherwise); prints its URL.  Beside
    it ``/metrics``, ``/healthz`` and ``/readyz`` serve ``ops`` (``serve`` passes the
    gateway's; ``reelgate api`` gets one of its own, for its database).  With the
    gateway's live ``feed``, the signage boards (``/signage/``, branded by ``settings``)
    and the feed stream for standalone signs (``/api/v1/feed/events``) come with it.
    Without one (``reelgate api``) it makes its own, fed by a change reader from the
    database alone (issue 24): the console, the boards and the relay show every stored
    change whoever made it."""
    spec = getattr(args, "http", None)
    if not spec:
        return None
    host, port = http_address(spec)
    import uvicorn  # loads slowly: only when serving HTTP

    from gateway.web.api import create_app
    from storage.db import make_sessionmaker

    tls = check_tls(args)
    check_transport(args, tls)
    limits = settings_of(args).http
    from gateway.app.monitoring.ops import ProcessOps

    db_url, engine = await open_engine(args.database)
    try:
        require_audit_key(engine, "the API")
    except OperatorError:
        await engine.dispose()
        raise
    watch_chain(engine)  # a checkpoint within a minute of any write, and at shutdown
    own_ops = None
    if ops is None:
        ops = own_ops = ProcessOps()
        ops.start()
    ops.use_database(db_url, engine)
    app = create_app(
        make_sessionmaker(engine),
        secure_cookies=True if tls else None,
        ops=ops,
        max_body=limits.max_body,
        body_timeout=limits.body_timeout,
    )
    changes = None
    if feed is None:
        from gateway.app.changes import start_changes
        from gateway.web import console
        from gateway.web.fanout import FanoutFeed

        feed = FanoutFeed()
        try:
            changes = await start_changes(args.database, feed)
        except BaseException:
            await engine.dispose()
            if own_ops is not None:
                await own_ops.close()
            raise
        console.attach(app, feed=feed)
    from gateway.web.signage import mount_signage
    from gateway.web.signage.relay import mount_relay

    streams = (mount_signage(app, feed, settings).streams, mount_relay(app, feed))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        ssl_certfile=args.tls_cert if tls else None,
        ssl_keyfile=args.tls_key if tls else None,
        # Against slow and greedy clients: idle connections closed, headers bounded (h11),
        # connections capped (503 beyond); bodies: gateway.web.limits.
        timeout_keep_alive=limits.keep_alive,
        h11_max_incomplete_event_size=16 * 1024,
        limit_concurrency=limits.max_connections,
    )
    server = _server_class()(config)
    task = asyncio.create_task(server.serve())
    # uvicorn reports readiness only as a flag.
    while not server.started and not task.done():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    if task.done():  # uvicorn exits (SystemExit) when it cannot listen
        if changes is not None:
            await changes.close()
        await engine.dispose()
        if own_ops is not None:
            await own_ops.close()
        with contextlib.suppress(BaseException):
            task.result()
        raise OperatorError(f"--http {spec}: cannot listen there")
    bound = server.servers[0].sockets[0].getsockname()[1]
    url = f"{'https' if tls else 'http'}://{host}:{bound}/api/v1"
    print(f"api on {url}", flush=True)
    print(f"console on {url.removesuffix('/api/v1')}/console/", flush=True)
    return HttpApi(server, task, engine, url, own_ops, app, streams, changes)


def _server_class() -> type:
    import uvicorn

    class Quiet(uvicorn.Server):
        """Leaves signals to the command (``serve`` stops the gateway first)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            yield

    return Quiet
