"""The technician's bank check, enable and disable through the API of a running gateway
(``reelgate serve --http``) on emulated machines: the same floor control as the console's
technician page, so a blocked machine (an open door) refuses the enable in one line until
it is left out with a reason, and every change is audited under the token's account."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select

from gateway.accounts import service
from gateway.app.cli import main
from gateway.app.context import GatewayContext
from gateway.tournament.services import unit_of_work
from storage.audit import AuditEntry
from storage.floor import FloorBank, FloorMachine

from .conftest import ConsoleGateway, Prepare

TOKENS: dict[str, str] = {}


async def _tokens(ctx: GatewayContext) -> None:
    now = datetime.now(UTC)
    async with unit_of_work(ctx.sessions) as s:
        for name in ("technician", "cashier"):
            _, TOKENS[name] = await service.create_token(
                s, name, role=None, expires_at=now + timedelta(days=1), label="api",
                actor="setup", now=now,
            )  # fmt: skip


async def _floor(gw: ConsoleGateway) -> tuple[bool, dict[str, str | None], list[str]]:
    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            bank = await s.get(FloorBank, "A")
            assert bank is not None
            machines = {m: await s.get(FloorMachine, m) for m in ("A-001", "A-002", "A-003")}
            actors = list(
                await s.scalars(select(AuditEntry.actor).where(AuditEntry.action.like("bank.%")))
            )
            return (
                bank.enabled,
                {k: v.excluded_reason if v else None for k, v in machines.items()},
                actors,
            )
    finally:
        await ctx.close()


async def test_check_enable_and_disable_through_the_gateways_api(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gw = await start_gateway(_tokens)
    api = gw.url.removesuffix("/console") + "/api/v1"
    door = gw.bank.machines[1].machine
    door.open_slot_door()
    tech = {"Authorization": f"Bearer {TOKENS['technician']}"}
    async with httpx.AsyncClient(base_url=api, timeout=30) as client:
        r = await client.post(
            "/banks/A/check", headers={"Authorization": f"Bearer {TOKENS['cashier']}"}
        )
        assert r.status_code == 403
        assert r.json()["error"] == "permission: role cashier may not heat.direct"

        r = await client.post("/banks/A/check", headers=tech)
        assert r.status_code == 200, r.text
        found = {m["machine"]: m for m in r.json()["machines"]}
        assert r.json()["ready"] is False
        assert found["A-001"]["ready"] is True
        assert found[door.machine_id]["ready"] is False
        assert any("door" in b for b in found[door.machine_id]["blockers"])

        # The blocked machine refuses the enable, in one line; nothing changes.
        r = await client.post("/banks/A/enable", json={}, headers=tech)
        assert r.status_code == 422, r.text
        assert f"{door.machine_id} blocked" in r.json()["error"]
        assert (await _floor(gw))[0] is False

        exclude = {door.machine_id: "door lock broken"}
        r = await client.post("/banks/A/enable", json={"exclude": exclude}, headers=tech)
        assert r.status_code == 200, r.text
        assert r.json()["ready"] is True
        assert sorted(m["machine"] for m in r.json()["machines"]) == ["A-001", "A-003"]
        enabled, excluded, actors = await _floor(gw)
        assert enabled is True
        assert excluded == {"A-001": None, "A-002": "door lock broken", "A-003": None}
        assert actors
        assert set(actors) == {"technician"}

        r = await client.post("/banks/A/disable", headers=tech)
        assert r.status_code == 200, r.text
        assert r.json()["stuck"] == []
        assert set(r.json()["back_in_play"]) == {"A-001", "A-002", "A-003"}
        assert (await _floor(gw))[0] is False

        # The CLI on a desk host checks the same way, with the token (--server).
        monkeypatch.setenv("REELGATE_TOKEN", TOKENS["technician"])
        capsys.readouterr()
        argv = ["bank", "check", "A", "--server", api, "--json"]
        assert await asyncio.to_thread(main, argv) == 1  # a machine is blocked
        checked = json.loads(capsys.readouterr().out)
        assert [m["ready"] for m in checked["machines"]] == [True, False, True]

        r = await client.post("/banks/Z/check", headers=tech)
        assert r.status_code == 404
        assert r.json()["error"] == "bank Z: not on the floor"
