"""Who is asking: a bearer token (integrations, the CLI) or a browser session cookie.

A browser's writes must echo the session's CSRF token in ``X-CSRF-Token`` (the cookie is
``SameSite=Strict`` too; the token guards older browsers and same-site pages).  Token
requests need no CSRF token: a browser never attaches a bearer token by itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from hmac import compare_digest

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.accounts import service
from gateway.accounts.roles import Permission, allowed
from gateway.accounts.service import Principal
from gateway.web.api.errors import ApiError

COOKIE = "reelgate_session"
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


def api_of(request: Request) -> Api:
    found: Api = request.app.state.api
    return found


async def authenticate(request: Request, api: Api) -> Principal:
    header = request.headers.get("authorization", "")
    now = api.clock()
    async with api.sessions() as session:
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


def _unauthenticated(why: str) -> ApiError:
    return ApiError(401, f"authentication: {why}", headers={"WWW-Authenticate": "Bearer"})


def require(permission: Permission) -> Callable[[Request], Awaitable[Principal]]:
    async def dependency(request: Request) -> Principal:
        who = await authenticate(request, api_of(request))
        if not allowed(who.role, permission):
            raise ApiError(403, f"permission: role {who.role.value} may not {permission.value}")
        return who

    return dependency


def signed_in() -> Callable[[Request], Awaitable[Principal]]:
    async def dependency(request: Request) -> Principal:
        return await authenticate(request, api_of(request))

    return dependency


def who(permission: Permission) -> Principal:
    """``who: Principal = who(Permission.X)`` in a handler's signature."""
    principal: Principal = Depends(require(permission))
    return principal
