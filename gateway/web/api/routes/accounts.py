"""Signing in and out, who am I, the dual-control queue (approve / reject), and the
accounts of ``accounts.manage`` (list, disable, enable: ``reelgate users ...``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from gateway.accounts import service, signin
from gateway.accounts.roles import Permission as P
from gateway.accounts.signin import LoginFailed, LoginThrottled
from gateway.web.api import actions
from gateway.web.api.auth import COOKIE, Caller, api_of, cross_site, signed_in, source_of, who
from gateway.web.api.errors import ApiError
from gateway.web.api.models import INT32, Decision, Login, Me, PendingOut, Problem, UserOut
from gateway.web.api.routes import needs
from storage.accounts import User

router = APIRouter(tags=["accounts"])
Key = Annotated[int, Path(ge=1, le=INT32)]
Signed = Annotated[Caller, Depends(signed_in(), scope="function")]


@router.post(
    "/login",
    responses={401: {"model": Problem}, 403: {"model": Problem}, 429: {"model": Problem}},
)
async def login(request: Request, response: Response, body: Login) -> Me:
    """Sign in (gateway.accounts.signin): 401 for a wrong password or unknown name, 429
    with Retry-After while the name or the source backs off, 403 from another site."""
    api = api_of(request)
    foreign = cross_site(request)
    if foreign is not None:
        raise ApiError(403, foreign)
    try:
        done = await signin.sign_in(
            api.sessions, body.name, body.password, api.clock(),
            source=source_of(request), gate=api.gate,
        )  # fmt: skip
    except LoginThrottled as exc:
        raise ApiError(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    except LoginFailed as exc:
        raise ApiError(401, str(exc)) from None
    secure = request.url.scheme == "https" if api.secure_cookies is None else api.secure_cookies
    response.set_cookie(
        COOKIE,
        done.cookie,
        max_age=int(service.SESSION_TTL.total_seconds()),
        httponly=True,
        samesite="strict",
        secure=secure,
        path="/api",
    )
    p = done.principal
    return Me(id=p.user_id, name=p.name, role=p.role.value, csrf_token=done.csrf_token)


@router.post("/logout", status_code=204)
async def logout(request: Request, response: Response, who: Signed) -> None:
    cookie = request.cookies.get(COOKIE)
    if cookie:
        await service.logout(who.session, cookie)
    response.delete_cookie(COOKIE, path="/api")


@router.get("/me")
async def me(who: Signed) -> Me:
    return Me(id=who.user_id, name=who.name, role=who.role.value)


@router.get("/pending")
async def pending(request: Request, who: Signed) -> list[PendingOut]:
    rows = await service.list_pending(who.session)
    names = {u.id: u.name for u in await service.list_users(who.session)}
    return [
        PendingOut(
            pending=p.id,
            kind=p.kind,
            status=p.status,
            requested_by=names.get(p.requested_by, "?"),
            payload=p.payload_dict(),
        )
        for p in rows
    ]


@router.post("/pending/{key}/approve", openapi_extra={"x-dual-approval": True})
async def approve(request: Request, key: Key, who: Signed) -> Decision:
    return await actions.approve(api_of(request), who, key)


@router.post("/pending/{key}/reject", openapi_extra={"x-dual-approval": True})
async def reject(request: Request, key: Key, who: Signed) -> Decision:
    return await actions.reject(api_of(request), who, key)


def _user_out(u: User) -> UserOut:
    return UserOut(
        id=u.id,
        name=u.name,
        role=u.role,
        disabled=u.disabled,
        failed_logins=u.failed_logins,
        locked_until=u.locked_until,
        created_at=u.created_at,
        created_by=u.created_by,
        last_login_at=u.last_login_at,
    )


async def _account(me: Caller, key: int) -> User:
    user = await me.session.get(User, key)
    if user is None:
        raise ApiError(404, f"user {key} does not exist")
    return user


@router.get("/users", openapi_extra=needs(P.ACCOUNTS_MANAGE))
async def users(me: Caller = who(P.ACCOUNTS_MANAGE)) -> list[UserOut]:
    """Every account, its role, state and last sign-in (``reelgate users list``)."""
    return [_user_out(u) for u in await service.list_users(me.session)]


@router.post(
    "/users/{key}/disable",
    openapi_extra=needs(P.ACCOUNTS_MANAGE),
    responses={404: {"model": Problem}, 422: {"model": Problem}},
)
async def disable_user(request: Request, key: Key, me: Caller = who(P.ACCOUNTS_MANAGE)) -> UserOut:
    """Disable an account: its sessions end, its API tokens are revoked and its pending
    requests are voided.  Refused for the caller's own account and a disabled one."""
    user = await _account(me, key)
    service.check_disable(user, by=me.user_id)
    await service.disable_user(me.session, user.name, actor=me.name, now=api_of(request).clock())
    return _user_out(user)


@router.post(
    "/users/{key}/enable",
    openapi_extra=needs(P.ACCOUNTS_MANAGE),
    responses={404: {"model": Problem}, 422: {"model": Problem}},
)
async def enable_user(
    request: Request, key: Key, me: Caller = who(P.ACCOUNTS_MANAGE)
) -> UserOut:
    """Re-enable a disabled account (``reelgate users enable``): only its password works
    again; its ended sessions, revoked tokens and voided requests stay so."""
    user = await _account(me, key)
    now = api_of(request).clock()
    return _user_out(await service.enable_user(me.session, user.name, actor=me.name, now=now))
