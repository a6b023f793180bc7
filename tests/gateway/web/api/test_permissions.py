"""Generated from the permission table: every endpoint that names a permission answers
401 without credentials, 403 to each role the table leaves out, and succeeds for a role
it lists — on SQLite and, when configured, PostgreSQL (the ``engine`` fixture)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from gateway.accounts import roles_doc, service
from gateway.accounts.roles import PERMISSIONS, Permission, Role
from gateway.web.api import create_app
from storage.accounts import user_by_name
from tests.gateway.web.api import director_samples, hotseat_samples, team_samples, walkup_samples
from tests.gateway.web.api.conftest import NOW, Desk

S9 = "/api/v1/super9"
DRAWING = "/api/v1/super9/sessions/{key}"
SECTION = {"name": "Pieter Botha", "id": "7505055123080", "contact": "082 555 0101"}
SUPER9: dict[tuple[str, str], Any] = {
    ("get", f"{S9}/calendar"): lambda d: (f"{S9}/calendar", None),
    ("post", f"{S9}/calendar"): lambda d: (
        f"{S9}/calendar",
        {"at": "2026-11-27T19:00:00+02:00", "reason": "festival"},
    ),
    ("post", f"{S9}/sessions"): lambda d: (
        f"{S9}/sessions",
        {"starts_at": "2026-11-18T21:00:00+02:00"},
    ),
    ("get", DRAWING): lambda d: (f"{S9}/sessions/{d.ids['s9_closed']}", None),
    ("post", f"{DRAWING}/close"): lambda d: (f"{S9}/sessions/{d.ids['s9_drawing']}/close", None),
    ("get", f"{DRAWING}/spins"): lambda d: (f"{S9}/sessions/{d.ids['s9_closed']}/spins", None),
    ("post", f"{DRAWING}/spins"): lambda d: (
        f"{S9}/sessions/{d.ids['s9_drawing']}/spins",
        {"game": 1, "number": 10},
    ),
    ("post", f"{DRAWING}/voids"): lambda d: (
        f"{S9}/sessions/{d.ids['s9_drawing']}/voids",
        {"game": 7, "reason": "rule 18.1: the ball left the wheel"},
    ),
    ("post", f"{DRAWING}/manual-spins"): lambda d: (
        f"{S9}/sessions/{d.ids['s9_drawing']}/manual-spins",
        {"number": 11, "confirm": 11, "reason": "rule 29: the wheel feed is down"},
    ),
    ("post", f"{DRAWING}/claims"): lambda d: (
        f"{S9}/sessions/{d.ids['s9_drawing']}/claims",
        {"ticket": "D1", "duplicate": "10 11 12 13 14 15 16 17 18"},
    ),
    ("get", f"{S9}/jackpot"): lambda d: (f"{S9}/jackpot", None),
    ("post", f"{S9}/tickets"): lambda d: (
        f"{S9}/tickets",
        {"ticket": "S3", "player": "7505055123080"},
    ),
    ("post", f"{S9}/tickets/{{serial}}/hand-in"): lambda d: (
        f"{S9}/tickets/S1/hand-in",
        {"numbers": "0 5 9 14 20 22 27 31 36", **SECTION, "signed": True},
    ),
    ("post", f"{S9}/tickets/{{serial}}/numbers"): lambda d: (
        f"{S9}/tickets/S2/numbers",
        {"numbers": "2 3 4 5 6 7 8 9 10", "reason": "rule 23: the player asked before the game"},
    ),
    ("post", f"{S9}/tickets/{{serial}}/disqualify"): lambda d: (
        f"{S9}/tickets/S2/disqualify",
        {"rule": 21, "reason": "scratched"},
    ),
    ("post", f"{DRAWING}/prizes/{{serial}}/receipt"): lambda d: (
        f"{S9}/sessions/{d.ids['s9_closed']}/prizes/C1/receipt",
        {"kind": d.texts["s9_prize"], "signature": "receipt 0001", "signer": "8001015009087"},
    ),
}

TECHNICIAN: dict[tuple[str, str], Any] = {
    ("post", "/api/v1/banks/{bank}/check"): lambda d: ("/api/v1/banks/A/check", None),
    ("post", "/api/v1/banks/{bank}/enable"): lambda d: ("/api/v1/banks/A/enable", {}),
    ("post", "/api/v1/banks/{bank}/disable"): lambda d: ("/api/v1/banks/A/disable", None),
    ("post", "/api/v1/banks/{bank}/machines"): lambda d: (
        "/api/v1/banks/A/machines",
        {"machine": "A04", "endpoint": "sas+tcp://127.0.0.1:9404?address=1"},
    ),
    ("post", "/api/v1/machines/{machine_id}/move"): lambda d: (
        "/api/v1/machines/A03/move",
        {"to": "B"},
    ),
}
# These talk to the machines: without a running gateway (this app) they answer 503,
# naming why; tests/integration/console/test_api_technician.py runs them on one.
NEEDS_GATEWAY = {("post", p) for p in ("/api/v1/banks/{bank}/check",
                                        "/api/v1/banks/{bank}/enable",
                                        "/api/v1/banks/{bank}/disable")}  # fmt: skip
CASHIER: dict[tuple[str, str], Any] = {
    ("get", "/api/v1/players"): lambda d: ("/api/v1/players?q=Botha", None),
    ("post", "/api/v1/exclusions/imports"): lambda d: (
        "/api/v1/exclusions/imports",
        {
            "source": "national register 2026-11",
            "rows": [
                {"kind": "self-exclusion", "id_number": "6001015009082", "valid_from": "2026-01-01"}
            ],
        },
    ),
    ("post", "/api/v1/tournaments/{ref}/disqualifications"): lambda d: (
        "/api/v1/tournaments/Spring/disqualifications",
        {"player": "7505055123080", "rule": 23, "reason": "abusive to staff"},
    ),
    ("get", "/api/v1/tournaments/{ref}/entries"): lambda d: (
        "/api/v1/tournaments/Spring/entries",
        None,
    ),
    ("get", f"{S9}/settings"): lambda d: (f"{S9}/settings", None),
    ("patch", f"{S9}/settings"): lambda d: (
        f"{S9}/settings",
        {"changes": {"buy_in_cents": 6000}, "reason": "new price from December"},
    ),
    ("get", f"{DRAWING}/wheel"): lambda d: (f"{S9}/sessions/{d.ids['s9_drawing']}/wheel", None),
}

ACCOUNTS: dict[tuple[str, str], Any] = {
    ("get", "/api/v1/users"): lambda d: ("/api/v1/users", None),
    ("post", "/api/v1/users/{key}/disable"): lambda d: (
        f"/api/v1/users/{d.ids['user:director2']}/disable",
        None,
    ),
    ("post", "/api/v1/users/{key}/enable"): lambda d: (
        f"/api/v1/users/{d.ids['user:director2']}/enable",
        None,
    ),
}


async def _director2(d: Desk, *, disabled: bool) -> None:
    async with d.sessions() as s, s.begin():
        user = await user_by_name(s, "director2")
        assert user is not None
        d.ids["user:director2"] = user.id
        if disabled:
            await service.disable_user(s, "director2", actor="setup", now=NOW)


# One valid request per endpoint: (path with the seeded ids filled in, JSON body).
SAMPLES: dict[tuple[str, str], Any] = {
    ("get", "/api/v1/tournaments"): lambda d: ("/api/v1/tournaments", None),
    ("post", "/api/v1/tournaments"): lambda d: ("/api/v1/tournaments", {"name": "Autumn"}),
    ("get", "/api/v1/tournaments/{ref}/settings"): lambda d: (
        "/api/v1/tournaments/Spring/settings",
        None,
    ),
    ("patch", "/api/v1/tournaments/{ref}/settings"): lambda d: (
        "/api/v1/tournaments/Spring/settings",
        {"changes": {"prize_places": 5}, "reason": "more prizes"},
    ),
    ("get", "/api/v1/tournaments/{ref}/heats"): lambda d: (
        "/api/v1/tournaments/Spring/heats",
        None,
    ),
    ("post", "/api/v1/tournaments/{ref}/heats"): lambda d: (
        "/api/v1/tournaments/Spring/heats",
        {
            "starts_at": "2026-11-22T12:00:00+02:00",
            "bank": "A",
            "duration_seconds": 600,
            "starting_credits": 1000,
        },
    ),
    ("get", "/api/v1/tournaments/{ref}/standings"): lambda d: (
        "/api/v1/tournaments/Spring/standings",
        None,
    ),
    ("get", "/api/v1/tournaments/{ref}/qualifiers"): lambda d: (
        "/api/v1/tournaments/Spring/qualifiers",
        None,
    ),
    ("get", "/api/v1/players/{ref}"): lambda d: ("/api/v1/players/8001015009087", None),
    ("get", "/api/v1/cards"): lambda d: ("/api/v1/cards", None),
    ("post", "/api/v1/players"): lambda d: (
        "/api/v1/players",
        {"id_number": "8001015009111", "name": "New Player", "date_of_birth": "1980-01-01"},
    ),
    ("post", "/api/v1/disqualifications/{key}/reinstate"): lambda d: (
        f"/api/v1/disqualifications/{d.ids['disqualification']}/reinstate",
        {"reason": "appeal upheld"},
    ),
    ("post", "/api/v1/tournaments/{ref}/entries"): lambda d: (
        "/api/v1/tournaments/Spring/entries",
        {"player": "7505055123080"},
    ),
    ("post", "/api/v1/entries/{key}/refund"): lambda d: (
        f"/api/v1/entries/{d.ids['spare_entry']}/refund",
        {"rule": 23, "reason": "goodwill"},
    ),
    ("post", "/api/v1/heats/{key}/seats"): lambda d: (
        f"/api/v1/heats/{d.ids['heat']}/seats",
        {"player": "7505055123080"},
    ),
    ("get", "/api/v1/heats/{key}/seats"): lambda d: (f"/api/v1/heats/{d.ids['heat']}/seats", None),
    ("post", "/api/v1/seats/{key}/manual-score"): lambda d: (
        f"/api/v1/seats/{d.ids['scored_seat']}/manual-score",
        {
            "credits": 1500,
            "games_played": 80,
            "games_won": 20,
            "credits_wagered": 400,
            "credits_won": 900,
            "reason": "link lost; read off the machine",
        },
    ),
    ("get", "/api/v1/banks"): lambda d: ("/api/v1/banks", None),
    ("post", "/api/v1/banks/{bank}/orders"): lambda d: (
        "/api/v1/banks/A/orders",
        {"order": "pause"},
    ),
    ("post", "/api/v1/machines/{machine_id}/trap-marks/clear"): lambda d: (
        "/api/v1/machines/A02/trap-marks/clear",
        {"reason": "door latch checked, closed"},
    ),
    **TECHNICIAN,
    **CASHIER,
    ("get", "/api/v1/audit"): lambda d: ("/api/v1/audit", None),
    ("post", "/api/v1/audit/verify"): lambda d: ("/api/v1/audit/verify", None),
    ("get", "/api/v1/cashup"): lambda d: ("/api/v1/cashup?date=2026-11-18", None),
    **SUPER9,
    **ACCOUNTS,
    **director_samples.SAMPLES,
    **team_samples.SAMPLES,
    **hotseat_samples.SAMPLES,
    **walkup_samples.SAMPLES,
}
# The scene a sample needs before it can succeed (the seeded desk has not got it).
PREPARE: dict[tuple[str, str], director_samples.Scene] = {
    **director_samples.PREPARE,
    **team_samples.PREPARE,
    **hotseat_samples.PREPARE,
    **walkup_samples.PREPARE,
    ("post", "/api/v1/users/{key}/disable"): partial(_director2, disabled=False),
    ("post", "/api/v1/users/{key}/enable"): partial(_director2, disabled=True),
}


def _guarded() -> list[tuple[str, str, Permission]]:
    spec = create_app(None).openapi()  # type: ignore[arg-type]
    return [
        (method, path, Permission(op["x-permission"]))
        for path, ops in spec["paths"].items()
        for method, op in ops.items()
        if "x-permission" in op
    ]


GUARDED = _guarded()


def test_every_guarded_endpoint_has_a_sample() -> None:
    assert {(m, p) for m, p, _ in GUARDED} == set(SAMPLES)


def test_docs_roles_md_is_generated_from_the_table() -> None:
    # Out of date: ``python -m gateway.accounts.roles_doc`` rewrites it.
    assert roles_doc.DOC.read_text(encoding="utf-8") == roles_doc.render()


@pytest.mark.parametrize(("method", "path", "permission"), GUARDED, ids=lambda v: str(v))
async def test_endpoint_permissions(desk: Desk, method: str, path: str, permission: str) -> None:
    if (method, path) in PREPARE:
        await PREPARE[(method, path)](desk)
    url, body = SAMPLES[(method, path)](desk)
    allowed = PERMISSIONS[Permission(permission)]

    async def call(headers: dict[str, str]) -> int:
        r = await desk.client.request(method.upper(), url, json=body, headers=headers)
        return r.status_code

    assert await call({}) == 401
    assert await call({"Authorization": "Bearer rg_not-a-token"}) == 401
    for role in Role:
        if role not in allowed:
            assert await call(desk.auth(role.value)) == 403, role
    first = sorted(allowed)[0]
    r = await desk.client.request(method.upper(), url, json=body, headers=desk.auth(first.value))
    if (method, path) in NEEDS_GATEWAY:
        assert r.status_code == 503, r.text
        assert "runs without the gateway" in r.json()["error"]
        return
    assert 200 <= r.status_code < 300, r.text
    if method != "get":
        audit = await desk.client.get(
            "/api/v1/audit", params={"limit": 3}, headers=desk.auth("auditor")
        )
        # The write is audited under the authenticated account, never a name from the body.
        assert audit.json()[-1]["actor"] == first.value
