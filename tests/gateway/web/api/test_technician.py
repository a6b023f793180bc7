"""The technician's endpoints on an API without a gateway (``reelgate api``): the floor's
rows change here (add-machine, move-machine, as ``reelgate bank``: stored and audited
under the token's account, a bad endpoint never stored); checking, enabling and
disabling a bank talk to its machines, so here they refuse in one line — 503 without a
gateway, 409 for a bank another process drives.  On a running gateway:
tests/integration/console/test_api_technician.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from sqlalchemy import select

from gateway.heats.preflight import MachineCheck
from gateway.web import console
from gateway.web.console.control import BankResult, MachineLive
from storage.audit import AuditEntry
from storage.floor import FloorBank, FloorMachine
from storage.journal import Journal
from tests.gateway.web.api.conftest import Desk

DRIVES = ("check", "enable", "disable")


async def _post(desk: Desk, url: str, body: Any = None, account: str = "technician") -> Any:
    return await desk.client.post(f"/api/v1{url}", json=body, headers=desk.auth(account))


async def _machine(desk: Desk, machine: str) -> FloorMachine | None:
    async with desk.sessions() as s:
        return await s.get(FloorMachine, machine)


async def _audit(desk: Desk, action: str) -> list[AuditEntry]:
    async with desk.sessions() as s:
        return list(await s.scalars(select(AuditEntry).where(AuditEntry.action == action)))


@pytest.mark.parametrize("action", DRIVES)
async def test_alone_the_api_says_where_the_bank_is_driven(desk: Desk, action: str) -> None:
    r = await _post(desk, f"/banks/A/{action}", {} if action == "enable" else None)
    assert r.status_code == 503, r.text
    assert r.json()["error"].startswith("bank A: this API runs without the gateway (reelgate api)")


class _OtherProcess:
    """A gateway that serves other banks: bank A's lease is held elsewhere."""

    def drives(self, bank: str) -> bool:
        return False

    def live(self, bank: str) -> Mapping[str, MachineLive]:
        return {}

    def last_check(self, bank: str) -> Sequence[MachineCheck] | None:
        return None

    async def check(self, bank: str) -> Sequence[MachineCheck]:
        raise AssertionError("a bank this gateway does not drive is never checked")

    async def enable(self, bank: str, exclusions: Mapping[str, str], actor: str) -> BankResult:
        raise AssertionError("never enabled here")

    async def disable(self, bank: str, actor: str) -> BankResult:
        raise AssertionError("never disabled here")


@pytest.mark.parametrize("action", DRIVES)
async def test_a_bank_another_process_drives_is_409(desk: Desk, action: str) -> None:
    transport = desk.client._transport
    assert hasattr(transport, "app")
    console.attach(transport.app, control=_OtherProcess())
    r = await _post(desk, f"/banks/A/{action}", {} if action == "enable" else None)
    assert r.status_code == 409, r.text
    assert "not driven by this gateway (another process holds its lease)" in r.json()["error"]


@pytest.mark.parametrize("action", DRIVES)
async def test_bank_drives_are_the_directors_and_technicians(desk: Desk, action: str) -> None:
    for account in ("cashier", "auditor", "admin"):
        r = await _post(desk, f"/banks/A/{action}", {}, account=account)
        assert r.status_code == 403
        assert r.json()["error"] == f"permission: role {account} may not heat.direct"


async def test_an_unknown_bank_is_404(desk: Desk) -> None:
    r = await _post(desk, "/banks/Z/check")
    assert r.status_code == 404
    assert r.json()["error"] == "bank Z: not on the floor"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"exclude": {"A02": ""}}, "exclude.A02"),
        ({"exclude": {"A02": "   "}}, "exclude.A02"),
        ({"exclude": {"-bad": "broken"}}, "exclude.-bad"),
        ({"exclude": ["A02"]}, "exclude"),
        ({"actor": "someone"}, "actor"),
    ],
)
async def test_enable_bad_exclusions_name_the_field(desk: Desk, body: Any, field: str) -> None:
    r = await _post(desk, "/banks/A/enable", body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}"), r.json()


async def test_add_machine_is_stored_and_audited_under_the_account(desk: Desk) -> None:
    body = {"machine": "A04", "endpoint": "sas+tcp://127.0.0.1:9404?address=1"}
    r = await _post(desk, "/banks/A/machines", body)
    assert r.status_code == 201, r.text
    assert r.json() == {
        "machine": "A04",
        "bank": "A",
        "position": 4,
        "endpoint": "sas+tcp://127.0.0.1:9404?address=1",
        "snmp": None,
        "aft_pos_id": None,
    }
    row = await _machine(desk, "A04")
    assert row is not None
    assert (row.bank_name, row.position) == ("A", 4)
    [entry] = await _audit(desk, "floor.add-machine")
    assert (entry.actor, entry.subject) == ("technician", "machine:A04")


async def test_a_new_bank_is_made_disabled(desk: Desk) -> None:
    body = {"machine": "B01", "endpoint": "sas+tcp://127.0.0.1:9501?address=1"}
    r = await _post(desk, "/banks/B/machines", body)
    assert r.status_code == 201, r.text
    async with desk.sessions() as s:
        bank = await s.get(FloorBank, "B")
    assert bank is not None
    assert bank.enabled is False


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            {"machine": "A01", "endpoint": "sas+tcp://127.0.0.1:9401?address=1"},
            "machine 'A01' already on the floor (use move)",
        ),
        (
            {"machine": "A05", "endpoint": "ftp://127.0.0.1:21"},
            "machine A05: endpoint 'ftp://127.0.0.1:21' has an unknown scheme",
        ),
        (
            {"machine": "A05", "endpoint": "sas+tcp://127.0.0.1:9405",
             "snmp": "udp://127.0.0.1:161?version=2c&community=public"},
            "--snmp: no passphrase or community here",
        ),
        (
            {"machine": "A05", "endpoint": "sas+tcp://127.0.0.1:9405", "aft_pos_id": 7},
            "add-machine: aft_registration_key missing",
        ),
        (
            {"machine": "A05", "endpoint": "sas+tcp://127.0.0.1:9405",
             "aft_registration_key": "12", "aft_pos_id": 7},
            "add-machine: aft_registration_key must be 40 hex digits",
        ),
    ],
)  # fmt: skip
async def test_add_machine_refusals_store_nothing(desk: Desk, body: Any, error: str) -> None:
    r = await _post(desk, "/banks/A/machines", body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error), r.json()
    assert await _machine(desk, "A05") is None
    assert await _audit(desk, "floor.add-machine") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"machine": "-x", "endpoint": "sas+tcp://127.0.0.1:1"}, "machine"),
        ({"machine": "A06", "endpoint": "no scheme"}, "endpoint"),
        ({"machine": "A06", "endpoint": "sas+tcp://h:1/" + "x" * 300}, "endpoint"),
        ({"machine": "A06"}, "endpoint"),
        ({"machine": "A06", "endpoint": "sas+tcp://h:1", "aft_pos_id": -1}, "aft_pos_id"),
    ],
)
async def test_add_machine_bad_fields_are_named(desk: Desk, body: Any, field: str) -> None:
    r = await _post(desk, "/banks/A/machines", body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(f"{field}: "), r.json()


async def test_move_machine_to_another_bank_and_endpoint(desk: Desk) -> None:
    body = {"to": "B", "endpoint": "sas+tcp://127.0.0.1:9601?address=2"}
    r = await _post(desk, "/machines/A03/move", body)
    assert r.status_code == 200, r.text
    assert r.json()["bank"] == "B"
    assert r.json()["position"] == 1
    row = await _machine(desk, "A03")
    assert row is not None
    assert (row.bank_name, row.endpoint) == ("B", "sas+tcp://127.0.0.1:9601?address=2")
    [entry] = await _audit(desk, "floor.move-machine")
    assert entry.actor == "technician"


@pytest.mark.parametrize(
    ("machine", "body", "error"),
    [
        ("A03", {}, "move-machine: give to (a bank) and/or endpoint"),
        ("Z99", {"to": "B"}, "machine 'Z99' is not on the floor"),
        ("A03", {"endpoint": "ftp://127.0.0.1:21"}, "machine A03: endpoint 'ftp://"),
    ],
)
async def test_move_machine_refusals(desk: Desk, machine: str, body: Any, error: str) -> None:
    r = await _post(desk, f"/machines/{machine}/move", body)
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(error), r.json()
    row = await _machine(desk, "A03")
    assert row is not None
    assert row.bank_name == "A"


@pytest.mark.parametrize("url", ["/banks/A/machines", "/machines/A03/move"])
async def test_only_the_technician_changes_the_floor(desk: Desk, url: str) -> None:
    body = (
        {"machine": "A04", "endpoint": "sas+tcp://127.0.0.1:9404"}
        if "banks" in url
        else {"to": "B"}
    )
    for account in ("director", "supervisor", "auditor", "admin"):
        r = await _post(desk, url, body, account=account)
        assert r.status_code == 403, account
        assert r.json()["error"] == f"permission: role {account} may not bank.floor"


async def test_a_machine_a_heat_run_holds_is_not_moved(desk: Desk) -> None:
    run = await Journal(desk.sessions).create_run("A", ["A03"], credits=1000, seconds=60)
    r = await _post(desk, "/machines/A03/move", {"to": "B"})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == f"machine A03 is in heat run {run} (scheduled)"
    row = await _machine(desk, "A03")
    assert row is not None
    assert row.bank_name == "A"


@pytest.mark.parametrize(
    "endpoint",
    [
        "mqtt://",
        "mqtt://127.0.0.1:1/%zz",
        "sas+tcp://:::",
        "sas+tcp://127.0.0.1:99999",
        "sas+tcp://127.0.0.1:1?address=300",
        "sas+serial://x",
        "sas+tcp://[::1",
    ],
)
async def test_a_malformed_endpoint_is_one_line_never_stored(desk: Desk, endpoint: str) -> None:
    r = await _post(desk, "/banks/A/machines", {"machine": "A09", "endpoint": endpoint})
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(("machine A09: ", "endpoint: ")), r.json()
    assert await _machine(desk, "A09") is None
