"""Journal writes that survive a database outage.

Every journal write goes to the database when it answers.  When it does not (connection
refused, dropped, locked past the busy timeout), the write is appended to a local spool
file (one JSON line, flushed and fsynced) and counts as journaled: the heat goes on and
the floor is touched only after the line is on disk.  While the spool holds anything,
later writes queue behind it so the database receives them in order.  A background task
replays the spool when the database returns; every replayed write is idempotent (steps
carry their own sequence, results are unique per run and machine), so a replay cut short
by a crash is simply replayed again at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError

from storage.effects import EffectIn, EffectKind
from storage.journal import Journal, MachineState, NotSettled, ResultIn, RunState
from storage.lease import StaleOwner

log = logging.getLogger(__name__)

OUTAGE_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    DisconnectionError,
    OSError,
    TimeoutError,
)


def is_outage(exc: BaseException) -> bool:
    if isinstance(exc, OUTAGE_ERRORS):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


class JournalWriter:
    """The gateway's one writer of journal rows, with the outage spool behind it."""

    def __init__(
        self, journal: Journal, spool_path: Path | str, *, retry_interval: float = 0.25
    ) -> None:
        self.journal = journal
        self.spool_path = Path(spool_path)
        self.retry_interval = retry_interval
        self._lock = asyncio.Lock()
        self._flusher: asyncio.Task[None] | None = None
        self.spooled_total = 0  # how many writes ever went through the spool
        # Runs whose settling waited on the database: settled once the spool is replayed.
        self._settle_wanted: set[int] = set()

    # -- writes --------------------------------------------------------------------
    async def step(
        self,
        run_id: int,
        state: RunState,
        *,
        note: str = "",
        started_at: datetime | None = None,
        ends_at: datetime | None = None,
        paused_left_ms: int | None = None,
        clear_pause: bool = False,
        seats: Mapping[str, MachineState] | None = None,
        effects: Sequence[EffectIn] = (),
    ) -> None:
        spooled = await self._write(
            {
                "op": "step",
                "run_id": run_id,
                "state": state.value,
                "note": note,
                "started_at": _iso(started_at),
                "ends_at": _iso(ends_at),
                "paused_left_ms": paused_left_ms,
                "clear_pause": clear_pause,
                "seats": {k: v.value for k, v in (seats or {}).items()},
                "effects": [_effect_record(e) for e in effects],
            }
        )
        # The operator's line for every heat state (bank and heat are bound by the runner).
        fields: dict[str, Any] = {"run": run_id, "state": state.value, "spooled": spooled}
        if note:
            fields["note"] = note
        log.info("heat run %s: %s", run_id, state.value, extra=fields)

    async def set_seats(
        self,
        run_id: int,
        seats: Mapping[str, MachineState],
        *,
        supports: Mapping[str, str] | None = None,
        note: str = "",
        effects: Sequence[EffectIn] = (),
        unlocked_at: Mapping[str, datetime] | None = None,
        baselines: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        await self._write(
            {
                "op": "seats",
                "baselines": {k: dict(v) for k, v in (baselines or {}).items()},
                "run_id": run_id,
                "seats": {k: v.value for k, v in seats.items()},
                "supports": dict(supports or {}),
                "note": note,
                "effects": [_effect_record(e) for e in effects],
                "unlocked_at": {k: v.isoformat() for k, v in (unlocked_at or {}).items()},
            }
        )

    async def store_results(self, run_id: int, results: Sequence[ResultIn]) -> None:
        spooled = await self._write(
            {
                "op": "results",
                "run_id": run_id,
                "results": [
                    {
                        "machine_id": r.machine_id,
                        "score": r.score,
                        "games_played": r.games_played,
                        "games_won": r.games_won,
                        "credits_wagered": r.credits_wagered,
                        "credits_won": r.credits_won,
                        "collected_at": r.collected_at.isoformat(),
                    }
                    for r in results
                ],
            }
        )
        scores = {r.machine_id: r.score for r in results}
        log.info(
            "heat run %s: %d score(s) stored", run_id, len(scores),
            extra={"run": run_id, "scores": scores, "spooled": spooled},
        )  # fmt: skip

    async def settle(self, run_id: int) -> bool:
        """Mark the run settled if the database agrees it may be (every machine back in
        normal play, every tournament effect applied).  Never spooled: a run left
        unsettled is settled later by whoever holds the bank (recovery, ``serve``)."""
        if self.pending:
            self._settle_wanted.add(run_id)
            return False
        try:
            await self.journal.settle(run_id)
        except NotSettled as exc:
            log.info("%s", exc)
            return False
        except StaleOwner:
            raise
        except Exception as exc:
            if not is_outage(exc):
                raise
            log.warning("run %s left unsettled: database unreachable (%s)", run_id, exc)
            self._settle_wanted.add(run_id)
            return False
        self._settle_wanted.discard(run_id)
        return True

    async def _settle_waiting(self) -> None:
        for run_id in sorted(self._settle_wanted):
            await self.settle(run_id)

    # -- spool -----------------------------------------------------------------------
    @property
    def pending(self) -> bool:
        return self.spool_path.exists() and self.spool_path.stat().st_size > 0

    def spool_depth(self) -> int:
        """How many journal writes wait in the spool for the database (0: none)."""
        try:
            with self.spool_path.open("rb") as f:
                return sum(1 for line in f if line.strip())
        except FileNotFoundError:
            return 0

    async def _write(self, record: dict[str, Any]) -> bool:
        """Journal ``record``; True when it went to the spool (the database away)."""
        async with self._lock:
            if not self.pending:
                try:
                    await _apply(self.journal, record)
                    return False
                except Exception as exc:
                    if not is_outage(exc):
                        raise
                    log.warning("database unreachable (%s): spooling journal writes", exc)
            self._append(record)
            self.spooled_total += 1
        self._ensure_flusher()
        return True

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with self.spool_path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def _ensure_flusher(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_loop())

    async def _flush_loop(self) -> None:
        # Retries until the database is back; ends with the spool (or the process).
        done = await self.flush()
        while not done:
            await asyncio.sleep(self.retry_interval)
            done = await self.flush()

    async def flush(self) -> bool:
        """Replay the spool into the database, then settle the runs that waited on it.
        True when the spool is empty afterwards."""
        done = await self._replay()
        if done and self._settle_wanted:
            await self._settle_waiting()
        return done

    async def _replay(self) -> bool:
        async with self._lock:
            if not self.pending:
                return True
            records = _read_records(self.spool_path)
            done = 0
            try:
                for record in records:
                    await _apply(self.journal, record)
                    done += 1
            except Exception as exc:
                if not is_outage(exc):
                    raise
                self._rewrite(records[done:])
                return False
            self.spool_path.unlink(missing_ok=True)
            log.info("database back: %d spooled journal writes stored", done)
            return True

    def _rewrite(self, records: list[dict[str, Any]]) -> None:
        tmp = self.spool_path.with_suffix(self.spool_path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.spool_path)

    async def drain(self, within_s: float) -> bool:
        """Wait (bounded) until everything spooled is in the database."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while loop.time() < deadline:
            if await self.flush():
                return True
            await asyncio.sleep(self.retry_interval)
        return not self.pending

    async def close(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher


def _read_records(path: Path) -> list[dict[str, Any]]:
    """The spooled writes, in order.  A torn last line (the process died mid-append) was
    never journaled — nothing on the floor followed it — and is dropped; damage anywhere
    else is refused rather than guessed at."""
    lines = [x for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x]
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):
                log.warning("spool %s: dropping a torn last line (crash mid-write)", path)
                break
            raise ValueError(f"spool {path}: line {number} is damaged; keep the file") from None
    return records


def _effect_record(e: EffectIn) -> dict[str, Any]:
    return {
        "kind": e.kind.value,
        "at": e.at.isoformat(),
        "machine_id": e.machine_id,
        "details": dict(e.details),
    }


def _effects(records: list[dict[str, Any]] | None) -> list[EffectIn]:
    return [
        EffectIn(
            EffectKind(r["kind"]), datetime.fromisoformat(r["at"]), r["machine_id"], r["details"]
        )
        for r in records or []
    ]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _dt(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


async def _apply(journal: Journal, r: dict[str, Any]) -> None:
    op = r["op"]
    if op == "step":
        view = await journal.run(r["run_id"])
        state = RunState(r["state"])
        # Idempotent replay: a step already applied (same state, crash before the spool
        # was cleared) is not written twice.
        if view.state is state and r["ends_at"] is None and not r["seats"]:
            return  # (its effects were committed with it)
        await journal.step(
            r["run_id"],
            state,
            note=r["note"],
            started_at=_dt(r["started_at"]),
            ends_at=_dt(r["ends_at"]),
            paused_left_ms=r["paused_left_ms"],
            clear_pause=r["clear_pause"],
            seats={k: MachineState(v) for k, v in r["seats"].items()},
            effects=_effects(r.get("effects")),
        )
    elif op == "seats":
        await journal.set_seats(
            r["run_id"],
            {k: MachineState(v) for k, v in r["seats"].items()},
            supports=r["supports"],
            note=r["note"],
            effects=_effects(r.get("effects")),
            unlocked_at={k: datetime.fromisoformat(v) for k, v in r.get("unlocked_at", {}).items()},
            baselines=r.get("baselines") or None,
        )
    elif op == "results":
        await journal.store_results(
            r["run_id"],
            [
                ResultIn(
                    machine_id=x["machine_id"],
                    score=x["score"],
                    games_played=x["games_played"],
                    games_won=x["games_won"],
                    credits_wagered=x["credits_wagered"],
                    credits_won=x["credits_won"],
                    collected_at=datetime.fromisoformat(x["collected_at"]),
                )
                for x in r["results"]
            ],
        )
    elif op == "settle":  # written by earlier versions only
        with contextlib.suppress(NotSettled):
            await journal.settle(r["run_id"])
    else:
        raise ValueError(f"spool: unknown operation {op!r}")
