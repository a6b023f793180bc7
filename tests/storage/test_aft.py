"""``machine_aft_registration``: what each preflight found of a machine's AFT registration,
one row per machine, ``registered_since`` kept while it stays registered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from storage import aft
from storage.aft import RegistrationRow
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


async def test_each_check_replaces_the_row_and_keeps_registered_since(
    engine: AsyncEngine,
) -> None:
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        session.add(FloorBank(name="A", enabled=False))
        await session.flush()
        for i, machine_id in enumerate(("A01", "A02"), start=1):
            row = FloorMachine(machine_id=machine_id, bank_name="A", position=i,
                               endpoint="sas+tcp://127.0.0.1:7001", updated_at=T0,
                               aft_registration_key="ab" * 20, aft_pos_id=2**32 - 1)  # fmt: skip
            session.add(row)
    ours = RegistrationRow("A01", 4_000_000_001, True, "registered", 2**32 - 1, None, T0)
    refused = RegistrationRow("A02", 1002, False, "refused", None, "80 not registered", T0)
    await aft.record(sessions, [ours, refused])
    later = T0 + timedelta(hours=1)
    await aft.record(
        sessions,
        [
            RegistrationRow("A01", 4_000_000_001, True, "registered", 2**32 - 1, None, later),
            RegistrationRow("A02", 1002, True, "registered", 7, None, later),
        ],
    )
    rows = await aft.load(sessions)
    assert rows["A01"].registered_since == T0  # registered since the first check
    assert rows["A01"].checked_at == later
    assert rows["A01"].asset_number == 4_000_000_001  # asset numbers are 4 bytes unsigned
    assert rows["A02"].registered_since == later
    assert rows["A02"].reason is None
    await aft.record(
        sessions,
        [RegistrationRow("A01", 4_000_000_001, False, "refused", 99, "another host", later)],
    )
    again = (await aft.load(sessions))["A01"]
    assert (again.registered, again.registered_since, again.reason) == (
        False,
        None,
        "another host",
    )
