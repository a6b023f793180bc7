"""Sign in, sign out, the home screen and the pages of refusal."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gateway.accounts import service
from gateway.accounts.service import LoginFailed
from gateway.tournament.services.common import unit_of_work
from gateway.web.api.auth import api_of, learn_training
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


def _safe_next(target: str) -> str:
    """Only a console path of ours (never another site: an open redirect)."""
    if target.startswith("/console/") and not target.startswith("//") and "\\" not in target:
        return target[:300]
    return "/console/"


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str = "/console/") -> Response:
    pages = console_of(request).pages
    await training(api_of(request))  # the banner, before anyone has signed in
    return pages.render(request, "login.html", None, next=_safe_next(next), name="")


@router.post("/login", response_class=HTMLResponse)
async def login(
    request: Request,
    name: Annotated[str, Form(max_length=100)],
    password: Annotated[str, Form(max_length=1024)],
    next: Annotated[str, Form(max_length=300)] = "/console/",
) -> Response:
    api = api_of(request)
    failure: LoginFailed | None = None
    async with unit_of_work(api.sessions) as session:
        await learn_training(api, session)
        try:
            done = await service.login(session, name, password, api.clock())
        except LoginFailed as exc:
            failure = exc  # committed: the failed attempt counts towards the backoff
    if failure is not None:
        pages = console_of(request).pages
        return pages.render(
            request, "login.html", None, status=401, error=str(failure),
            next=_safe_next(next), name=name,
        )  # fmt: skip
    response = RedirectResponse(_safe_next(next), status_code=303)
    secure = request.url.scheme == "https" if api.secure_cookies is None else api.secure_cookies
    response.set_cookie(
        COOKIE, done.cookie, max_age=int(service.SESSION_TTL.total_seconds()),
        httponly=True, samesite="strict", secure=secure, path=COOKIE_PATH,
    )  # fmt: skip
    return response


@router.post("/logout")
async def logout(request: Request, me: Viewer = viewer(None)) -> Response:
    cookie = request.cookies.get(COOKIE)
    if cookie:
        await service.logout(me.session, cookie)
    response = RedirectResponse("/console/login", status_code=303)
    response.delete_cookie(COOKIE, path=COOKIE_PATH)
    return response


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, me: Viewer = viewer(None)) -> Response:
    hour = api_of(request).clock().astimezone(console_of(request).pages.zone).hour
    greeting = "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"
    return console_of(request).pages.render(request, "home.html", me, greeting=greeting)


async def sign_in_needed(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInNeeded)
    if request.headers.get("accept", "").startswith("text/event-stream"):
        return Response("sign in", status_code=401)
    return RedirectResponse(f"/console/login?next={quote(exc.path)}", status_code=303)


async def forbidden(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PageForbidden)
    pages = console_of(request).pages
    return pages.render(request, "forbidden.html", exc.who, status=403, why=exc.why, csrf=exc.csrf)
