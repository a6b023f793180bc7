"""The Accounts screen of the ``admin`` role (issue 26, item 4): the accounts and the API
tokens, and the forms of ``reelgate users ...`` and ``reelgate tokens ...``.

Every write is the CLI's own service (:mod:`gateway.accounts.service`), audited under
the signed-in admin; a refusal is one line naming the form's field (a 422 page) and
changes nothing.  The console (and the API) refuses two things the host's CLI leaves to
its operator: an admin disabling their own account (the venue would be left without a
way in), and disabling or revoking twice (``service.check_disable``).  Enabling a
disabled account again is the same admin's word as disabling it, with no second person.
A new token's secret is shown once, in the response to its POST (never in a redirect or
a cookie; pages are ``Cache-Control: no-store``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts import service
from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role
from gateway.errors import OperatorError
from gateway.web.api.auth import api_of
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, viewer
from gateway.web.console.state import console_of
from storage.accounts import ApiToken, User, user_by_name

router = APIRouter()
Key = Annotated[int, Path(ge=1, le=2_147_483_647)]
PATH = "/console/accounts"
# The roles a venue needs first, and what each is for (the home page's first-run notice).
FIRST_ROLES = (
    (Role.TECHNICIAN, "the floor"),
    (Role.DIRECTOR, "the tournament"),
    (Role.CASHIER, "the desk"),
)
# The service's words for the CLI's options, as the form's fields.
_OPTIONS = {"--expires": "days", "--role": "scope"}
_FIELDS = frozenset({"name", "role", "password", "password (again)", "account", "days", "scope"})


def _now(request: Request) -> datetime:
    return api_of(request).clock()


def _field(form_field: str, why: str) -> str:
    """The refusal as one line that starts with the form's field."""
    head, sep, rest = why.partition(":")
    if sep and head in _OPTIONS:
        return f"{_OPTIONS[head]}:{rest}"
    if sep and head == "name" and form_field == "account":
        return f"account:{rest}"
    if sep and head in _FIELDS:
        return why
    return f"{form_field}: {why}"


def _locked(user: User, now: datetime) -> bool:
    return user.locked_until is not None and user.locked_until > now


async def _context(me: Viewer, now: datetime) -> dict[str, Any]:
    users = await service.list_users(me.session)
    tokens = await service.list_tokens(me.session)
    return {
        "users": users,
        "locked": {u.id for u in users if _locked(u, now)},
        "tokens": tokens,
        "roles": [r.value for r in Role],
        "enabled": [u.name for u in users if not u.disabled],
        "disabled": {u.name for u in users if u.disabled},
        "max_days": service.TOKEN_MAX_TTL.days,
        "now": now,
    }


async def _page(request: Request, me: Viewer, *, status: int = 200, error: str = "") -> Response:
    context = await _context(me, _now(request))
    # ?role=technician (the home page's first-run links): the add form's role chosen.
    wanted = request.query_params.get("role", "")
    context["preselect"] = wanted if wanted in context["roles"] else ""
    extra = {"error": error} if error else {}
    return console_of(request).pages.render(
        request, "accounts.html", me, status=status, active="accounts", **context, **extra
    )


async def _answer(request: Request, me: Viewer, work: Callable[[], Awaitable[str]]) -> Response:
    """Run one form's write: its one-line refusal on the page (422), or back to the
    page with what was done (post, redirect, get)."""
    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, status=422, error=out.error)
    return done(PATH, out.value)


@router.get("/accounts", response_class=HTMLResponse)
async def accounts(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    return await _page(request, me)


def _passwords(me: Viewer) -> str:
    password = str(me.form.get("password", ""))  # as typed: spaces are part of it
    if password != str(me.form.get("password2", "")):
        raise OperatorError("password (again): the two passwords differ; nothing changed")
    return password


@router.post("/accounts/add")
async def add(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    async def work() -> str:
        try:
            password = _passwords(me)
            user = await service.add_user(
                me.session, me.field("name"), me.field("role"), password,
                actor=me.name, now=_now(request),
            )  # fmt: skip
        except OperatorError as exc:
            raise OperatorError(_field("name", str(exc))) from None
        return f"account {user.name} added ({user.role})"

    return await _answer(request, me, work)


async def _account(me: Viewer, name: str) -> User:
    user = await user_by_name(me.session, service.name_of(name))
    if user is None:
        raise OperatorError(f"name: user {service.name_of(name)!r} does not exist")
    return user


@router.post("/accounts/disable")
async def disable(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    async def work() -> str:
        try:
            user = await _account(me, me.field("name"))
            service.check_disable(user, by=me.user_id)
            await service.disable_user(me.session, user.name, actor=me.name, now=_now(request))
        except OperatorError as exc:
            raise OperatorError(_field("name", str(exc))) from None
        return f"account {user.name} disabled (its sessions ended)"

    return await _answer(request, me, work)


@router.post("/accounts/enable")
async def enable(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    async def work() -> str:
        try:
            user = await service.enable_user(
                me.session, me.field("name"), actor=me.name, now=_now(request)
            )
        except OperatorError as exc:
            raise OperatorError(_field("name", str(exc))) from None
        return f"account {user.name} enabled (it may sign in again)"

    return await _answer(request, me, work)


@router.post("/accounts/reset-password")
async def reset(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    async def work() -> str:
        try:
            password = _passwords(me)
            user = await service.reset_password(
                me.session, me.field("name"), password, actor=me.name
            )
        except OperatorError as exc:
            raise OperatorError(_field("name", str(exc))) from None
        return f"password of {user.name} reset (its sessions ended, its lockout cleared)"

    return await _answer(request, me, work)


@router.post("/accounts/unlock")
async def unlock(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    async def work() -> str:
        try:
            user = await service.unlock_user(me.session, me.field("name"), actor=me.name)
        except OperatorError as exc:
            raise OperatorError(_field("name", str(exc))) from None
        return f"account {user.name} unlocked (failed logins cleared)"

    return await _answer(request, me, work)


@router.post("/accounts/tokens", response_class=HTMLResponse)
async def create_token(request: Request, me: Viewer = viewer(P.ACCOUNTS_MANAGE)) -> Response:
    now = _now(request)

    async def work() -> tuple[ApiToken, str, str]:
        days = me.field("days")
        most = service.TOKEN_MAX_TTL.days
        if not days.isdigit() or not 1 <= int(days) <= most:
            raise OperatorError(f"days: a whole number of days, 1 to {most}")
        scope = me.field("scope") or "own"
        if scope not in ("own", Role.AUDITOR.value):
            raise OperatorError("scope: the account's own role or auditor (read-only)")
        try:
            user = await _account(me, me.field("account"))
            if user.disabled:
                raise OperatorError(f"account: {user.name} is disabled; its token would not work")
            token, secret = await service.create_token(
                me.session, user.name, role=None if scope == "own" else scope,
                expires_at=now + timedelta(days=int(days)), label=me.field("label"),
                actor=me.name, now=now,
            )  # fmt: skip
        except OperatorError as exc:
            raise OperatorError(_field("account", str(exc))) from None
        return token, secret, user.name

    out = await attempt(me, work)
    if not out.ok or out.value is None:
        return await _page(request, me, status=422, error=out.error)
    token, secret, owner = out.value
    # Rendered here, once: the secret is in no URL, no cookie and no later page.
    return console_of(request).pages.render(
        request, "token_created.html", me, active="accounts", token=token, secret=secret,
        owner=owner,
    )  # fmt: skip


@router.post("/accounts/tokens/{key}/revoke")
async def revoke_token(
    request: Request, key: Key, me: Viewer = viewer(P.ACCOUNTS_MANAGE)
) -> Response:
    async def work() -> None:
        token = await me.session.get(ApiToken, key)
        if token is None:
            raise OperatorError(f"token: token {key} does not exist")
        if token.revoked_at is not None:
            raise OperatorError(f"token: token {key} is already revoked")
        await service.revoke_token(me.session, key, actor=me.name, now=_now(request))

    out = await attempt(me, work)
    if not out.ok:
        return await _page(request, me, status=422, error=out.error)
    return done(PATH, f"token {key} revoked: it no longer opens the API")


async def first_run(me: Viewer) -> list[tuple[str, str]]:
    """For the home page of an account manager: the first roles still without an enabled
    account (role, what it is for), when the floor cannot run yet (no technician or no
    director); empty otherwise."""
    if not me.can(P.ACCOUNTS_MANAGE):
        return []
    have = {Role(u.role) for u in await service.list_users(me.session) if not u.disabled}
    if Role.TECHNICIAN in have and Role.DIRECTOR in have:
        return []
    return [(role.value, what) for role, what in FIRST_ROLES if role not in have]
