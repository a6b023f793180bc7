"""Who is looking at a console page: the console's session cookie, the role's permission
(:mod:`gateway.accounts.roles`), and the CSRF token of every form.

The console signs in with the same accounts and sessions as the API
(:func:`gateway.accounts.signin.sign_in`), under a cookie of its own scoped to
``/console`` (``SameSite=Strict``, HttpOnly).  Pages are plain forms: every POST carries
the session's CSRF token in a hidden ``csrf`` field.  As in the API, one transaction per
request: the dependency opens it, authenticates inside it, and commits after the handler
(a GET only reads).  A page the role may not open answers 403 with a page saying so; a
request without a session is sent to the sign-in page.  The first transaction also
reads whether the database is a training one (``Api.training``, as the API's header
does): every page then carries the TRAINING banner (``base.html``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from hmac import compare_digest
from typing import Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import service
from gateway.accounts.roles import Permission, allowed
from gateway.accounts.service import Principal
from gateway.web.api.auth import Api, Caller, api_of, learn_training
from storage.db import READ_ONLY

COOKIE = "reelgate_console"
COOKIE_PATH = "/console"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


class SignInNeeded(Exception):
    """No live console session: the browser goes to the sign-in page."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class PageForbidden(Exception):
    """The account may not open this page (or the form's CSRF token is wrong)."""

    def __init__(self, why: str, who: Principal | None = None, csrf: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.who = who
        self.csrf = csrf


@dataclass(frozen=True)
class Viewer(Caller):
    """The signed-in account, the request's transaction, its CSRF token and form."""

    csrf: str = ""
    form: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def can(self, permission: Permission) -> bool:
        return allowed(self.role, permission)

    def field(self, name: str) -> str:
        """A form field as text, trimmed ('' when absent)."""
        value = self.form.get(name, "")
        return value.strip() if isinstance(value, str) else ""


async def _principal(request: Request, session: AsyncSession) -> tuple[Principal, str]:
    cookie = request.cookies.get(COOKIE)
    if not cookie or len(cookie) > 200:
        raise SignInNeeded(request.url.path)
    found = await service.principal_for_session(session, cookie, api_of(request).clock())
    if found is None:
        raise SignInNeeded(request.url.path)
    return found


async def identify(request: Request, permission: Permission | None) -> Principal:
    """Authenticate in a short read-only transaction of its own (a live stream must not
    hold one open for its lifetime)."""
    api = api_of(request)
    async with api.sessions() as session, session.begin():
        await session.connection(execution_options=READ_ONLY)
        await learn_training(api, session)
        who, _ = await _principal(request, session)
    if permission is not None and not allowed(who.role, permission):
        raise PageForbidden(f"role {who.role.value} may not {permission.value}", who)
    return who


def page(
    permission: Permission | None, *, alone: bool = False
) -> Callable[[Request], AsyncIterator[Viewer]]:
    """The request's transaction and the signed-in viewer, who must hold ``permission``
    (None: any account).

    ``alone``: the action opens transactions of its own (a bank enable, through the
    process driving the machines), so the request holds none while it runs: the viewer
    is checked in a read-only transaction, and the session handed on has none open
    (:func:`read_fresh` before rendering reads what the action wrote)."""

    async def dependency(request: Request) -> AsyncIterator[Viewer]:
        api = api_of(request)
        reads = request.method in _SAFE
        form: Mapping[str, Any] = {}
        if not reads:
            form = await request.form(max_files=0, max_fields=200)
        if alone:
            async with api.sessions() as session:
                async with session.begin():
                    await session.connection(execution_options=READ_ONLY)
                    await learn_training(api, session)
                    who, csrf = await _principal(request, session)
                _check(who, csrf, form, permission, reads)
                yield Viewer(who.user_id, who.name, who.role, session, csrf=csrf, form=form)
            return
        turn = nullcontext() if reads else api.writer()
        async with turn, api.sessions() as session, session.begin():
            if reads:
                await session.connection(execution_options=READ_ONLY)
            await learn_training(api, session)
            who, csrf = await _principal(request, session)
            _check(who, csrf, form, permission, reads)
            yield Viewer(who.user_id, who.name, who.role, session, csrf=csrf, form=form)

    return dependency


def _check(
    who: Principal, csrf: str, form: Mapping[str, Any], permission: Permission | None, reads: bool
) -> None:
    if not reads and not compare_digest(str(form.get("csrf", "")), csrf):
        raise PageForbidden("the form is out of date (CSRF); reload the page", who, csrf)
    if permission is not None and not allowed(who.role, permission):
        raise PageForbidden(f"role {who.role.value} may not {permission.value}", who, csrf)


async def training(api: Api) -> bool:
    """The database's mark for a page rendered outside any viewer's transaction (sign-in):
    known after the first request, else read in a short read-only transaction."""
    if api.training is not None:
        return api.training
    async with api.sessions() as session, session.begin():
        await session.connection(execution_options=READ_ONLY)
        return await learn_training(api, session)


async def read_fresh(me: Viewer) -> None:
    """Begin the (alone) viewer's read-only transaction, after its action is done."""
    if not me.session.in_transaction():
        await me.session.connection(execution_options=READ_ONLY)


def viewer(permission: Permission | None, *, alone: bool = False) -> Viewer:
    """``me: Viewer = viewer(Permission.X)`` in a page handler's signature."""
    found: Viewer = Depends(page(permission, alone=alone), scope="function")
    return found
