"""The floor file and the stored floor (the file seeds, the database is the truth)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.cli import main
from gateway.errors import OperatorError
from gateway.floor.model import parse_floor
from gateway.floor.store import add_machine, load_floor, move_machine, set_bank_enabled, sync_floor
from storage import audit, audit_verify
from storage.db import make_engine, make_sessionmaker

FLOOR = """
[[bank]]
name = "A"
machines = [
  { id = "A01", endpoint = "sas+tcp://127.0.0.1:7001" },
  { id = "A02", endpoint = "sas+serial:///dev/ttyS1?address=3" },
]

[[bank]]
name = "B"
machines = [{ id = "B01", endpoint = "sas+tcp://127.0.0.1:7101" }]
"""


def test_parse_keeps_file_order_for_seat_allocation() -> None:
    floor = parse_floor(FLOOR)
    assert [m.id for m in floor.bank("A").machines] == ["A01", "A02"]  # T11: in order
    assert [m.position for m in floor.bank("A").machines] == [1, 2]
    assert floor.machine("B01").bank == "B"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[[bank]]\nname = 'A'\n", "machines"),
        ("[[bank]]\nname = 'A'\nmachines = [{ id = 'X', endpoint = 'nowhere' }]\n", "endpoint"),
        ("[[bank]]\nname = 'A b'\nmachines = [{ id = 'X', endpoint = 'sas+tcp://h:1' }]", "name"),
        (
            "[[bank]]\nname = 'A'\nmachines = [{ id = 'X', endpoint = 'sas+tcp://h:1' },"
            " { id = 'X', endpoint = 'sas+tcp://h:2' }]",
            "already in bank A",
        ),
        (
            "[[bank]]\nname = 'A'\nmachines = [{ id = 'X', endpoint = 'sas+tcp://h:1', x = 1 }]",
            "'x'",
        ),
        ("[bank\n", "not valid TOML"),
        ("[[room]]\nname = 'A'\n", "unknown key 'room'"),
    ],
)
def test_bad_floor_files_name_the_field(text: str, names: str) -> None:
    with pytest.raises(OperatorError, match=names):
        parse_floor(text)


async def test_database_is_the_truth_after_the_first_seed(engine: AsyncEngine) -> None:
    sessions = make_sessionmaker(engine)
    await sync_floor(sessions, parse_floor(FLOOR))
    # a technician moves A02 to bank B and adds a machine at run time
    await move_machine(sessions, "A02", bank="B", endpoint="sas+tcp://127.0.0.1:7102")
    await add_machine(sessions, "A", "A03", "sas+tcp://127.0.0.1:7003")
    # the unchanged file is read again at the next start: the stored changes stand
    floor = await sync_floor(sessions, parse_floor(FLOOR))
    assert [m.id for m in floor.bank("A").machines] == ["A01", "A03"]
    assert [m.id for m in floor.bank("B").machines] == ["B01", "A02"]
    assert floor.machine("A02").endpoint == "sas+tcp://127.0.0.1:7102"
    with pytest.raises(OperatorError, match="already on the floor"):
        await add_machine(sessions, "A", "A01", "sas+tcp://127.0.0.1:7001")


async def test_enable_with_exclusions_is_audited_and_disable_clears_them(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    await sync_floor(sessions, parse_floor(FLOOR))
    await set_bank_enabled(
        sessions, "A", enabled=True, exclusions={"A02": "bill validator jammed"}, actor="tech1"
    )
    bank = (await load_floor(sessions)).bank("A")
    assert bank.enabled
    assert [m.id for m in bank.active] == ["A01"]
    with pytest.raises(OperatorError, match="not a machine of bank A"):
        await set_bank_enabled(sessions, "A", enabled=True, exclusions={"B01": "x"})
    await set_bank_enabled(sessions, "A", enabled=False, actor="tech1")
    bank = (await load_floor(sessions)).bank("A")
    assert not bank.enabled
    assert [m.id for m in bank.active] == ["A01", "A02"]
    async with sessions() as session:
        check = await audit_verify.verify(session)
        assert check.ok
        query = select(audit.AuditEntry.action).order_by(audit.AuditEntry.id)
        actions = (await session.scalars(query)).all()
    # the genesis row; enable, exclusion, disable; each with the seal of the floor rows
    assert [a for a in actions if a != "records.seal"] == [
        "audit.chain_keyed", "bank.enable", "bank.exclude-machine", "bank.disable",
    ]  # fmt: skip
    assert check.rows_checked == len(actions)


def test_technician_adds_and_moves_machines_from_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    floor = tmp_path / "floor.toml"
    floor.write_text(FLOOR)
    db = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
    assert main(["db", "upgrade", "--database", db]) == 0
    common = ["--floor", str(floor), "--database", db, "--spool", str(tmp_path / "spool")]
    assert main(["bank", "add-machine", "A", "A09", "--endpoint", "sas+tcp://127.0.0.1:7009",
                 *common]) == 0  # fmt: skip
    assert main(["bank", "move-machine", "A09", "--to", "B", *common]) == 0
    assert main(["bank", "move-machine", "A09", *common]) == 2  # nothing to change
    assert main(["bank", "add-machine", "A", "A01", "--endpoint", "sas+tcp://h:1", *common]) == 2
    err = capsys.readouterr().err
    assert "give --to BANK" in err
    assert "already on the floor" in err

    async def stored() -> tuple[list[str], list[str]]:
        from sqlalchemy import select

        engine = make_engine(db)
        sessions = make_sessionmaker(engine)
        try:
            floor_now = await load_floor(sessions)
            async with sessions() as session:
                rows = (await session.scalars(select(audit.AuditEntry))).all()
            return [m.id for m in floor_now.bank("B").machines], [r.action for r in rows]
        finally:
            await engine.dispose()

    b_machines, actions = asyncio.run(stored())
    assert b_machines == ["B01", "A09"]
    # each change with the seal of the floor rows it wrote (issue 25.2: the floor is sealed)
    assert [a for a in actions if a != "records.seal"] == [
        "audit.chain_keyed",
        "floor.add-machine",
        "floor.move-machine",
    ]
    assert actions.count("records.seal") >= 2
