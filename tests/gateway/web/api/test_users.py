"""The accounts over the API (issue 26, item 4): the list with each account's last
sign-in, disable and enable under ``accounts.manage`` (the permission table and its
403s: test_permissions), audited under the caller; each refusal one line, nothing
changed."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
from sqlalchemy import func, select

from gateway.records.verify import verify as records_verify
from storage.accounts import ApiToken, User
from storage.audit import AuditEntry
from tests.gateway.web.api.conftest import NOW, PASSWORD, Desk


async def _users(desk: Desk) -> dict[str, dict[str, Any]]:
    r = await desk.client.get("/api/v1/users", headers=desk.auth("admin"))
    assert r.status_code == 200, r.text
    return {u["name"]: u for u in r.json()}


async def _changes(desk: Desk) -> int:
    """The audit rows of account writes (user.*, dual.*): refusals must add none."""
    writes = AuditEntry.action.startswith("user.") | AuditEntry.action.startswith("dual.")
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def test_the_list_shows_the_last_sign_in(desk: Desk) -> None:
    """A password sign-in (POST /login) stamps the account; a token's use does not."""
    before = await _users(desk)
    assert before["cashier"]["last_login_at"] is None
    assert "password_hash" not in before["cashier"]
    login = await desk.client.post("/api/v1/login", json={"name": "cashier", "password": PASSWORD})
    assert login.status_code == 200, login.text
    desk.client.cookies.clear()
    after = await _users(desk)
    assert datetime.fromisoformat(after["cashier"]["last_login_at"]) == NOW
    assert after["desk"]["last_login_at"] is None  # its token opened the API, no sign-in


async def test_disable_and_enable_round_trip(desk: Desk) -> None:
    """Disable, then enable: each audited under the admin; the account's token is revoked
    with the disable and stays so after the enable (a token that was the reason for the
    disable never comes back); the seals verify."""
    key = (await _users(desk))["cashier"]["id"]
    r = await desk.client.post(f"/api/v1/users/{key}/disable", headers=desk.auth("admin"))
    assert r.status_code == 200, r.text
    assert r.json()["disabled"] is True
    assert (await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))).status_code == 401
    r = await desk.client.post(f"/api/v1/users/{key}/enable", headers=desk.auth("admin"))
    assert r.status_code == 200, r.text
    assert r.json()["disabled"] is False
    assert (await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))).status_code == 401
    async with desk.sessions() as s:
        rows = (
            await s.scalars(
                select(AuditEntry)
                .where(AuditEntry.subject == "user:cashier", AuditEntry.actor == "admin")
                .order_by(AuditEntry.id)
            )
        ).all()
        assert [e.action for e in rows] == ["user.disable", "user.enable"]
        revoked = (
            await s.scalars(
                select(AuditEntry).where(
                    AuditEntry.action == "token.revoke", AuditEntry.actor == "admin"
                )
            )
        ).all()
        assert [json.loads(e.details)["why"] for e in revoked] == ["disabled"], revoked
        found = await records_verify(s, check_signature=None)
    assert found.ok, found.findings


async def test_enable_revokes_a_token_left_live_by_an_older_disable(desk: Desk) -> None:
    """An account disabled before a disable revoked tokens (only its flag set) keeps a
    live token in the table; enabling it revokes that token, audited: only the password
    comes back."""
    async with desk.sessions() as s, s.begin():
        user = await s.scalar(select(User).where(User.name == "cashier"))
        assert user is not None
        user.disabled = True
    assert (await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))).status_code == 401
    key = (await _users(desk))["cashier"]["id"]
    r = await desk.client.post(f"/api/v1/users/{key}/enable", headers=desk.auth("admin"))
    assert r.status_code == 200, r.text
    assert (await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))).status_code == 401
    async with desk.sessions() as s:
        tokens = (await s.scalars(select(ApiToken).join(User).where(User.name == "cashier"))).all()
        revokes = (
            await s.scalars(select(AuditEntry).where(AuditEntry.action == "token.revoke"))
        ).all()
        found = await records_verify(s, check_signature=None)
    assert tokens
    assert all(t.revoked_at == NOW for t in tokens), tokens
    assert {(e.actor, e.subject) for e in revokes} == {("admin", f"token:{t.id}") for t in tokens}
    assert found.ok, found.findings


async def test_each_refusal_is_one_line_and_changes_nothing(desk: Desk) -> None:
    users = await _users(desk)
    before = await _changes(desk)
    admin = desk.auth("admin")
    cases = [
        (f"/api/v1/users/{users['cashier']['id']}/enable", 422, "user 'cashier' is not disabled"),
        (f"/api/v1/users/{users['admin']['id']}/disable", 422, "your own account"),
        ("/api/v1/users/99999/enable", 404, "user 99999 does not exist"),
        ("/api/v1/users/99999/disable", 404, "user 99999 does not exist"),
        ("/api/v1/users/0/enable", 422, ""),
    ]
    for url, status, line in cases:
        r: httpx.Response = await desk.client.post(url, headers=admin)
        assert r.status_code == status, (url, r.text)
        assert line in r.json()["error"], r.text
        assert "\n" not in r.json()["error"]
    assert await _changes(desk) == before
    async with desk.sessions() as s:
        assert not await s.scalar(select(func.count()).where(User.disabled.is_(True)))
