"""The floor file's AFT host identity: ``aft_registration_key`` and ``aft_pos_id`` per bank
or machine, validated field by field, stored with the machine, and handed to drivers."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import OperatorError
from gateway.floor.aft import configure_driver
from gateway.floor.model import MachineSpec, parse_floor
from gateway.floor.store import add_machine, load_floor, sync_floor
from gateway.machines.sas import SasDriver
from gateway.machines.sas_aft import AftHost
from protocols.sas.endpoint import parse_endpoint
from storage import audit
from storage.db import make_sessionmaker

KEY = "0123456789ABCDEF0123456789abcdef01234567"
OTHER = "f" * 40

B02 = (
    '{ id = "B02", endpoint = "sas+tcp://127.0.0.1:7102", aft_pos_id = 1, '
    f'aft_registration_key = "{OTHER}" }}'
)
FLOOR = f"""
[[bank]]
name = "A"
aft_registration_key = "{KEY}"
aft_pos_id = 9001
machines = [
  {{ id = "A01", endpoint = "sas+tcp://127.0.0.1:7001" }},
  {{ id = "A02", endpoint = "sas+tcp://127.0.0.1:7002", aft_pos_id = 9002 }},
  {{ id = "A03", endpoint = "sas+tcp://127.0.0.1:7003", aft_registration_key = "{OTHER}" }},
]

[[bank]]
name = "B"
machines = [
  {{ id = "B01", endpoint = "sas+tcp://127.0.0.1:7101" }},
  {B02},
]
"""


def test_bank_values_with_machine_overrides() -> None:
    floor = parse_floor(FLOOR)
    got = {
        m.id: (m.aft_registration_key, m.aft_pos_id)
        for bank in floor.banks.values()
        for m in bank.machines
    }
    assert got == {
        "A01": (KEY.lower(), 9001),
        "A02": (KEY.lower(), 9002),
        "A03": (OTHER, 9001),
        "B01": (None, None),
        "B02": (OTHER, 1),
    }


def _one(extra: str, machine_extra: str = "") -> str:
    return (
        f'[[bank]]\nname = "A"\n{extra}\nmachines = [ {{ id = "A01", '
        f'endpoint = "sas+tcp://127.0.0.1:7001"{machine_extra} }} ]\n'
    )


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (_one('aft_registration_key = "abc"\naft_pos_id = 1'), "bank #1 (A): aft_registration_key"),
        (_one(f'aft_registration_key = "{"0" * 40}"\naft_pos_id = 1'), "must not be all zero"),
        (_one(f'aft_registration_key = "{"g" * 40}"\naft_pos_id = 1'), "40 hex digits"),
        (_one(f'aft_registration_key = "{KEY}"\naft_pos_id = 0'), "aft_pos_id must be"),
        (_one(f'aft_registration_key = "{KEY}"\naft_pos_id = 4294967296'), "1..4294967295"),
        (_one(f'aft_registration_key = "{KEY}"\naft_pos_id = true'), "aft_pos_id must be"),
        (_one(f'aft_registration_key = "{KEY}"\naft_pos_id = "7"'), "aft_pos_id must be"),
        (_one(f'aft_registration_key = "{KEY}"'), "(A01): aft_pos_id missing"),
        (_one("", ", aft_pos_id = 5"), "(A01): aft_registration_key missing"),
        (_one("", ", aft_registration_key = 12"), "machine #1 (A01): aft_registration_key"),
    ],
)
def test_bad_aft_fields_name_the_field(text: str, names: str) -> None:
    with pytest.raises(OperatorError, match=names.replace("(", r"\(").replace(")", r"\)")):
        parse_floor(text)


async def test_stored_with_the_machine_and_seeded_into_older_rows(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    bare = """
[[bank]]
name = "A"
machines = [
  { id = "A01", endpoint = "sas+tcp://127.0.0.1:7001" },
  { id = "A02", endpoint = "sas+tcp://127.0.0.1:7002" },
]
"""
    first = await sync_floor(sessions, parse_floor(bare))  # a floor from before AFT
    assert first.machine("A01").aft_registration_key is None
    await sync_floor(sessions, parse_floor(FLOOR))  # the file now gives them: seeded
    stored = await load_floor(sessions)
    assert (stored.machine("A01").aft_registration_key, stored.machine("A01").aft_pos_id) == (
        KEY.lower(),
        9001,
    )
    assert stored.machine("A02").aft_pos_id == 9002
    assert stored.machine("A03").aft_registration_key == OTHER  # new: stored as given
    changed = FLOOR.replace("aft_pos_id = 9002", "aft_pos_id = 9999")
    again = await sync_floor(sessions, parse_floor(changed))
    assert again.machine("A02").aft_pos_id == 9002  # the database is the truth


def test_the_driver_is_told_the_floor_values() -> None:
    spec = MachineSpec("A01", "sas+tcp://127.0.0.1:7001", "A", 1, None, None, KEY.lower(), 9001)
    driver = SasDriver("A01", parse_endpoint(spec.endpoint))
    assert configure_driver(driver, spec) is driver
    assert driver._aft.host == AftHost(bytes.fromhex(KEY), 9001)
    bare = SasDriver("B01", parse_endpoint(spec.endpoint))
    configure_driver(bare, MachineSpec("B01", spec.endpoint, "B", 1))
    assert bare._aft.host is None


async def test_a_technician_adds_a_machine_with_its_aft_identity(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    spec = await add_machine(
        sessions,
        "C",
        "C01",
        "sas+tcp://127.0.0.1:7201",
        aft_registration_key=KEY,
        aft_pos_id=31,
        actor="tech7",
    )
    assert (spec.aft_registration_key, spec.aft_pos_id) == (KEY.lower(), 31)
    stored = (await load_floor(sessions)).machine("C01")
    assert (stored.aft_registration_key, stored.aft_pos_id) == (KEY.lower(), 31)
    async with sessions() as session:
        entries = (await session.scalars(select(audit.AuditEntry))).all()
    (entry,) = [e for e in entries if e.action == "floor.add-machine"]
    assert entry.actor == "tech7"
    assert entry.details_dict()["aft_pos_id"] == 31
    with pytest.raises(OperatorError, match="aft_pos_id missing"):
        await add_machine(sessions, "C", "C02", "sas+tcp://127.0.0.1:7202",
                          aft_registration_key=KEY)  # fmt: skip
    with pytest.raises(OperatorError, match="40 hex digits"):
        await add_machine(sessions, "C", "C02", "sas+tcp://127.0.0.1:7202",
                          aft_registration_key="xyz", aft_pos_id=3)  # fmt: skip
    assert "C02" not in {m.id for m in (await load_floor(sessions)).bank("C").machines}
