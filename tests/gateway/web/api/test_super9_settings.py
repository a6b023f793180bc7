"""The Super 9 settings through the API, as ``reelgate super9 settings|set``: read by the
promotion's staff, changed by the Promotion Director with a reason (audited before and
after, the rules' checks refusing a bad value: S9-14 a jackpot window below nine spins
could never be won), and a session's wheel feed: whether it takes results now and the
last one it posted.  Seeded desk (conftest): session ``s9_drawing`` drawing, none spun;
``s9_closed`` closed after nine wheel results."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import select

from gateway.super9.rules.settings import Super9Settings
from gateway.web.api.super9_settings_models import Super9Changes, Super9SettingsOut
from storage.audit import AuditEntry
from tests.gateway.web.api.conftest import NOW, Desk

S9 = "/api/v1/super9"


async def _patch(desk: Desk, body: Any, account: str = "promotion-director") -> Any:
    return await desk.client.patch(f"{S9}/settings", json=body, headers=desk.auth(account))


def test_the_models_carry_every_setting() -> None:
    names = set(Super9Settings().to_json())
    assert set(Super9SettingsOut.model_fields) == names
    assert set(Super9Changes.model_fields) == names


async def test_the_settings_are_read_by_the_promotions_staff(desk: Desk) -> None:
    r = await desk.client.get(f"{S9}/settings", headers=desk.auth("dealer"))
    assert r.status_code == 200, r.text
    assert r.json() == Super9Settings().to_json()


async def test_the_promotion_director_changes_a_setting_with_a_reason(desk: Desk) -> None:
    body = {"changes": {"buy_in_cents": 6000, "repeat_rule": "count-every-spin"},
            "reason": "new price from December"}  # fmt: skip
    r = await _patch(desk, body)
    assert r.status_code == 200, r.text
    assert r.json()["buy_in_cents"] == 6000
    assert r.json()["repeat_rule"] == "count-every-spin"
    assert r.json()["jackpot_spins"] == 18  # unchanged
    again = await desk.client.get(f"{S9}/settings", headers=desk.auth("auditor"))
    assert again.json() == r.json()
    async with desk.sessions() as s:
        entry = await s.scalar(select(AuditEntry).where(AuditEntry.action == "super9.settings"))
    assert entry is not None
    assert (entry.actor, entry.reason) == ("promotion-director", "new price from December")
    assert entry.details_dict()["before"] == {
        "buy_in_cents": 5000,
        "repeat_rule": "disregard-repeats",
    }


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"changes": {"jackpot_spins": 8}, "reason": "shorter"},
         "settings: jackpot_spins below 9 could never be won (rule 14)"),
        ({"changes": {"buy_in_cents": 0}, "reason": "free"},
         "settings: buy_in_cents must be positive"),
        ({"changes": {"timezone": "Mars/Olympus"}, "reason": "move"},
         "settings: timezone 'Mars/Olympus' is not an IANA zone name"),
        ({"changes": {}, "reason": "nothing"}, "changes: name at least one setting to change"),
    ],
)  # fmt: skip
async def test_a_refused_change_changes_nothing(desk: Desk, body: Any, error: str) -> None:
    r = await _patch(desk, body)
    assert r.status_code == 422, r.text
    assert r.json()["error"] == error
    now = await desk.client.get(f"{S9}/settings", headers=desk.auth("dealer"))
    assert now.json() == Super9Settings().to_json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"changes": {"buy_in_cents": 6000}}, "reason"),
        ({"changes": {"jackpot": 1}, "reason": "x"}, "changes.jackpot"),
        ({"changes": {"leftovers": "charity"}, "reason": "x"}, "changes.leftovers"),
        ({"changes": {"buy_in_cents": 2**63}, "reason": "x"}, "changes.buy_in_cents"),
        ({"changes": {"verification_fields": ["name", "shoe size"]}, "reason": "x"},
         "changes.verification_fields.1"),
    ],
)  # fmt: skip
async def test_bad_settings_fields_are_named(desk: Desk, body: Any, field: str) -> None:
    r = await _patch(desk, body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}: "), r.json()


async def test_settings_are_the_promotion_directors(desk: Desk) -> None:
    body = {"changes": {"buy_in_cents": 6000}, "reason": "x"}
    for account in ("supervisor", "dealer", "cashier", "director"):
        r = await _patch(desk, body, account)
        assert r.status_code == 403
        assert r.json()["error"] == f"permission: role {account} may not super9.settings"
    r = await desk.client.get(f"{S9}/settings", headers=desk.auth("technician"))
    assert r.status_code == 403
    assert r.json()["error"] == "permission: role technician may not super9.read"


async def test_the_wheel_feed_of_a_drawing_session(desk: Desk) -> None:
    key = desk.ids["s9_drawing"]
    r = await desk.client.get(f"{S9}/sessions/{key}/wheel", headers=desk.auth("dealer"))
    assert r.status_code == 200, r.text
    assert r.json()["taking_results"] is True
    assert r.json()["wheel_spins"] == 0
    assert r.json()["last_game"] is None
    posted = await desk.client.post(
        f"{S9}/sessions/{key}/spins", json={"game": 4, "number": 12}, headers=desk.auth("dealer")
    )
    assert posted.status_code == 201, posted.text
    r = await desk.client.get(f"{S9}/sessions/{key}/wheel", headers=desk.auth("supervisor"))
    status = r.json()
    assert (status["status"], status["wheel_spins"], status["manual_spins"]) == ("drawing", 1, 0)
    assert (status["last_game"], status["last_number"]) == (4, 12)
    assert datetime.fromisoformat(status["last_result_at"]) == NOW  # the API's clock


async def test_a_closed_session_takes_no_wheel_results(desk: Desk) -> None:
    key = desk.ids["s9_closed"]
    r = await desk.client.get(f"{S9}/sessions/{key}/wheel", headers=desk.auth("auditor"))
    assert r.status_code == 200, r.text
    assert r.json()["taking_results"] is False
    assert (r.json()["status"], r.json()["wheel_spins"], r.json()["last_number"]) == (
        "closed",
        9,
        9,
    )


async def test_the_wheel_of_an_unknown_session(desk: Desk) -> None:
    r = await desk.client.get(f"{S9}/sessions/99999/wheel", headers=desk.auth("dealer"))
    assert r.status_code == 422
    assert r.json()["error"] == "session 99999 does not exist"
    r = await desk.client.get(f"{S9}/sessions/0/wheel", headers=desk.auth("dealer"))
    assert r.status_code == 422
    assert r.json()["error"].startswith("key: ")
    r = await desk.client.get(f"{S9}/sessions/1/wheel", headers=desk.auth("technician"))
    assert r.status_code == 403
