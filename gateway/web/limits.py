"""Request bodies limited before anything reads them: before the route parses them and
before it authenticates anyone.

Theory of operation
-------------------
:class:`BodyLimit` is plain ASGI middleware around the whole application.  A request
whose ``Content-Length`` is over its path's limit is answered 413 at once, its body never
read (the server drops the connection rather than read the rest).  A body sent without a
length (chunked) is counted as it streams: the read that would pass the limit raises
:class:`BodyTooLarge` (an HTTP 413, which FastAPI re-raises from its body parsing and
the error handlers answer), so at most one chunk past the limit is ever held.  A read
of the body that waits more than ``timeout`` seconds for the client's next chunk
answers 408: a slow client cannot hold a request open byte by byte.  Once the body is
complete the application's later reads (a stream waiting for the disconnect) pass
through untouched.

The limit is small by default (:data:`DEFAULT_MAX_BODY`: the desks send short JSON and
forms); a route that needs more gets it by its path prefix (``larger``), and no other.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_BODY = 64 * 1024
DEFAULT_BODY_TIMEOUT = 30.0


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body: at most {limit} bytes", headers={"Connection": "close"})


class BodyTooSlow(HTTPException):
    def __init__(self, timeout: float) -> None:
        super().__init__(
            408, f"body: not received within {timeout:g} s", headers={"Connection": "close"}
        )


class BodyLimit:
    """ASGI middleware: at most ``max_body`` bytes per request body (``larger``: more on
    the paths under these prefixes), each chunk within ``timeout`` seconds."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        timeout: float = DEFAULT_BODY_TIMEOUT,
        larger: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.timeout = timeout
        self.larger = dict(larger or {})

    def limit_of(self, path: str) -> int:
        for prefix, limit in self.larger.items():
            if path.startswith(prefix):
                return limit
        return self.max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope.get("path", ""))
        length = _content_length(scope)
        if length == -1:
            await _answer(send, 400, "content-length: not a number")
            return
        if length is not None and length > limit:
            await _answer(send, 413, f"body: at most {limit} bytes")
            return
        counted = 0
        complete = False

        async def limited() -> Message:
            nonlocal counted, complete
            if complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                raise BodyTooSlow(self.timeout) from None
            if message["type"] == "http.request":
                counted += len(message.get("body", b""))
                if counted > limit:
                    raise BodyTooLarge(limit)
                complete = not message.get("more_body", False)
            else:
                complete = True  # a disconnect: nothing more to read
            return message

        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, watched)
        except (BodyTooLarge, BodyTooSlow) as exc:  # raised where no handler answered it
            if started:
                raise
            await _answer(send, exc.status_code, str(exc.detail))


def _content_length(scope: Scope) -> int | None:
    """The declared length (None: none; -1: not a number)."""
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else -1
    return None


async def _answer(send: Send, status: int, error: str) -> None:
    body = json.dumps({"error": error, "rule": None}).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    start: dict[str, Any] = {"type": "http.response.start", "status": status, "headers": headers}
    await send(start)
    await send({"type": "http.response.body", "body": body})
