"""A Super 9 write keyed from paper over the API (``keyed_at``, ``keyed_reason``): the
CLI's ``--now`` judged by the same policy (gateway.clocks.policy) against the server's
clock.  Post-dated: refused.  Back-dated: only a promotion director's account, with a
reason, and never past the real time's S9-6 cut-offs; a cashier's back-dated sale is
refused in one line and changes nothing.  A training database takes any keyed time (the
e2e night's Super 9 session), and the audit rows carry the keyed and the real time."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from storage.audit import AuditEntry
from storage.super9 import Super9Ticket
from tests.gateway.web.api.conftest import Desk

S9 = "/api/v1/super9"
TODAY = "2026-11-20"  # the desk's clock: Friday 20 November 10:00, venue time


def _api(desk: Desk) -> Any:
    return desk.client._transport.app.state.api  # type: ignore[attr-defined]


async def _tickets(desk: Desk) -> int:
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(Super9Ticket)) or 0


async def _sell(desk: Desk, serial: str, keyed: str | None, reason: str | None = None) -> Any:
    body: dict[str, Any] = {"ticket": serial, "player": "8001015009087", "tender": "card"}
    if keyed is not None:
        body["keyed_at"] = keyed
    if reason is not None:
        body["keyed_reason"] = reason
    return await desk.client.post(f"{S9}/tickets", json=body, headers=desk.auth("cashier"))


async def test_s9_6b_a_live_sale_and_refused_keyed_ones_change_nothing(desk: Desk) -> None:
    """S9-5/S9-6b: no keyed_at, or one within the skew: the sale is live.  A post-dated
    sale and a cashier's back-dated one are refused, naming keyed_at, nothing saved."""
    before = await _tickets(desk)
    live = await _sell(desk, "K1", f"{TODAY}T10:01:00+02:00")
    assert live.status_code == 201, live.text
    later = await _sell(desk, "K2", f"{TODAY}T12:00:00+02:00")
    assert later.status_code == 422
    assert "post-dated writes are refused" in later.json()["error"]
    back = await _sell(desk, "K3", f"{TODAY}T09:00:00+02:00", "keyed from the till roll")
    assert back.status_code == 422
    error = back.json()["error"]
    assert error.startswith("keyed_at 2026-11-20T09:00+02:00 is before the real time"), error
    assert "promotion director's account (role cashier may not)" in error
    assert await _tickets(desk) == before + 1


async def test_s9_4_a_back_dated_calendar_change_needs_a_reason(desk: Desk) -> None:
    """S9-4: the promotion director keys yesterday's one-off session addition from the
    paper log, with a reason; the audit row carries the keyed and the real time."""
    body = {"at": f"{TODAY}T21:00:00+02:00", "reason": "festival encore",
            "keyed_at": "2026-11-19T16:00:00+02:00"}  # fmt: skip
    auth = desk.auth("promotion-director")
    bare = await desk.client.post(f"{S9}/calendar", json=body, headers=auth)
    assert bare.status_code == 422
    assert bare.json()["error"].startswith("keyed_reason: a back-dated write needs a reason")
    body["keyed_reason"] = "keyed from yesterday's log"
    r = await desk.client.post(f"{S9}/calendar", json=body, headers=auth)
    assert r.status_code == 201, r.text
    async with desk.sessions() as s:
        row = await s.scalar(
            select(AuditEntry).where(AuditEntry.action.like("super9.calendar%"))
            .order_by(AuditEntry.id.desc())
        )  # fmt: skip
    assert row is not None
    clock = row.details_dict()["clock"]
    assert clock["kind"] == "back-dated", clock
    assert clock["keyed_at"].startswith("2026-11-19T16:00"), clock
    assert clock["reason"] == "keyed from yesterday's log", clock


async def test_s9_6c_a_training_database_takes_any_keyed_time(desk: Desk) -> None:
    """A training database (the night's rehearsal): the sale, the hand-in and the
    opening keyed from paper at their own times, by the roles that make them."""
    _api(desk).training = True
    day = "2026-11-22"  # Sunday: sessions at 15:00 and 17:00 (S9-4)
    sold = await _sell(desk, "R1", f"{day}T09:00:00+02:00")
    assert sold.status_code == 201, sold.text
    handed = await desk.client.post(
        f"{S9}/tickets/R1/hand-in",
        json={"numbers": "0 5 9 14 20 22 27 31 36", "name": "Thandi Mokoena",
              "id": "8001015009087", "contact": "082", "signed": True,
              "keyed_at": f"{day}T09:30:00+02:00"},
        headers=desk.auth("desk"),
    )  # fmt: skip
    assert handed.status_code == 201, handed.text
    opened = await desk.client.post(
        f"{S9}/sessions",
        json={"starts_at": f"{day}T15:00:00+02:00", "keyed_at": f"{day}T14:50:00+02:00"},
        headers=desk.auth("supervisor"),
    )
    assert opened.status_code == 201, opened.text
    assert opened.json()["session"] == sold.json()["session"] == handed.json()["session"]
