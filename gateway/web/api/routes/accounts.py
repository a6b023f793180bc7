"""Signing in and out, who am I, and the dual-control queue (approve / reject)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from gateway.accounts import service, signin
from gateway.accounts.signin import LoginFailed, LoginThrottled
from gateway.web.api import actions
from gateway.web.api.auth import COOKIE, Caller, api_of, cross_site, signed_in, source_of
from gateway.web.api.errors import ApiError
from gateway.web.api.models import INT32, Decision, Login, Me, PendingOut, Problem

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
