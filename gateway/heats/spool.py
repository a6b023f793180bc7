"""Journal writes that survive a database outage.

Every journal write is one typed op (:mod:`storage.journal_ops`: ``StepOp``, ``SeatsOp``,
``ResultsOp``) handed to :meth:`JournalWriter.write`.  It goes to the database when it
answers.  When it does not (connection refused, dropped, locked past the busy timeout),
the op's JSON is appended to a local spool file (one line, flushed and fsynced) and
counts as journaled: the heat goes on and the floor is touched only after the line is on
disk.  While the spool holds anything, later writes queue behind it so the database
receives them in order.  A background task replays the spool when the database returns,
decoding each line back into the same op; every replayed write is idempotent (steps carry
their own sequence, results are unique per run and machine), so a replay cut short by a
crash is simply replayed again at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError

from storage.journal import Journal, NotSettled
from storage.journal_ops import JournalOp, ResultsOp, SpooledOp, StepOp, op_from_json
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
    async def write(self, op: JournalOp) -> bool:
        """Journal ``op``: applied to the database when it answers, else spooled (its JSON
        line on disk) and replayed later as the same op.  True when it was spooled."""
        spooled = await self._write(op)
        match op:
            case StepOp(run_id=run_id, state=state, note=note):
                # The operator's line for every heat state (bank and heat bound by the runner).
                fields: dict[str, Any] = {"run": run_id, "state": state.value, "spooled": spooled}
                if note:
                    fields["note"] = note
                log.info("heat run %s: %s", run_id, state.value, extra=fields)
            case ResultsOp(run_id=run_id, results=results):
                scores = {r.machine_id: r.score for r in results}
                log.info(
                    "heat run %s: %d score(s) stored", run_id, len(scores),
                    extra={"run": run_id, "scores": scores, "spooled": spooled},
                )  # fmt: skip
        return spooled

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

    async def _write(self, op: JournalOp) -> bool:
        """Journal ``op``; True when it went to the spool (the database away)."""
        async with self._lock:
            if not self.pending:
                try:
                    await op.apply(self.journal)
                    return False
                except Exception as exc:
                    if not is_outage(exc):
                        raise
                    log.warning("database unreachable (%s): spooling journal writes", exc)
            self._append(op)
            self.spooled_total += 1
        self._ensure_flusher()
        return True

    def _append(self, op: JournalOp) -> None:
        line = json.dumps(op.to_json(), separators=(",", ":")) + "\n"
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
            spooled = read_spool(self.spool_path)
            done = 0
            try:
                for _, op in spooled:
                    await op.apply(self.journal)
                    done += 1
            except Exception as exc:
                if not is_outage(exc):
                    raise
                self._rewrite([line for line, _ in spooled[done:]])
                return False
            self.spool_path.unlink(missing_ok=True)
            log.info("database back: %d spooled journal writes stored", done)
            return True

    def _rewrite(self, lines: list[str]) -> None:
        """Keep the lines not yet replayed, as they were written."""
        tmp = self.spool_path.with_suffix(self.spool_path.suffix + ".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
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


def read_spool(path: Path) -> list[tuple[str, SpooledOp]]:
    """The spooled writes, in order: each line and the op it holds.  A torn last line (the
    process died mid-append) was never journaled -- nothing on the floor followed it --
    and is dropped; damage anywhere else, or a line that holds no journal op, is refused
    rather than guessed at (nothing of the spool is applied then)."""
    lines = [x for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x]
    spooled: list[tuple[str, SpooledOp]] = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                log.warning("spool %s: dropping a torn last line (crash mid-write)", path)
                break
            raise ValueError(f"spool {path}: line {number} is damaged; keep the file") from None
        if not isinstance(record, dict):
            raise ValueError(f"spool {path}: line {number} is damaged; keep the file")
        try:
            spooled.append((line, op_from_json(record)))
        except ValueError as exc:
            raise ValueError(f"spool {path}: line {number}: {exc}; keep the file") from None
    return spooled
