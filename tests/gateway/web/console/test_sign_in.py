"""The console's sign-in form (issue 25.3): a login CSRF token (double submit: the form's
hidden field and a cookie of the sign-in path, equal) and the Origin check, so a page
of another site cannot sign a browser in; nothing is tried or counted when refused."""

from __future__ import annotations

from sqlalchemy import select

from storage.accounts import User
from tests.gateway.web.api.conftest import PASSWORD

from .conftest import Desk, csrf_of, sign_in_form


async def _failed_logins(desk: Desk) -> int:
    async with desk.sessions() as s:
        return (await s.execute(select(User.failed_logins).where(User.name == "cashier"))).one()[0]


async def test_the_form_signs_in_with_its_token(desk: Desk) -> None:
    r = await sign_in_form(desk.client, {"name": "cashier", "password": PASSWORD})
    assert r.status_code == 303
    assert "reelgate_console=" in r.headers["set-cookie"]


async def test_a_post_without_the_form_token_is_refused(desk: Desk) -> None:
    data = {"name": "cashier", "password": PASSWORD, "next": "/console/"}
    r = await desk.client.post("/console/login", data=data)  # no page, no token
    assert r.status_code == 403
    assert "CSRF" in r.text
    assert "reelgate_console=" not in r.headers.get("set-cookie", "")
    # A token from the page, but not the browser's own cookie (a login-CSRF attacker
    # can read its own page's token, never set the victim's cookie).
    page = await desk.client.get("/console/login")
    desk.client.cookies.clear()
    r = await desk.client.post("/console/login", data={**data, "csrf": csrf_of(page.text)})
    assert r.status_code == 403
    assert await _failed_logins(desk) == 0


async def test_a_post_from_another_site_is_refused(desk: Desk) -> None:
    page = await desk.client.get("/console/login")
    data = {"name": "cashier", "password": PASSWORD, "csrf": csrf_of(page.text)}
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        r = await desk.client.post("/console/login", data=data, headers=headers)
        assert r.status_code == 403, headers
        assert "origin:" in r.text
        assert "reelgate_console=" not in r.headers.get("set-cookie", "")
    same = {"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"}
    page = await desk.client.get("/console/login")  # each form a token of its own
    data["csrf"] = csrf_of(page.text)
    r = await desk.client.post("/console/login", data=data, headers=same)
    assert r.status_code == 303


async def test_a_throttled_sign_in_says_when(desk: Desk) -> None:
    for _ in range(4):
        r = await sign_in_form(desk.client, {"name": "cashier", "password": "wrong password!"})
        assert r.status_code == 401
    r = await sign_in_form(desk.client, {"name": "cashier", "password": PASSWORD})
    assert r.status_code == 429
    assert "try again in" in r.text
