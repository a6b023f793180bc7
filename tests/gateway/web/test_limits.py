"""Request bodies limited before they are read (issue 25.4): a declared length over the
limit is answered 413 without one read of the body, before any route parses it and
before authentication; a chunked body is cut at the limit; a stalled body is 408; a
larger limit only on the prefixes given."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.web.api import create_app
from gateway.web.limits import DEFAULT_MAX_BODY, BodyLimit
from storage.db import make_sessionmaker

Message = dict[str, Any]


@pytest.fixture
async def client(engine: AsyncEngine) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(make_sessionmaker(engine))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        yield c


async def _call(
    app: Any, path: str, headers: list[tuple[bytes, bytes]], chunks: list[bytes] | None
) -> tuple[list[Message], int]:
    """One POST straight through ASGI; returns what was sent and how many reads of the
    body the application made (``chunks`` None: a client that never sends its body)."""
    reads = 0
    sent: list[Message] = []
    queue = list(chunks or [])

    async def receive() -> Message:
        nonlocal reads
        reads += 1
        if chunks is None:
            await asyncio.Event().wait()  # stalls for ever
        body = queue.pop(0) if queue else b""
        return {"type": "http.request", "body": body, "more_body": bool(queue)}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8443),
    }  # fmt: skip
    await app(scope, receive, send)
    return sent, reads


def _status(sent: list[Message]) -> int:
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def _error(sent: list[Message]) -> str:
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return str(json.loads(body)["error"])


async def test_a_declared_oversized_body_is_refused_unread(engine: AsyncEngine) -> None:
    app = create_app(make_sessionmaker(engine))
    big = str(195 * 1024 * 1024).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", big)]
    # The sign-in (anonymous) and a route that needs a token: 413 both, no read.
    for path in ("/api/v1/login", "/api/v1/tournaments/Spring/entries", "/console/login"):
        sent, reads = await _call(app, path, headers, [b"{}"])
        assert _status(sent) == 413, path
        assert reads == 0, path
        assert _error(sent) == f"body: at most {DEFAULT_MAX_BODY} bytes"


async def test_a_chunked_body_is_cut_at_the_limit(engine: AsyncEngine) -> None:
    app = create_app(make_sessionmaker(engine))
    chunk = b"x" * 16 * 1024
    chunks = [b'{"name": "'] + [chunk] * 12_000  # ~195 MB if it were all read
    headers = [(b"content-type", b"application/json")]
    sent, reads = await _call(app, "/api/v1/login", headers, chunks)
    assert _status(sent) == 413
    assert reads <= DEFAULT_MAX_BODY // len(chunk) + 2  # stopped at the limit


async def test_an_unauthenticated_oversized_write_is_413_not_401(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/api/v1/tournaments/Spring/entries", content=b"x" * 70_000)
    assert r.status_code == 413
    small = await client.post("/api/v1/tournaments/Spring/entries", json={"player": "1"})
    assert small.status_code == 401  # within the limit: authentication as before


async def test_a_stalled_body_times_out() -> None:
    reached: list[bytes] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append((await receive())["body"])

    app = BodyLimit(inner, timeout=0.05)
    sent, _ = await _call(app, "/api/v1/login", [], None)
    assert _status(sent) == 408
    assert reached == []


async def test_larger_bodies_only_where_given() -> None:
    got: list[int] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        size = 0
        while True:
            message = await receive()
            size += len(message["body"])
            if not message["more_body"]:
                break
        got.append(size)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = BodyLimit(inner, max_body=1024, larger={"/api/v1/imports/": 10_000})
    body = [b"y" * 500] * 8
    sent, _ = await _call(app, "/api/v1/imports/register", [], body)
    assert _status(sent) == 204
    assert got == [4000]
    sent, _ = await _call(app, "/api/v1/login", [], body)
    assert _status(sent) == 413
    sent, reads = await _call(app, "/api/v1/login", [(b"content-length", b"nope")], body)
    assert (_status(sent), reads) == (400, 0)
