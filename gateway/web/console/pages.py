"""Sign in, sign out and the pages of refusal (the home screen: :mod:`.tonight_pages`)."""

from __future__ import annotations

import secrets
from hmac import compare_digest
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gateway.accounts import service, signin
from gateway.accounts.signin import LoginFailed, LoginThrottled
from gateway.web.api.auth import api_of, cross_site, source_of
from gateway.web.console.auth import (
    COOKIE,
    COOKIE_PATH,
    PageForbidden,
    SignInNeeded,
    Viewer,
    training,
    viewer,
)
from gateway.web.console.state import console_of

router = APIRouter()
LOGIN_CSRF_COOKIE = "reelgate_login_csrf"


def _safe_next(target: str) -> str:
    """Only a console path of ours (never another site: an open redirect)."""
    if target.startswith("/console/") and not target.startswith("//") and "\\" not in target:
        return target[:300]
    return "/console/"


def _login_form(
    request: Request, *, next: str, name: str = "", status: int = 200, error: str = ""
) -> Response:
    """The sign-in page with a fresh login CSRF token, in its hidden field and in a
    cookie of the sign-in path: the POST must bring both, equal (double submit; a page
    of another site can set neither)."""
    token = secrets.token_urlsafe(32)
    pages = console_of(request).pages
    extra = {"error": error} if error else {}
    response = pages.render(
        request, "login.html", None, status=status, next=_safe_next(next), name=name,
        login_csrf=token, **extra,
    )  # fmt: skip
    response.set_cookie(
        LOGIN_CSRF_COOKIE, token, httponly=True, samesite="strict",
        secure=request.url.scheme == "https", path="/console/login",
    )  # fmt: skip
    return response


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str = "/console/") -> Response:
    await training(api_of(request))  # the banner, before anyone has signed in
    return _login_form(request, next=next)


@router.post("/login", response_class=HTMLResponse)
async def login(
    request: Request,
    name: Annotated[str, Form(max_length=100)],
    password: Annotated[str, Form(max_length=1024)],
    next: Annotated[str, Form(max_length=300)] = "/console/",
    csrf: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    api = api_of(request)
    await training(api)
    foreign = cross_site(request)
    if foreign is not None:
        return _login_form(request, next=next, name=name, status=403, error=foreign)
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    if not csrf or not compare_digest(csrf, cookie):
        why = "the sign-in form is out of date (CSRF); sign in again"
        return _login_form(request, next=next, name=name, status=403, error=why)
    try:
        done = await signin.sign_in(
            api.sessions, name, password, api.clock(), source=source_of(request), gate=api.gate
        )
    except LoginFailed as exc:
        status = 429 if isinstance(exc, LoginThrottled) else 401
        return _login_form(request, next=next, name=name, status=status, error=str(exc))
    response = RedirectResponse(_safe_next(next), status_code=303)
    secure = request.url.scheme == "https" if api.secure_cookies is None else api.secure_cookies
    response.set_cookie(
        COOKIE, done.cookie, max_age=int(service.SESSION_TTL.total_seconds()),
        httponly=True, samesite="strict", secure=secure, path=COOKIE_PATH,
    )  # fmt: skip
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/console/login")
    return response


@router.post("/logout")
async def logout(request: Request, me: Viewer = viewer(None)) -> Response:
    cookie = request.cookies.get(COOKIE)
    if cookie:
        await service.logout(me.session, cookie)
    response = RedirectResponse("/console/login", status_code=303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response


async def sign_in_needed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInNeeded)
    if request.headers.get("accept", "").startswith("text/event-stream"):
        return Response("sign in", status_code=401)
    return RedirectResponse(f"/console/login?next={quote(exc.path)}", status_code=303)


async def forbidden(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PageForbidden)
    pages = console_of(request).pages
    return pages.render(request, "forbidden.html", exc.who, status=403, why=exc.why, csrf=exc.csrf)
