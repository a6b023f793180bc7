"""Browser sign-in: the session cookie (HttpOnly, SameSite=Strict, Secure under TLS), the
CSRF token every write must echo, and the backoff then lockout after failed logins."""

from __future__ import annotations

from datetime import timedelta

from gateway.accounts import lockout
from tests.gateway.web.api.conftest import NOW, PASSWORD, Desk


async def test_cookie_and_csrf(desk: Desk) -> None:
    r = await desk.client.post("/api/v1/login", json={"name": " Cashier ", "password": PASSWORD})
    assert r.status_code == 200, r.text
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert "secure" not in cookie
    csrf = r.json()["csrf_token"]
    me = await desk.client.get("/api/v1/me")
    assert me.json()["name"] == "cashier"
    sale = {"player": "7505055123080"}
    r = await desk.client.post("/api/v1/tournaments/Spring/entries", json=sale)
    assert r.status_code == 403
    assert "csrf" in r.json()["error"]
    r = await desk.client.post(
        "/api/v1/tournaments/Spring/entries", json=sale, headers={"X-CSRF-Token": csrf}
    )
    assert r.status_code == 201, r.text
    await desk.client.post("/api/v1/logout", headers={"X-CSRF-Token": csrf})
    desk.client.cookies.clear()
    assert (await desk.client.get("/api/v1/me")).status_code == 401


def test_backoff_then_lockout_rules() -> None:
    assert lockout.locked_until_after(lockout.FREE_TRIES, NOW) is None
    first = lockout.locked_until_after(lockout.FREE_TRIES + 1, NOW)
    second = lockout.locked_until_after(lockout.FREE_TRIES + 2, NOW)
    assert first is not None
    assert second is not None
    assert second - NOW == 2 * (first - NOW)
    assert lockout.locked_until_after(50, NOW) == NOW + lockout.MAX_DELAY
    assert lockout.refusal(lockout.LOCK_AFTER, None, NOW + timedelta(days=9)) is not None


async def test_failed_logins_back_off(desk: Desk) -> None:
    bad = {"name": "desk", "password": "wrong password"}
    for _ in range(lockout.FREE_TRIES + 1):
        r = await desk.client.post("/api/v1/login", json=bad)
        assert r.status_code == 401
        assert "wrong password" in r.json()["error"]
    # Now even the right password waits (the clock is fixed at NOW).
    r = await desk.client.post("/api/v1/login", json={"name": "desk", "password": PASSWORD})
    assert r.status_code == 401
    assert "try again in" in r.json()["error"]
