"""Who is asking: a bearer token (integrations, the CLI) or a browser session cookie.

A browser's writes must echo the session's CSRF token in ``X-CSRF-Token`` (the cookie is
``SameSite=Strict`` too; the token guards older browsers and same-site pages).  Token
requests need no CSRF token: a browser never attaches a bearer token by itself.

One transaction per request: the permission dependency opens it, authenticates inside
it and hands it to the handler on the :class:`Caller`; it commits after the handler has
built its response and before the response is sent (a dependency of ``function``
scope), and rolls back on any error.  A GET, HEAD or OPTIONS request only reads, so its
transaction is read-only (:data:`storage.db.READ_ONLY`: on SQLite it takes no lock).
SQLite has one writer at a time, so on SQLite a write request first waits its turn on
an in-process lock (:meth:`Api.writer`), in arrival order, instead of in SQLite's busy
handler, which polls with sleeps of up to 100 ms and lets late arrivals overtake: the
same one-at-a-time, without multi-second tails.  On PostgreSQL at most
:data:`PG_WRITERS` write requests run at once (the others wait in arrival order): every
write ends by locking the audit chain's head for three round trips, and each round trip
waits for the event loop to come back to it, behind every other request in flight; with
20 in flight the head was held p50 30-40 ms and the writes queued on it (issue 31,
item 4).  Reads do not wait for writers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from hmac import compare_digest

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from structlog.contextvars import bound_contextvars

from gateway.accounts import service
from gateway.accounts.roles import Permission, allowed
from gateway.accounts.service import Principal
from gateway.accounts.signin import Gate
from gateway.web.api.errors import ApiError
from storage.database_mark import is_training
from storage.db import READ_ONLY

COOKIE = "reelgate_session"
# Write requests at once on PostgreSQL (see the module's docstring; bench/api.py --writers).
PG_WRITERS = 4
CSRF_HEADER = "x-csrf-token"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Api:
    """What every handler needs: the database, the clock, whether cookies are Secure."""

    sessions: async_sessionmaker[AsyncSession]
    clock: Callable[[], datetime] = field(default=_utc_now)
    secure_cookies: bool | None = None  # None: Secure when the request came over TLS
    # A training database (storage.database_mark): read in the first request's
    # transaction and kept — the mark never changes once written.
    training: bool | None = None
    gate: Gate = field(default_factory=Gate)  # sign-in backoffs per source and unknown name
    pg_writers: int = PG_WRITERS  # 0: no limit (to compare)
    _writers: dict[int, asyncio.Semaphore] = field(default_factory=dict, repr=False)

    def writer(self) -> AbstractAsyncContextManager[object]:
        """The turn of a write request, queued in arrival order here: SQLite's single
        writer, or one of PostgreSQL's :attr:`pg_writers`."""
        bind = self.sessions.kw.get("bind")
        if bind is None:
            return nullcontext()
        turns = 1 if bind.dialect.name == "sqlite" else self.pg_writers
        if turns < 1:
            return nullcontext()
        # A semaphore serves one event loop (tests run each call on a loop of its own).
        loop = id(asyncio.get_running_loop())
        return self._writers.setdefault(loop, asyncio.Semaphore(turns))


async def learn_training(api: Api, session: AsyncSession) -> bool:
    """Whether the database is a training one, read in ``session``'s transaction the first
    time and kept (the mark never changes once written): the API's header, the console's
    banner."""
    if api.training is None:
        api.training = await is_training(session)
    return api.training


def api_of(request: Request) -> Api:
    found: Api = request.app.state.api
    return found


def database_url(request: Request) -> str | None:
    """The URL this serving process's database was opened with (password kept: the key
    files are found from it, as the CLI finds them), or None when it has no bind."""
    bind = api_of(request).sessions.kw.get("bind")
    return None if bind is None else str(bind.url.render_as_string(hide_password=False))


@dataclass(frozen=True)
class Caller(Principal):
    """The authenticated account and the request's one transaction (see the module)."""

    session: AsyncSession = field(compare=False, repr=False)


async def authenticate(request: Request, session: AsyncSession, now: datetime) -> Principal:
    """Who sent ``request``, read in the caller's transaction (it writes nothing)."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret or len(secret) > 200:
            raise _unauthenticated("authorization: use 'Bearer TOKEN'")
        who = await service.principal_for_token(session, secret.strip(), now)
        if who is None:
            raise _unauthenticated("token unknown, expired or revoked")
        return who
    cookie = request.cookies.get(COOKIE)
    if not cookie or len(cookie) > 200:
        raise _unauthenticated("sign in or send a bearer token")
    found = await service.principal_for_session(session, cookie, now)
    if found is None:
        raise _unauthenticated("session expired; sign in again")
    who, csrf = found
    if request.method not in _SAFE and not compare_digest(
        request.headers.get(CSRF_HEADER, ""), csrf
    ):
        raise ApiError(403, "csrf: send the session's X-CSRF-Token with every change")
    return who


def source_of(request: Request) -> str:
    """The peer address a sign-in came from (the backoff's and the audit's source)."""
    return request.client.host if request.client is not None else "unknown"


def cross_site(request: Request) -> str | None:
    """Why a sign-in posted from another site is refused, or None.

    A browser names the page's origin in ``Origin`` on every POST (and marks a
    cross-site request ``Sec-Fetch-Site: cross-site``); it must be this server's own
    (scheme and host as the browser addressed it).  A client that is no browser sends
    neither and is not a cross-site request."""
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin is not None and origin.lower() != own.lower():
        return f"origin: a sign-in from {origin[:100]} is refused (this server is {own})"
    if request.headers.get("sec-fetch-site", "") == "cross-site":
        return "origin: a sign-in from another site is refused"
    referer = request.headers.get("referer")
    if (
        origin is None
        and referer is not None
        and not (referer.lower() == own.lower() or referer.lower().startswith(own.lower() + "/"))
    ):
        return "origin: a sign-in from another site is refused"
    return None


def _unauthenticated(why: str) -> ApiError:
    return ApiError(401, f"authentication: {why}", headers={"WWW-Authenticate": "Bearer"})


def require(permission: Permission | None) -> Callable[[Request], AsyncIterator[Caller]]:
    """The request's transaction and its authenticated caller, who must hold
    ``permission`` (None: any account that signed in)."""

    async def dependency(request: Request) -> AsyncIterator[Caller]:
        api = api_of(request)
        reads = request.method in _SAFE
        turn = nullcontext() if reads else api.writer()
        async with turn, api.sessions() as session, session.begin():
            if reads:
                await session.connection(execution_options=READ_ONLY)
            await learn_training(api, session)
            who = await authenticate(request, session, api.clock())
            if permission is not None and not allowed(who.role, permission):
                raise ApiError(403, f"permission: role {who.role.value} may not {permission.value}")
            with bound_contextvars(account=who.name):  # every log line of the request
                yield Caller(who.user_id, who.name, who.role, session)

    return dependency


def signed_in() -> Callable[[Request], AsyncIterator[Caller]]:
    return require(None)


def who(permission: Permission) -> Caller:
    """``me: Caller = who(Permission.X)`` in a handler's signature."""
    caller: Caller = Depends(require(permission), scope="function")
    return caller
