"""The operator's log lines of the heat layer: one at every heat state journaled, one at
every stored score batch, one at every lease change, each with its fields (bank, heat,
run, machine) for the structured log (gateway.app.logs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from structlog.contextvars import bound_contextvars, get_contextvars

from gateway.heats.hooks import run_fields
from gateway.heats.ownership import BankOwnership
from gateway.heats.spool import JournalWriter
from storage.db import make_sessionmaker
from storage.journal import Journal, ResultIn, RunState
from storage.journal_ops import ResultsOp, StepOp
from storage.lease import Owner

AT = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)


async def test_every_state_and_score_batch_is_one_line_with_its_fields(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="gateway.heats.spool")
    journal = Journal(make_sessionmaker(engine))
    writer = JournalWriter(journal, tmp_path / "spool")
    run = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60)
    view = await journal.run(run)
    with bound_contextvars(**run_fields(view)):
        assert get_contextvars() == {"bank": "A", "run": run}  # a test heat: no tournament heat
        await writer.write(StepOp(run, RunState.ARMED))
        await writer.write(
            StepOp(run, RunState.RUNNING, started_at=AT, ends_at=AT + timedelta(minutes=1))
        )
        await writer.write(ResultsOp(run, [ResultIn("A01", 1004, 10, 2, 10, 14, AT)]))
    lines = [r for r in caplog.records if r.name == "gateway.heats.spool"]
    assert [r.getMessage() for r in lines] == [
        f"heat run {run}: armed",
        f"heat run {run}: running",
        f"heat run {run}: 1 score(s) stored",
    ]
    assert [getattr(r, "state", None) for r in lines[:2]] == ["armed", "running"]
    assert getattr(lines[2], "scores") == {"A01": 1004}  # noqa: B009
    assert all(getattr(r, "run") == run for r in lines)  # noqa: B009
    assert not any(getattr(r, "spooled") for r in lines)  # noqa: B009


async def test_lease_taken_lost_and_released_are_logged(
    engine: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="reelgate.ownership")
    sessions = make_sessionmaker(engine)
    mine = BankOwnership(sessions, Journal(sessions), Owner("serve", "floor-gw-1", 4242))
    await mine.acquire(["A", "B"])
    mine.lose("B", "taken over by the standby")
    await mine.close()
    lines = [(r.levelname, r.getMessage(), getattr(r, "bank", None)) for r in caplog.records]
    taken = [line for line in lines if "lease taken" in line[1]]
    assert [bank for *_, bank in taken] == ["A", "B"]
    assert ("WARNING", "bank B: lease lost (taken over by the standby); no longer driving it",
            "B") in lines  # fmt: skip
    released = [line for line in lines if "lease released" in line[1]]
    assert [bank for *_, bank in released] == ["A"]
