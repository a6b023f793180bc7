"""The console's Accounts screen of the ``admin`` role (issue 26, item 4): accounts and
API tokens through the CLI's own services, audited under the signed-in admin; every
refusal one line naming the field (422) that changes nothing; the other roles refused;
a token's secret shown once; re-enabling a disabled account; each account's last
sign-in; the first-run notice on the admin's home page, its links choosing the role."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func, select

from gateway.accounts import service
from gateway.accounts.roles import Role
from gateway.records.verify import verify as records_verify
from storage.accounts import ApiToken, User
from storage.audit import AuditEntry
from tests.gateway.web.api.conftest import NOW, PASSWORD

from .conftest import Desk, csrf_of, sign_in_form, signed_in

NEW_PASSWORD = "violet tram seventeen kettles"
OTHERS = [r.value for r in Role if r is not Role.ADMIN]
WRITES = [
    "/console/accounts/add",
    "/console/accounts/disable",
    "/console/accounts/enable",
    "/console/accounts/reset-password",
    "/console/accounts/unlock",
    "/console/accounts/tokens",
    "/console/accounts/tokens/1/revoke",
]


async def _form(client: httpx.AsyncClient, path: str, data: Mapping[str, str]) -> httpx.Response:
    """A form of the Accounts page, posted with the page's CSRF token."""
    page = await client.get("/console/accounts")
    assert page.status_code == 200, page.text
    return await client.post(path, data={**data, "csrf": csrf_of(page.text)})


async def _user(desk: Desk, name: str) -> User | None:
    async with desk.sessions() as s:
        return (await s.scalars(select(User).where(User.name == name))).one_or_none()


async def _audit(desk: Desk, action: str, subject: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(
            AuditEntry.action == action, AuditEntry.subject == subject, AuditEntry.actor != "setup"
        )
        return list((await s.scalars(query)).all())


async def _audit_count(desk: Desk) -> int:
    """The audit rows of account and token writes (a sign-in has rows of its own)."""
    writes = AuditEntry.action.startswith("user.") | AuditEntry.action.startswith("token.")
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry).where(writes)) or 0


async def _token_id(desk: Desk, label: str) -> int:
    async with desk.sessions() as s:
        return (await s.scalars(select(ApiToken.id).where(ApiToken.label == label))).one()


def _secret_of(html: str) -> str:
    found = re.search(r'id="token-secret" class="secret" value="([^"]+)"', html)
    assert found is not None, "no secret on the page"
    return found.group(1)


async def test_the_admin_sees_accounts_and_tokens_never_a_secret(desk: Desk) -> None:
    """Issue 26, item 4: the table of accounts (role, state, failed logins) and of tokens."""
    async with signed_in(desk, "admin") as client:
        home = await client.get("/console/")
        assert 'href="/console/accounts"' in home.text
        assert "First run" not in home.text  # every role has an account already
        r = await client.get("/console/accounts")
    assert r.status_code == 200
    assert r.headers["cache-control"] == "no-store"
    for name in ("technician", "director", "cashier", "supervisor2"):
        assert f'data-account="{name}"' in r.text
    assert "Failed logins" in r.text
    for secret in desk.tokens.values():
        assert secret not in r.text
    assert r.text.count('data-token="') == len(desk.tokens)


async def test_adding_an_account_is_audited_under_the_admin(desk: Desk) -> None:
    """Issue 26, item 4: add (name, role, the password twice), post-redirect-get."""
    async with signed_in(desk, "admin") as client:
        r = await _form(
            client, "/console/accounts/add",
            {"name": "Naledi", "role": "director", "password": NEW_PASSWORD,
             "password2": NEW_PASSWORD},
        )  # fmt: skip
        assert r.status_code == 303
        assert r.headers["location"].startswith("/console/accounts?ok=")
        page = await client.get(r.headers["location"])
        assert "account naledi added (director)" in page.text
    user = await _user(desk, "naledi")
    assert user is not None
    assert user.role == "director"
    assert not user.disabled
    (row,) = await _audit(desk, "user.add", "user:naledi")
    assert row.actor == "admin"
    signed = await sign_in_form(desk.client, {"name": "naledi", "password": NEW_PASSWORD})
    assert signed.status_code == 303  # the new account signs in


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"password": "password1", "password2": "password1"}, "password: at least 10"),
        ({"password": "password123", "password2": "password123"}, "password: too easy"),
        ({"password2": "another horse battery"}, "password (again): the two passwords differ"),
        ({"role": "croupier"}, "role: &#39;croupier&#39; is not a role"),
        ({"name": " Cashier "}, "name: user &#39;cashier&#39; already exists"),
        ({"name": ""}, "name: an account needs a name"),
    ],
)
async def test_a_refused_account_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 4: bad input is one line naming the field (422), nothing saved."""
    data = {"name": "zanele", "role": "cashier", "password": NEW_PASSWORD,
            "password2": NEW_PASSWORD, **fields}  # fmt: skip
    before = await _audit_count(desk)
    async with desk.sessions() as s:
        users = await s.scalar(select(func.count()).select_from(User))
    async with signed_in(desk, "admin") as client:
        r = await _form(client, "/console/accounts/add", data)
    assert r.status_code == 422
    assert line in r.text
    assert len(re.findall(r'class="flash error"', r.text)) == 1
    assert await _audit_count(desk) == before
    async with desk.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(User)) == users


async def test_disabling_an_account_ends_its_way_in(desk: Desk) -> None:
    """Issue 26, item 4: disable, audited under the admin; its sessions and tokens end."""
    async with signed_in(desk, "cashier") as cashier, signed_in(desk, "admin") as admin:
        r = await _form(admin, "/console/accounts/disable", {"name": "cashier"})
        assert r.status_code == 303
        assert (await cashier.get("/console/desk")).status_code == 303  # back to sign-in
        again = await _form(admin, "/console/accounts/disable", {"name": "cashier"})
        assert again.status_code == 422
        assert "name: cashier is already disabled" in again.text
    user = await _user(desk, "cashier")
    assert user is not None
    assert user.disabled
    (row,) = await _audit(desk, "user.disable", "user:cashier")
    assert row.actor == "admin"
    api = await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))
    assert api.status_code == 401
    async with signed_in(desk, "admin") as admin:
        page = await admin.get("/console/accounts")
    assert '<span class="badge bad">revoked' in page.text  # the cashier's token, revoked
    (revoked,) = await _all_revokes(desk)
    assert revoked.actor == "admin"


async def _all_revokes(desk: Desk) -> list[AuditEntry]:
    async with desk.sessions() as s:
        query = select(AuditEntry).where(AuditEntry.action == "token.revoke")
        return list((await s.scalars(query)).all())


def _row(html: str, name: str) -> str:
    found = re.search(rf'<tr data-account="{name}">(.*?)</tr>', html, re.S)
    assert found is not None, f"no row of {name}"
    return found.group(1)


async def test_enabling_a_disabled_account_lets_it_back_in(desk: Desk) -> None:
    """Issue 26, item 4: Enable, on a disabled account only, audited under the admin; the
    password works again, the token revoked with the disable stays revoked; the seals
    still verify."""
    async with signed_in(desk, "admin") as admin:
        assert (await _form(admin, "/console/accounts/disable", {"name": "cashier"})).is_redirect
        page = await admin.get("/console/accounts")
        assert 'action="/console/accounts/enable"' in _row(page.text, "cashier")
        assert 'action="/console/accounts/enable"' not in _row(page.text, "technician")
        r = await _form(admin, "/console/accounts/enable", {"name": " Cashier"})
        assert r.status_code == 303
        assert "account cashier enabled" in (await admin.get(r.headers["location"])).text
        before = await _audit_count(desk)
        again = await _form(admin, "/console/accounts/enable", {"name": "cashier"})
        assert again.status_code == 422
        assert "name: user &#39;cashier&#39; is not disabled" in again.text
        unknown = await _form(admin, "/console/accounts/enable", {"name": "nobody"})
        assert unknown.status_code == 422
        assert "name: user &#39;nobody&#39; does not exist" in unknown.text
        assert await _audit_count(desk) == before
    user = await _user(desk, "cashier")
    assert user is not None
    assert not user.disabled
    (row,) = await _audit(desk, "user.enable", "user:cashier")
    assert row.actor == "admin"
    api = await desk.client.get("/api/v1/me", headers=desk.auth("cashier"))
    assert api.status_code == 401  # its token was revoked with the disable: never back
    async with desk.sessions() as s:
        tokens = (await s.scalars(select(ApiToken).join(User).where(User.name == "cashier"))).all()
        revokes = (
            await s.scalars(select(AuditEntry).where(AuditEntry.action == "token.revoke"))
        ).all()
    assert tokens
    assert all(t.revoked_at is not None for t in tokens), tokens
    assert {(e.actor, e.subject) for e in revokes} == {("admin", f"token:{t.id}") for t in tokens}
    signed = await sign_in_form(desk.client, {"name": "cashier", "password": PASSWORD})
    assert signed.status_code == 303
    async with desk.sessions() as s:
        found = await records_verify(s, check_signature=None)
    assert found.ok, found.findings  # disable and enable went under the seals


async def test_the_last_sign_in_is_shown(desk: Desk) -> None:
    """Issue 26, item 4: a password sign-in stamps the account (the desk's clock); an
    account that never signed in says so."""
    async with signed_in(desk, "admin") as client:
        page = await client.get("/console/accounts")
    assert "Last sign-in" in page.text
    assert "20 Nov 10:00" in _row(page.text, "admin")
    assert "never" in _row(page.text, "technician")
    admin = await _user(desk, "admin")
    assert admin is not None
    assert admin.last_login_at == NOW


async def test_an_admin_may_not_disable_their_own_account(desk: Desk) -> None:
    """Issue 26, item 4: refused in one line; the service itself would let it through."""
    before = await _audit_count(desk)
    async with signed_in(desk, "admin") as client:
        page = await client.get("/console/accounts")
        assert 'action="/console/accounts/disable"' in page.text  # for the others
        r = await _form(client, "/console/accounts/disable", {"name": " ADMIN"})
        assert r.status_code == 422
        assert "name: you may not disable your own account" in r.text
        unknown = await _form(client, "/console/accounts/disable", {"name": "nobody"})
        assert unknown.status_code == 422
        assert "name: user &#39;nobody&#39; does not exist" in unknown.text
    user = await _user(desk, "admin")
    assert user is not None
    assert not user.disabled
    assert await _audit_count(desk) == before


async def test_reset_and_unlock_are_audited_under_the_admin(desk: Desk) -> None:
    """Issue 26, item 4: a password reset (the policy checked) and an unlock."""
    async with desk.sessions() as s, s.begin():
        user = (await s.scalars(select(User).where(User.name == "technician"))).one()
        user.failed_logins = 7
        user.locked_until = NOW + timedelta(minutes=10)
    async with signed_in(desk, "admin") as client:
        page = await client.get("/console/accounts")
        assert "locked out until" in page.text
        r = await _form(client, "/console/accounts/unlock", {"name": "technician"})
        assert r.status_code == 303
        weak = await _form(
            client, "/console/accounts/reset-password",
            {"name": "director", "password": "aaaaaaaaaaaa", "password2": "aaaaaaaaaaaa"},
        )  # fmt: skip
        assert weak.status_code == 422
        assert "password: not one character repeated" in weak.text
        differ = await _form(
            client, "/console/accounts/reset-password",
            {"name": "director", "password": NEW_PASSWORD, "password2": PASSWORD},
        )  # fmt: skip
        assert differ.status_code == 422
        assert "password (again): the two passwords differ" in differ.text
        r = await _form(
            client, "/console/accounts/reset-password",
            {"name": "director", "password": NEW_PASSWORD, "password2": NEW_PASSWORD},
        )  # fmt: skip
        assert r.status_code == 303
    tech = await _user(desk, "technician")
    assert tech is not None
    assert tech.failed_logins == 0
    assert tech.locked_until is None
    (unlock,) = await _audit(desk, "user.unlock", "user:technician")
    (reset,) = await _audit(desk, "user.reset-password", "user:director")
    assert unlock.actor == reset.actor == "admin"
    transport = httpx.ASGITransport(app=desk.client._transport.app)  # type: ignore[attr-defined]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        login = await c.post("/api/v1/login", json={"name": "director", "password": NEW_PASSWORD})
        assert login.status_code == 200, login.text


async def test_a_token_secret_is_shown_once_and_revoking_closes_the_api(desk: Desk) -> None:
    """Issue 26, item 4: create (account, days, label), the secret on the POST's own page
    (no-store, in no redirect), never in the list; revoked, it opens the API no more."""
    async with signed_in(desk, "admin") as client:
        r = await _form(
            client, "/console/accounts/tokens",
            {"account": "technician", "scope": "own", "days": "30", "label": "floor laptop"},
        )  # fmt: skip
        assert r.status_code == 200
        assert r.headers["cache-control"] == "no-store"
        assert "will not be shown again" in r.text
        secret = _secret_of(r.text)
        assert r.text.count(secret) == 1
        listed = await client.get("/console/accounts")
        assert secret not in listed.text
        assert "floor laptop" in listed.text
        api = await desk.client.get("/api/v1/me", headers={"Authorization": f"Bearer {secret}"})
        assert api.status_code == 200
        assert api.json()["name"] == "technician"
        key = await _token_id(desk, "floor laptop")
        r = await _form(client, f"/console/accounts/tokens/{key}/revoke", {})
        assert r.status_code == 303
        assert secret not in r.headers["location"]
        again = await _form(client, f"/console/accounts/tokens/{key}/revoke", {})
        assert again.status_code == 422
        assert f"token: token {key} is already revoked" in again.text
    api = await desk.client.get("/api/v1/me", headers={"Authorization": f"Bearer {secret}"})
    assert api.status_code == 401
    (made,) = await _audit(desk, "token.create", "user:technician")
    (revoked,) = await _audit(desk, "token.revoke", f"token:{key}")
    assert made.actor == revoked.actor == "admin"
    async with desk.sessions() as s:
        found = await records_verify(s, check_signature=None)
    assert found.ok, found.findings  # the accounts' seals and the chain are right


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"days": "0"}, "days: a whole number of days, 1 to 366"),
        ({"days": "400"}, "days: a whole number of days, 1 to 366"),
        ({"days": "soon"}, "days: a whole number of days, 1 to 366"),
        ({"account": "nobody"}, "account: user &#39;nobody&#39; does not exist"),
        ({"scope": "director"}, "scope: the account&#39;s own role or auditor"),
    ],
)
async def test_a_refused_token_changes_nothing(
    desk: Desk, fields: dict[str, str], line: str
) -> None:
    """Issue 26, item 4: a bad token form is one line naming the field (422)."""
    before = await _audit_count(desk)
    data = {"account": "technician", "scope": "own", "days": "30", "label": "x", **fields}
    async with signed_in(desk, "admin") as client:
        r = await _form(client, "/console/accounts/tokens", data)
    assert r.status_code == 422
    assert line in r.text
    assert "will not be shown again" not in r.text
    assert await _audit_count(desk) == before
    async with desk.sessions() as s:
        assert await s.scalar(select(func.count()).select_from(ApiToken)) == len(desk.tokens)


@pytest.mark.parametrize("role", OTHERS)
async def test_every_other_role_is_refused(desk: Desk, role: str) -> None:
    """Issue 26, item 4: accounts.manage is the admin's alone, on the GET and every POST."""
    before = await _audit_count(desk)
    async with signed_in(desk, role) as client:
        r = await client.get("/console/accounts")
        assert r.status_code == 403
        assert f"role {role} may not accounts.manage" in r.text
        home = await client.get("/console/")
        assert 'href="/console/accounts"' not in home.text
        csrf = csrf_of(home.text)
        data = {"csrf": csrf, "name": "zanele", "role": "admin", "password": NEW_PASSWORD,
                "password2": NEW_PASSWORD, "account": role, "days": "30"}  # fmt: skip
        for path in WRITES:
            r = await client.post(path, data=data)
            assert r.status_code == 403, path
    assert await _audit_count(desk) == before
    assert await _user(desk, "zanele") is None


async def test_without_a_session_or_csrf_token_nothing_changes(desk: Desk) -> None:
    """Issue 26, item 4: anonymous requests go to sign in; a form without the session's
    CSRF token is refused."""
    before = await _audit_count(desk)
    r = await desk.client.get("/console/accounts")
    assert r.status_code == 303
    assert r.headers["location"] == "/console/login?next=/console/accounts"
    data = {"name": "cashier", "account": "cashier", "days": "30"}
    for path in WRITES:
        r = await desk.client.post(path, data=data)
        assert r.status_code == 303, path
        assert r.headers["location"].startswith("/console/login")
    async with signed_in(desk, "admin") as client:
        for path in WRITES:
            for csrf in ("", "forged"):
                r = await client.post(path, data={**data, "csrf": csrf})
                assert r.status_code == 403, path
                assert "CSRF" in r.text
    assert await _audit_count(desk) == before
    user = await _user(desk, "cashier")
    assert user is not None
    assert not user.disabled


async def test_first_run_leads_the_admin_to_accounts(desk: Desk) -> None:
    """Issue 26, item 4: with no technician or director, the admin's home says which
    accounts to create first; other roles never see it."""
    async with desk.sessions() as s, s.begin():
        for name in ("technician", "director", "director2"):
            await service.disable_user(s, name, actor="setup", now=NOW)
    async with signed_in(desk, "admin") as client:
        home = await client.get("/console/")
        assert home.status_code == 200
        assert 'id="first-run"' in home.text
        assert "<strong>technician</strong> for the floor" in home.text
        assert "<strong>director</strong> for the tournament" in home.text
        assert "<strong>cashier</strong>" not in home.text  # the desk has one
        assert 'href="/console/accounts?role=technician#add"' in home.text
        assert 'href="/console/accounts?role=director#add"' in home.text
        chosen = await client.get("/console/accounts?role=technician")
        assert '<option value="technician" selected>' in chosen.text
        odd = await client.get("/console/accounts?role=croupier")
        assert odd.status_code == 200
        assert " selected>" not in odd.text.split('id="add"')[1].split("</form>")[0]
        for href in re.findall(r'class="tile" href="([^"]+)"', home.text):
            assert (await client.get(href)).status_code == 200, href  # no screen 403s
    async with signed_in(desk, "supervisor") as client:
        assert 'id="first-run"' not in (await client.get("/console/")).text
