"""``POST /audit/verify`` (issue 26, item 6: the last audit findings on the Tonight
board): the checks of ``reelgate audit verify`` run from a desk, the outcome chained
as an ``audit.verified`` row under the caller — so an insider with the database can
neither break the chain unseen nor rewrite the verdict to "intact"."""

from __future__ import annotations

from sqlalchemy import text

from gateway.records.verify_runs import VERIFIED_ACTION, last_verification

from .conftest import Desk


async def _verify(desk: Desk, account: str = "auditor") -> dict[str, object]:
    r = await desk.client.post("/api/v1/audit/verify", headers=desk.auth(account))
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


async def test_an_intact_chain_is_said_and_the_verdict_kept_under_the_caller(desk: Desk) -> None:
    body = await _verify(desk)
    assert body["ok"] is True, body
    assert body["findings"] == []
    assert body["signatures_checked"] is True  # the public key lies beside the audit key
    assert str(body["headline"]).startswith("audit log intact: "), body
    rows = await desk.client.get("/api/v1/audit", params={"limit": 1}, headers=desk.auth("auditor"))
    (row,) = rows.json()
    assert (row["actor"], row["action"], row["subject"]) == ("auditor", VERIFIED_ACTION, "audit")
    assert row["details"]["ok"] is True
    assert row["details"]["rows_checked"] == body["rows_checked"]
    async with desk.sessions() as s:
        last = await last_verification(s)
    assert last is not None
    assert last.ok
    assert last.actor == "auditor"
    assert last.headline().startswith("audit log intact: ")


async def test_a_row_edited_in_the_database_is_named_and_the_verdict_cannot_be_rewritten(
    desk: Desk,
) -> None:
    async with desk.sessions() as s, s.begin():  # an insider with the database
        await s.execute(text("UPDATE audit_log SET actor = 'cashier:bob' WHERE id = 3"))
    body = await _verify(desk, "director")
    assert body["ok"] is False, body
    assert str(body["headline"]).startswith("audit log BROKEN: "), body
    assert any(str(line).startswith("audit_log 3:") for line in body["findings"]), body  # type: ignore[attr-defined]
    async with desk.sessions() as s:
        last = await last_verification(s)
    assert last is not None
    assert not last.ok
    assert last.actor == "director"
    assert last.findings == len(body["findings"])  # type: ignore[arg-type]
    assert last.first_findings[0].startswith("audit_log 3:")

    # The insider now rewrites the verdict to "intact": the next verification names it.
    async with desk.sessions() as s, s.begin():
        await s.execute(
            text("UPDATE audit_log SET details = :d WHERE id = :i"),
            {"d": '{"ok": true}', "i": last.audit_id},
        )
    again = await _verify(desk, "director")
    assert any(
        str(line).startswith(f"audit_log {last.audit_id}:")
        for line in again["findings"]  # type: ignore[attr-defined]
    ), again


async def test_roles_without_audit_read_may_not_verify(desk: Desk) -> None:
    for account in ("cashier", "technician"):
        r = await desk.client.post("/api/v1/audit/verify", headers=desk.auth(account))
        assert r.status_code == 403, (account, r.text)
        assert "audit.read" in r.json()["error"]
    assert (await desk.client.post("/api/v1/audit/verify")).status_code == 401
    async with desk.sessions() as s:
        assert await last_verification(s) is None  # nothing recorded by a refusal
