"""Dual control with two real people: the first account's request waits; the same
account (under any spelling of its name) can never approve it; a second account of an
approving role runs it, and both steps are audited."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from gateway.accounts import service
from gateway.accounts.dual import APPROVERS
from gateway.accounts.roles import PERMISSIONS, Permission
from gateway.errors import OperatorError
from gateway.tournament import services as svc
from storage.accounts import PendingAction, User
from tests.gateway.web.api.conftest import NOW, PASSWORD, Desk
from tests.gateway.web.api.test_permissions import PREPARE, SAMPLES

DUAL = {
    Permission.TOURNAMENT_SETTINGS: ("patch", "/api/v1/tournaments/{ref}/settings"),
    Permission.ENTRY_REFUND: ("post", "/api/v1/entries/{key}/refund"),
    Permission.PLAYER_REINSTATE: ("post", "/api/v1/disqualifications/{key}/reinstate"),
    Permission.HEAT_MANUAL_SCORE: ("post", "/api/v1/seats/{key}/manual-score"),
    Permission.SUPER9_MANUAL_SPIN: ("post", "/api/v1/super9/sessions/{key}/manual-spins"),
    Permission.SUPER9_NUMBERS: ("post", "/api/v1/super9/tickets/{serial}/numbers"),
    Permission.SUPER9_PRIZE_RECEIPT: (
        "post",
        "/api/v1/super9/sessions/{key}/prizes/{serial}/receipt",
    ),
    Permission.TOURNAMENT_PRIZE_RECEIPT: (
        "post",
        "/api/v1/tournaments/{ref}/prizes/{stage}/places/{place}/receipt",
    ),
    Permission.HOTSEAT_PRIZE_RECEIPT: ("post", "/api/v1/hotseat-draws/{key}/receipt"),
    Permission.TEAM_PRIZE_RECEIPT: (
        "post",
        "/api/v1/tournaments/{ref}/team-prizes/{stage}/places/{place}/receipt",
    ),
}


def test_every_dual_permission_is_covered() -> None:
    assert set(DUAL) == set(APPROVERS)


async def _request(desk: Desk, permission: Permission, requester: str) -> int:
    method, path = DUAL[permission]
    if (method, path) in PREPARE:
        await PREPARE[(method, path)](desk)
    url, body = SAMPLES[(method, path)](desk)
    r = await desk.client.request(method.upper(), url, json=body, headers=desk.auth(requester))
    assert r.status_code == 202, r.text
    return int(r.json()["pending"])


def _requester(permission: Permission) -> str:
    return sorted(PERMISSIONS[permission])[0].value


def _approver(permission: Permission, requester: str) -> str:
    role = sorted(APPROVERS[permission])[0].value
    return role if role != requester else f"{role}2"


@pytest.mark.parametrize("permission", list(DUAL), ids=str)
async def test_the_requester_cannot_approve(desk: Desk, permission: Permission) -> None:
    requester = _requester(permission)
    pending = await _request(desk, permission, requester)
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth(requester))
    assert r.status_code == 422
    assert "second person" in r.json()["error"]
    # A second token of the same account, and its name spelt otherwise, are the same person.
    async with svc.unit_of_work(desk.sessions) as s:
        _, again = await service.create_token(
            s,
            f"  {requester.upper()} ",
            role=None,
            expires_at=NOW.replace(year=2027),
            label="again",
            actor="setup",
            now=NOW,
        )
    r = await desk.client.post(
        f"/api/v1/pending/{pending}/approve", headers={"Authorization": f"Bearer {again}"}
    )
    assert r.status_code == 422
    assert "second person" in r.json()["error"]


@pytest.mark.parametrize("permission", list(DUAL), ids=str)
async def test_a_second_account_approves(desk: Desk, permission: Permission) -> None:
    requester = _requester(permission)
    pending = await _request(desk, permission, requester)
    approver = _approver(permission, requester)
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth(approver))
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "approved"
    again = await desk.client.post(
        f"/api/v1/pending/{pending}/approve", headers=desk.auth(approver)
    )
    assert again.status_code == 422  # runs once
    audit = await desk.client.get(
        "/api/v1/audit", params={"limit": 20}, headers=desk.auth("auditor")
    )
    rows = [(a["actor"], a["action"]) for a in audit.json()]
    assert (requester, "dual.request") in rows
    assert (approver, "dual.approve") in rows


async def test_an_approver_needs_an_approving_role(desk: Desk) -> None:
    pending = await _request(desk, Permission.ENTRY_REFUND, "cashier")
    r = await desk.client.post(f"/api/v1/pending/{pending}/approve", headers=desk.auth("dealer"))
    assert r.status_code == 422
    assert "must be approved by" in r.json()["error"]


async def test_a_refused_request_is_refused_at_once(desk: Desk) -> None:
    """The request runs the same service first (rolled back): the rule's own words."""
    r = await desk.client.post(
        "/api/v1/entries/999999/refund",
        json={"rule": 23, "reason": "x"},
        headers=desk.auth("cashier"),
    )
    assert r.status_code == 422
    assert r.json()["error"] == "entry 999999 does not exist"
    pending = await desk.client.get("/api/v1/pending", headers=desk.auth("cashier"))
    assert pending.json() == []


async def test_names_differing_in_case_or_spaces_are_one_account(desk: Desk) -> None:
    async with svc.unit_of_work(desk.sessions) as s:
        await service.add_user(s, "Dealer Two", "dealer", PASSWORD, actor="setup", now=NOW)
    for variant in ("dealer two", " DEALER   two ", "Dealer Two"):
        with pytest.raises(OperatorError, match="already exists"):
            async with svc.unit_of_work(desk.sessions) as s:
                await service.add_user(s, variant, "dealer", PASSWORD, actor="setup", now=NOW)


async def _status(desk: Desk, pending: int) -> str:
    async with svc.unit_of_work(desk.sessions) as s:
        row = await s.get(PendingAction, pending)
        assert row is not None
        return row.status


async def _audit(desk: Desk) -> list[tuple[str, str, str]]:
    r = await desk.client.get("/api/v1/audit", params={"limit": 50}, headers=desk.auth("auditor"))
    return [(a["actor"], a["action"], a["subject"]) for a in r.json()]


@pytest.mark.parametrize("outsider", ["auditor", "dealer", "cashier"])
async def test_only_an_approver_or_the_requester_rejects(desk: Desk, outsider: str) -> None:
    """Audit 25.5: a read-only auditor or a dealer could reject another person's refund."""
    pending = await _request(desk, Permission.ENTRY_REFUND, "supervisor")
    r = await desk.client.post(f"/api/v1/pending/{pending}/reject", headers=desk.auth(outsider))
    assert r.status_code == 403, r.text
    assert "may reject entry.refund" in r.json()["error"]
    assert await _status(desk, pending) == "pending"
    ok = await desk.client.post(f"/api/v1/pending/{pending}/reject", headers=desk.auth("director"))
    assert ok.status_code == 200, ok.text
    assert ok.json()["status"] == "rejected"
    assert ("director", "dual.reject", f"pending:{pending}") in await _audit(desk)


async def test_the_requester_withdraws(desk: Desk) -> None:
    pending = await _request(desk, Permission.ENTRY_REFUND, "cashier")
    r = await desk.client.post(f"/api/v1/pending/{pending}/reject", headers=desk.auth("cashier"))
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "withdrawn"
    assert ("cashier", "dual.withdraw", f"pending:{pending}") in await _audit(desk)
    late = await desk.client.post(
        f"/api/v1/pending/{pending}/approve", headers=desk.auth("supervisor")
    )
    assert late.status_code == 422
    assert "withdrawn, not pending" in late.json()["error"]


async def test_disabling_the_requester_voids_its_pending_actions(desk: Desk) -> None:
    """Audit 25.5: a disabled account's pending action could still be approved and ran
    under its name."""
    pending = await _request(desk, Permission.ENTRY_REFUND, "cashier")
    async with svc.unit_of_work(desk.sessions) as s:
        await service.disable_user(s, "cashier", actor="admin", now=NOW)
    assert await _status(desk, pending) == "void"
    assert ("admin", "dual.void", f"pending:{pending}") in await _audit(desk)
    r = await desk.client.post(
        f"/api/v1/pending/{pending}/approve", headers=desk.auth("supervisor")
    )
    assert r.status_code == 422
    assert "void, not pending" in r.json()["error"]


@pytest.mark.parametrize(
    ("change", "words"),
    [({"disabled": True}, "is disabled"), ({"role": "dealer"}, "may no longer ask")],
    ids=["disabled", "demoted"],
)
async def test_approval_rechecks_the_requester(
    desk: Desk, change: dict[str, object], words: str
) -> None:
    """An insider flipping the account row (no void step) still cannot get it run."""
    pending = await _request(desk, Permission.ENTRY_REFUND, "cashier")
    async with svc.unit_of_work(desk.sessions) as s:
        await s.execute(update(User).where(User.name == "cashier").values(**change))
    r = await desk.client.post(
        f"/api/v1/pending/{pending}/approve", headers=desk.auth("supervisor")
    )
    assert r.status_code == 422
    assert words in r.json()["error"]
    assert await _status(desk, pending) == "pending"
