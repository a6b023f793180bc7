"""The outage spool and the journal's once-only scores, without a heat around them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.heats.spool import JournalWriter, read_spool
from storage.db import make_sessionmaker
from storage.effects import EffectIn, EffectKind
from storage.journal import (
    Journal,
    JournalConflict,
    MachineState,
    ResultIn,
    RunState,
    RunView,
)
from storage.journal_ops import ResultsOp, SeatsOp, StepOp

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


def _spool_lines(path: Path, *records: dict[str, Any]) -> None:
    """Lines exactly as a gateway appends them (one compact JSON object each)."""
    with path.open("a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")


async def test_spool_replays_in_order_and_drops_only_a_torn_last_line(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    run = await journal.create_run("A", ["A01"], credits=1000, seconds=60)
    spool = tmp_path / "spool"
    writer = JournalWriter(journal, spool)
    # As left by a gateway that lost its database, then died in the middle of a write:
    _spool_lines(spool, {"op": "step", "run_id": run, "state": "armed", "note": "",
                         "started_at": None, "ends_at": None, "paused_left_ms": None,
                         "clear_pause": False, "seats": {}})  # fmt: skip
    _spool_lines(spool, {"op": "results", "run_id": run, "results": [
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


async def test_lines_spooled_by_the_first_gateways_still_replay(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """T12b, T20: the line format predates the typed ops; lines of the first spool (no
    effects, unlock proofs or baselines; a spooled settle) replay as they meant."""
    journal = Journal(make_sessionmaker(engine))
    run = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60)
    spool = tmp_path / "spool"
    writer = JournalWriter(journal, spool)
    _spool_lines(
        spool,
        {"op": "step", "run_id": run, "state": "armed", "note": "", "started_at": None,
         "ends_at": None, "paused_left_ms": None, "clear_pause": False, "seats": {}},
        {"op": "seats", "run_id": run, "seats": {"A01": "armed", "A02": "armed"},
         "supports": {"A01": "native", "A02": "native"}, "note": ""},
        {"op": "step", "run_id": run, "state": "running", "note": "",
         "started_at": AT.isoformat(), "ends_at": (AT + timedelta(seconds=60)).isoformat(),
         "paused_left_ms": None, "clear_pause": False,
         "seats": {"A01": "playing", "A02": "playing"}},
        {"op": "seats", "run_id": run, "seats": {"A02": "malfunction"}, "supports": {},
         "note": "silent"},
        {"op": "results", "run_id": run, "results": [
            {"machine_id": "A01", "score": 1004, "games_played": 10, "games_won": 2,
             "credits_wagered": 10, "credits_won": 14, "collected_at": AT.isoformat()}]},
        {"op": "seats", "run_id": run, "seats": {"A01": "released", "A02": "released"},
         "supports": {}, "note": ""},
        {"op": "settle", "run_id": run},
    )  # fmt: skip
    assert writer.spool_depth() == 7
    assert await writer.flush()
    view = await journal.run(run)
    assert view.state is RunState.RUNNING
    assert view.started_at == AT
    assert view.ends_at == AT + timedelta(seconds=60)
    assert view.supports == {"A01": "native", "A02": "native"}
    assert view.machines == {"A01": MachineState.RELEASED, "A02": MachineState.RELEASED}
    assert view.unlocked == frozenset()
    assert view.baselines == {}
    assert [(r.machine_id, r.score) for r in await journal.results(run)] == [("A01", 1004)]
    assert view.settled  # the old spooled settle, replayed
    assert [s for s, _, _ in await journal.steps(run)] == [
        RunState.SCHEDULED, RunState.ARMED, RunState.RUNNING
    ]  # fmt: skip


async def test_a_line_holding_no_journal_op_stops_the_replay_before_anything(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    journal = Journal(make_sessionmaker(engine))
    run = await journal.create_run("A", ["A01"], credits=1000, seconds=60)
    spool = tmp_path / "spool"
    writer = JournalWriter(journal, spool)
    _spool_lines(spool, StepOp(run, RunState.ARMED).to_json(), {"op": "rewind", "run_id": run})
    with pytest.raises(ValueError, match="line 2: unknown journal operation 'rewind'"):
        await writer.flush()
    assert (await journal.run(run)).state is RunState.SCHEDULED  # line 1 not applied either
    assert writer.spool_depth() == 2


class _Outage(Journal):
    """The journal with its database away while ``down`` is set (as a dropped connection
    looks to the writer), counting the writes that reached the database."""

    def __init__(self, journal: Journal) -> None:
        super().__init__(journal.sessions)
        self.down = False
        self.applied = 0

    def _check(self) -> None:
        if self.down:
            raise OperationalError("SELECT 1", {}, ConnectionRefusedError("database away"))

    async def run(self, run_id: int) -> RunView:
        self._check()
        return await super().run(run_id)

    async def step(self, run_id: int, state: RunState, **kwargs: Any) -> None:
        self._check()
        self.applied += 1
        await super().step(run_id, state, **kwargs)

    async def set_seats(self, run_id: int, seats: Mapping[str, MachineState], **kw: Any) -> None:
        self._check()
        self.applied += 1
        await super().set_seats(run_id, seats, **kw)

    async def store_results(self, run_id: int, results: Sequence[ResultIn]) -> int:
        self._check()
        self.applied += 1
        return await super().store_results(run_id, results)


async def test_an_op_is_applied_once_directly_or_spooled_as_its_json_and_replayed(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    """T12b: each write reaches the database once, the same op whichever way it went."""
    journal = _Outage(Journal(make_sessionmaker(engine)))
    run = await journal.create_run("A", ["A01", "A02"], credits=1000, seconds=60)
    spool = tmp_path / "spool"
    writer = JournalWriter(journal, spool, retry_interval=3600)
    armed = SeatsOp(run, dict.fromkeys(["A01", "A02"], MachineState.ARMED),
                    supports={"A01": "native", "A02": "host-timed"},
                    baselines={"A02": {"games_played": 7, "credits_wagered": 70}})  # fmt: skip
    assert await writer.write(armed) is False  # the database answered
    assert journal.applied == 1
    assert not spool.exists()

    journal.down = True
    running = StepOp(run, RunState.RUNNING, started_at=AT, ends_at=AT + timedelta(seconds=60),
                     seats=dict.fromkeys(["A01", "A02"], MachineState.PLAYING),
                     effects=[EffectIn(EffectKind.STARTED, AT, None, {"why": "test"})])  # fmt: skip
    scores = ResultsOp(run, [_result("A01", 1004)])
    assert await writer.write(running) is True
    journal.down = False
    assert await writer.write(scores) is True  # queued behind the spool, in order
    assert journal.applied == 1
    assert [json.loads(x) for x in spool.read_text().splitlines()] == [
        running.to_json(),
        scores.to_json(),
    ]
    assert [op for _, op in read_spool(spool)] == [running, scores]
    assert writer.spooled_total == 2

    assert await writer.flush()
    assert journal.applied == 3
    assert not spool.exists()
    view = await journal.run(run)
    assert view.state is RunState.RUNNING
    assert view.ends_at == AT + timedelta(seconds=60)
    assert view.supports == {"A01": "native", "A02": "host-timed"}
    assert view.baselines == {"A02": {"games_played": 7, "credits_wagered": 70}}
    assert view.machines == {"A01": MachineState.SCORED, "A02": MachineState.PLAYING}
    assert [(r.machine_id, r.score) for r in await journal.results(run)] == [("A01", 1004)]
    await writer.close()
