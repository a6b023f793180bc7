"""The outage spool and the journal's once-only scores, without a heat around them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.heats.spool import JournalWriter
from storage.db import make_sessionmaker
from storage.journal import Journal, JournalConflict, ResultIn, RunState

AT = datetime(2026, 11, 29, 17, 0, tzinfo=UTC)


def _result(machine_id: str, score: int) -> ResultIn:
    return ResultIn(machine_id, score, 10, 2, 10, score - 990, AT)


async def test_a_score_is_stored_once_and_never_changed(engine: AsyncEngine) -> None:
    journal = Journal(make_sessionmaker(engine))
    run = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60)
    assert await journal.store_results(run, [_result("A01", 1004)]) == 1
    assert await journal.store_results(run, [_result("A01", 1004), _result("A02", 995)]) == 1
    with pytest.raises(JournalConflict, match="A01"):
        await journal.store_results(run, [_result("A01", 1100)])
    assert {r.machine_id: r.score for r in await journal.results(run)} == {
        "A01": 1004,
        "A02": 995,
    }


async def test_spool_replays_in_order_and_drops_only_a_torn_last_line(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    run = await journal.create_run("A", ["A01"], credits=1000, seconds=60)
    spool = tmp_path / "spool"
    writer = JournalWriter(journal, spool)
    # As left by a gateway that lost its database, then died in the middle of a write:
    writer._append({"op": "step", "run_id": run, "state": "armed", "note": "",
                    "started_at": None, "ends_at": None, "paused_left_ms": None,
                    "clear_pause": False, "seats": {}})  # fmt: skip
    writer._append({"op": "results", "run_id": run, "results": [
        {"machine_id": "A01", "score": 1004, "games_played": 10, "games_won": 2,
         "credits_wagered": 10, "credits_won": 14, "collected_at": AT.isoformat()}]})  # fmt: skip
    with spool.open("a") as f:
        f.write('{"op": "settle", "run_')  # torn
    assert await writer.flush()
    assert not writer.pending
    assert (await journal.run(run)).state is RunState.ARMED
    assert [r.score for r in await journal.results(run)] == [1004]
    assert not (await journal.run(run)).settled  # the torn write never happened

    spool.write_text('{"op": "settle"\n{"op": "settle", "run_id": 1}\n')
    with pytest.raises(ValueError, match="line 1 is damaged"):
        await writer.flush()
    assert spool.exists()  # kept for a person to look at
