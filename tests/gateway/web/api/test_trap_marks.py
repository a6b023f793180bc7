"""A technician clears a machine's SNMP trap marks through the API, as ``reelgate bank
clear-mark`` does: the same store call, audited under the signed-in account (never a name
from the body), and errors as JSON naming the field.  The seeded desk has a door-opened
mark on A02 (conftest)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from gateway.machines.health import TrapMarks
from storage.audit import AuditEntry
from storage.marks import MarkStore
from tests.gateway.web.api.conftest import NOW, Desk

URL = "/api/v1/machines/{}/trap-marks/clear"


async def _clear(desk: Desk, machine: str, body: Any, account: str = "technician") -> Any:
    return await desk.client.post(URL.format(machine), json=body, headers=desk.auth(account))


async def _audit_count(desk: Desk) -> int:
    async with desk.sessions() as s:
        return int(await s.scalar(select(func.count()).select_from(AuditEntry)) or 0)


async def test_the_clear_is_audited_under_the_account(desk: Desk) -> None:
    marks = await TrapMarks.load(MarkStore(desk.sessions))
    assert marks.is_marked("A02")

    r = await _clear(desk, "A02", {"reason": "  door latch checked, closed  "})

    assert r.status_code == 200, r.text
    assert r.json()["machine"] == "A02"
    [mark] = r.json()["cleared"]
    assert mark["kind"] == "door-opened"
    assert mark["heat"] == ""
    assert mark["mid_heat"] is False
    assert datetime.fromisoformat(mark["at"]) == NOW - timedelta(hours=9)
    async with desk.sessions() as s:
        row = (
            await s.scalars(select(AuditEntry).where(AuditEntry.action == "machine.clear_mark"))
        ).one()
    assert (row.actor, row.subject, row.reason) == (
        "technician",
        "machine:A02",
        "door latch checked, closed",
    )
    assert row.details_dict()["marks"][0]["kind"] == "door-opened"
    # Preflight re-reads the table: the running gateway sees the machine clean.
    await marks.refresh()
    assert not marks.is_marked("A02")


async def test_a_machine_without_marks_clears_nothing_and_writes_nothing(desk: Desk) -> None:
    before = await _audit_count(desk)
    r = await _clear(desk, "A01", {"reason": "checked anyway"})
    assert r.status_code == 200, r.text
    assert r.json() == {"machine": "A01", "cleared": []}
    assert await _audit_count(desk) == before


async def test_a_machine_not_on_the_floor_is_404(desk: Desk) -> None:
    r = await _clear(desk, "Z99", {"reason": "checked"})
    assert r.status_code == 404
    assert r.json()["error"] == "machine Z99: not on the floor"


@pytest.mark.parametrize(
    ("machine", "body", "field"),
    [
        ("A02", {}, "reason"),
        ("A02", {"reason": ""}, "reason"),
        ("A02", {"reason": "   "}, "reason"),
        ("A02", {"reason": "x" * 2001}, "reason"),
        ("A02", {"reason": "line\nbreak"}, "reason"),
        ("A02", {"reason": 5}, "reason"),
        ("A02", {"reason": "checked", "actor": "someone else"}, "actor"),
        ("-A02", {"reason": "checked"}, "machine_id"),
        ("A" * 33, {"reason": "checked"}, "machine_id"),
    ],
)
async def test_bad_input_names_the_field_and_clears_nothing(
    desk: Desk, machine: str, body: Any, field: str
) -> None:
    r = await _clear(desk, machine, body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}: "), r.json()
    assert [m.machine_id for m in await MarkStore(desk.sessions).load()] == ["A02"]


async def test_only_the_technician_may_clear(desk: Desk) -> None:
    for account in ("director", "supervisor", "auditor", "admin"):
        r = await _clear(desk, "A02", {"reason": "checked"}, account=account)
        assert r.status_code == 403, account
        assert r.json()["error"] == f"permission: role {account} may not bank.clear-mark"
    assert [m.machine_id for m in await MarkStore(desk.sessions).load()] == ["A02"]
