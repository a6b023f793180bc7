"""``audit verify`` from the console (issue 26, item 6): the Decisions & audit screen
runs the chain's checks for an account that may read the audit (``POST
/console/audit/verify``, the API's service), and the outcome — who looked, when, intact
or the first findings — shows there and on the Tonight board of every such account."""

from __future__ import annotations

import re

from sqlalchemy import text

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed

from .conftest import Desk, csrf_of, signed_in


def _verified(html: str) -> str:
    found = re.search(r'data-verified="([a-z]+)"', html)
    assert found is not None, "no verification shown"
    return found.group(1)


async def test_the_director_verifies_and_the_board_says_so(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/audit")
        assert _verified(page.text) == "never"
        r = await client.post("/console/audit/verify", data={"csrf": csrf_of(page.text)})
        assert r.status_code == 303, r.text
        assert "audit+log+intact" in r.headers["location"], r.headers["location"]
        home = (await client.get("/console/")).text
    assert _verified(home) == "intact"
    assert "by director" in home
    async with signed_in(desk, "auditor") as client:  # another account sees the same verdict
        assert _verified((await client.get("/console/tonight/fragment")).text) == "intact"


async def test_findings_show_on_the_board_until_the_chain_is_whole(desk: Desk) -> None:
    async with desk.sessions() as s, s.begin():  # an insider edits a row
        await s.execute(text("UPDATE audit_log SET reason = 'nothing to see' WHERE id = 3"))
    async with signed_in(desk, "auditor") as client:
        page = await client.get("/console/audit")
        r = await client.post("/console/audit/verify", data={"csrf": csrf_of(page.text)})
        assert "audit+log+BROKEN" in r.headers["location"], r.headers["location"]
        home = (await client.get("/console/")).text
    assert _verified(home) == "broken"
    findings = re.search(r"<ul class=\"plain\" data-verified-findings>(.*?)</ul>", home, re.S)
    assert findings is not None, home
    assert "audit_log 3:" in findings.group(1), home


async def test_a_role_that_may_not_read_the_audit_cannot_verify(desk: Desk) -> None:
    for role in Role:
        if allowed(role, P.AUDIT_READ):
            continue
        async with signed_in(desk, role.value) as client:
            home = await client.get("/console/")
            r = await client.post("/console/audit/verify", data={"csrf": csrf_of(home.text)})
            assert r.status_code == 403, (role, r.status_code)
            assert "data-verified" not in (await client.get("/console/")).text
    async with signed_in(desk, "director") as client:  # a forged form (no CSRF token)
        r = await client.post("/console/audit/verify", data={})
        assert r.status_code in (400, 403), r.status_code
        assert _verified((await client.get("/console/audit")).text) == "never"
