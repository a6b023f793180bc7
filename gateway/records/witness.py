"""The chain head's witness outside the database, and the checkpoint a minute after a write.

Theory of operation
-------------------
Whoever can write the database can delete the last rows of the audit log and set the
head row back; what remains still verifies (every MAC and link is intact).  So every
head a commit reaches is also written somewhere the database cannot reach: the
*witness*.  Storage tells the :class:`Witness` bound to the engine of each committed head
(:class:`storage.audit.HeadWitness`, called in ``after_commit``: it only notes the head);
one writer task per process writes the newest head noted, one tagged line
(:mod:`gateway.records.witness_entry`) per batch, so twenty desks committing together
cost one witness write, not twenty.  The API answers a request only once the witness
holds every head committed before the answer (:meth:`Witness.settled`, awaited by the
API's middleware): nothing a desk was told is done can vanish unnoticed.  A one-shot
command settles at exit (:func:`gateway.app.database.close_engine`); if the event loop
is torn down first, the last head is written synchronously.

**Checkpoints.**  The same task signs a checkpoint (:func:`storage.audit.request_checkpoint`)
at most :data:`CHECKPOINT_WITHIN` seconds after the first write not yet under one
(:class:`CheckpointSchedule`, pure, driven by an injected clock).  In ``serve`` and
``api`` (:meth:`Witness.watch`) it also reads the head every :data:`POLL_S` seconds, so
what a one-shot command wrote (witnessed at its commit, like any write) is signed within
the same minute, and signs once more at shutdown.  A checkpoint's own commit covers the
head.

A witness that cannot be written (the collector gone, the disk full) is logged as an
error on every batch and retried on the next; the desks' answers are not held for it
(the sale *is* committed); ``/readyz`` says "not ready" until a write goes through
again (:func:`gateway.app.monitoring.checks.witness_check`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records.witness_entry import Entry, format_entry
from gateway.records.witness_sinks import Sink, WitnessSpec, open_sink, parse_spec
from storage import audit
from storage.db import make_sessionmaker

WITNESS_ENV = "REELGATE_AUDIT_WITNESS"
CHECKPOINT_WITHIN = 60.0  # seconds from the first unsigned write to its checkpoint
SYNC_EVERY_S = 1.0  # the file witness forced to the disk at most this often
POLL_S = 20.0  # serve / api: how often the head is read for one-shot commands' writes
PERIODIC_REASON = "a minute after a write"
SHUTDOWN_REASON = "shutdown"
log = logging.getLogger("reelgate.records.witness")


class CheckpointSchedule:
    """When the next signed checkpoint is due (pure: times are passed in)."""

    def __init__(self, within: float = CHECKPOINT_WITHIN) -> None:
        self.within = within
        self.position = 0  # the newest head this process committed
        self.covered = 0  # the newest head under a checkpoint this process wrote
        self._since: float | None = None  # when the first unsigned head was committed

    def committed(self, position: int, *, checkpointed: bool, now: float) -> None:
        self.position = max(self.position, position)
        if checkpointed:
            self.covered = max(self.covered, position)
        if self.position <= self.covered:
            self._since = None
        elif self._since is None:
            self._since = now

    @property
    def unsigned(self) -> bool:
        return self.position > self.covered

    def deadline(self) -> float | None:
        return None if self._since is None else self._since + self.within

    def due(self, now: float) -> bool:
        deadline = self.deadline()
        return deadline is not None and now >= deadline

    def seen(self, position: int, *, now: float, late_by: float) -> None:
        """Another process (a one-shot command) moved the head to ``position``, found by
        a poll up to ``late_by`` seconds after it: sign it a minute after the write."""
        if position > self.position:
            self.position = position
            if self._since is None:
                self._since = now - late_by

    def failed(self, now: float) -> None:
        """The checkpoint could not be written: try again a period later."""
        if self.unsigned:
            self._since = now


class Witness:
    """Writes the chain heads an engine's sessions commit to a :class:`Sink`, in batches,
    and signs checkpoints on time (see the module docstring)."""

    def __init__(
        self,
        engine: AsyncEngine,
        sink: Sink,
        keys: audit.ChainKeys,
        *,
        within: float = CHECKPOINT_WITHIN,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sink = sink
        self.keys = keys
        self.schedule = CheckpointSchedule(within)
        self.clock = clock
        self.now = now
        self.failures = 0
        self.batches = 0
        self.last_error: str | None = None  # the last write's failure, until one succeeds
        self._sessions = make_sessionmaker(engine)
        self._noted: tuple[int, str] | None = None
        self._written = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._watching = False  # a long-running process: others' heads, shutdown checkpoint
        self._synced_at = float("-inf")
        self._syncing: asyncio.Future[None] | None = None
        self._sync_later: asyncio.TimerHandle | None = None
        self._next_poll: float | None = None

    # -- storage's HeadWitness ---------------------------------------------------------
    def committed(self, position: int, mac: str, *, checkpointed: bool) -> None:
        if self._noted is None or position > self._noted[0]:
            self._noted = (position, mac)
        self.schedule.committed(position, checkpointed=checkpointed, now=self.clock())
        self._kick()

    # -- the writer ------------------------------------------------------------------------
    def _kick(self) -> None:
        if self._closed:
            self._write_now()  # a late commit after close: written at once
            return
        if self._task is None or self._task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._write_now()
                return
            self._task = loop.create_task(self._run(), name="audit-witness")
        self._wake.set()

    @property
    def pending(self) -> bool:
        return self._noted is not None and self._noted[0] > self._written

    async def settled(self) -> None:
        """Return once every head committed so far is with the witness (or failed)."""
        if not self.pending:
            return
        assert self._noted is not None
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((self._noted[0], waiter))
        self._kick()
        await waiter

    def _line(self, position: int, mac: str) -> str:
        return format_entry(
            self.keys.mac_key, Entry("head", position, mac, self.now(), self.keys.key_id)
        )

    def _release(self, upto: int | None) -> None:
        keep = []
        for target, waiter in self._waiters:
            if upto is None or target <= upto:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                keep.append((target, waiter))
        self._waiters = keep

    async def _flush(self) -> None:
        if not self.pending:
            self._release(self._written)
            return
        assert self._noted is not None
        position, mac = self._noted
        try:
            await asyncio.to_thread(self.sink.write, [self._line(position, mac)], self.now())
        except OSError as exc:
            self.failures += 1
            self.last_error = f"cannot write head {position}: {exc}"
            log.error("audit witness: cannot write head %d (%s); retried next", position, exc)
            self._release(None)  # the commit stands: do not hold the desks' answers
            return
        self.batches += 1
        self.last_error = None
        self._written = max(self._written, position)
        self._release(self._written)
        self._sync_soon()

    def _sync_soon(self) -> None:
        """Force the written entries to the disk, off the answers' path, at most once a
        second (a crash of the host meanwhile leaves the witness behind: no false alarm)."""
        now = self.clock()
        if self._syncing is not None and not self._syncing.done():
            return
        if now - self._synced_at < SYNC_EVERY_S:
            if self._sync_later is None:
                loop = asyncio.get_running_loop()
                self._sync_later = loop.call_later(SYNC_EVERY_S, self._sync_now)
            return
        self._sync_now()

    def _sync_now(self) -> None:
        self._sync_later = None
        self._synced_at = self.clock()
        self._syncing = asyncio.ensure_future(asyncio.to_thread(self._sync_quietly))

    def _sync_quietly(self) -> None:
        try:
            self.sink.sync()
        except OSError as exc:
            self.last_error = f"cannot sync: {exc}"
            log.error("audit witness: cannot sync (%s)", exc)

    def _write_now(self) -> None:
        """Synchronously, when no event loop can run the writer (its shutdown)."""
        if not self.pending:
            return
        assert self._noted is not None
        position, mac = self._noted
        try:
            self.sink.write([self._line(position, mac)], self.now())
        except OSError as exc:
            self.failures += 1
            log.error("audit witness: cannot write head %d (%s)", position, exc)
            return
        self._written = max(self._written, position)

    async def _run(self) -> None:
        try:
            while True:
                wakes = [t for t in (self.schedule.deadline(), self._next_poll) if t is not None]
                timeout = max(0.0, min(wakes) - self.clock()) if wakes else None
                if not self._wake.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout)
                self._wake.clear()
                await self.tick()
        except asyncio.CancelledError:
            self._write_now()  # asyncio.run tearing the loop down: keep the last head
            raise

    def watch(self) -> None:
        """For ``serve`` and ``api``: also sign, within a minute, heads that one-shot
        commands committed (read from the database every :data:`POLL_S` seconds), and
        sign a checkpoint at shutdown."""
        self._watching = True
        self._next_poll = self.clock()
        self._kick()

    async def _poll(self, now: float) -> None:
        if self._next_poll is None or now < self._next_poll:
            return
        self._next_poll = now + POLL_S
        try:
            async with self._sessions() as session:
                head = await session.get(audit.AuditChainHead, 1)
                position = 0 if head is None else head.last_id
                signed = await session.scalar(select(func.max(audit.AuditCheckpoint.position)))
        except Exception as exc:  # the database away: the next poll
            log.warning("audit witness: cannot read the chain head (%s)", exc)
            return
        # the head is our own signed checkpoint's row, or one after the last signed
        if position > (signed or 0) + 1:
            self.schedule.seen(position, now=now, late_by=POLL_S)

    async def tick(self) -> None:
        """One turn of the writer: the newest head out, others' heads, the checkpoint if
        due."""
        await self._flush()
        await self._poll(self.clock())
        if self.schedule.due(self.clock()):
            await self.checkpoint(PERIODIC_REASON)

    async def checkpoint(self, reason: str) -> bool:
        """Sign the head now if a write of this process is not under a checkpoint yet."""
        if not self.schedule.unsigned or self.keys.sign is None:
            return False
        try:
            async with self._sessions() as session, session.begin():
                audit.request_checkpoint(session, reason)
        except Exception as exc:  # the database gone: say so, try again later
            self.schedule.failed(self.clock())
            log.error("audit checkpoint (%s) not written: %s", reason, exc)
            return False
        return True

    async def close(self) -> None:
        """Shutdown: a last checkpoint, every head written, the sink closed."""
        if self._closed:
            return
        if self._watching:  # a one-shot command leaves its checkpoint to the gateway
            await self.checkpoint(SHUTDOWN_REASON)
        await self.settled()
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._sync_later is not None:
            self._sync_later.cancel()
        if self._syncing is not None:
            await self._syncing
        self._write_now()
        self.sink.close()


# -- which witness -------------------------------------------------------------------------
def default_path(url: str) -> Path | None:
    """``<file>.witness`` beside a SQLite file; for a server database a file under the
    state folder named by host, port and database.  None for an in-memory database."""
    parsed = make_url(url)
    if parsed.get_backend_name().startswith("sqlite"):
        file = parsed.database or ""
        if not file or file == ":memory:" or file.startswith("file:"):
            return None
        path = Path(file).expanduser()
        return path.with_name(path.name + ".witness")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    name = f"{parsed.host or 'local'}_{parsed.port or 5432}_{parsed.database or 'default'}"
    return Path(state) / "reelgate" / f"{name}.witness"


def spec_for(url: str) -> WitnessSpec:
    """The configured witness (``$REELGATE_AUDIT_WITNESS``, filled from ``records.witness``),
    else the default file.  ValueError names what is wrong with a configured one."""
    given = os.environ.get(WITNESS_ENV)
    if given:
        spec = parse_spec(given)
    else:
        path = default_path(url)
        spec = WitnessSpec("none") if path is None else WitnessSpec("file", path)
    if spec.kind == "file" and spec.path is not None:
        _apart_from_keys(spec.path, url)
    return spec


def _apart_from_keys(path: Path, url: str) -> None:
    from gateway.records.chain import key_paths  # chain imports nothing of this module

    paths = key_paths(url)
    if paths is None:
        return
    keys_folder = paths.audit_key.resolve().parent
    if path.resolve().parent == keys_folder:
        raise ValueError(f"{path}: the witness must not be kept in the keys folder {keys_folder}")


def bind(engine: AsyncEngine, url: str) -> Witness | None:
    """Bind the witness for ``url`` to ``engine`` (needs the keys bound first)."""
    keys = audit.keys_of_engine(engine)
    spec = spec_for(url)
    sink = open_sink(spec)
    if keys is None or sink is None:
        audit.bind_witness(engine, None)
        return None
    witness = Witness(engine, sink, keys)
    audit.bind_witness(engine, witness)
    return witness


def witness_of(engine: AsyncEngine) -> Witness | None:
    found = audit.witness_of_engine(engine)
    return found if isinstance(found, Witness) else None
