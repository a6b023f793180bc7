"""The ``heat_run`` row: one attempt at a heat on a bank, its state and clock.

Below both the journal (:mod:`storage.journal`, which writes it and re-exports it) and
the effects outbox (:mod:`storage.effects`, whose pending effects skip a busy bank's
runs), so neither imports the other's module to reach it.
"""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from storage.db import Base
from storage.types import UTCDateTime, enum_type


class RunState(enum.Enum):
    SCHEDULED = "scheduled"
    ARMED = "armed"  # machines locked in tournament mode, players seated
    RUNNING = "running"  # unlocks fired, heat clock running
    PAUSED = "paused"  # director pause: machines locked, clock stopped
    ENDING = "ending"  # heat clock over: locking every machine
    COLLECTING = "collecting"  # reading tournament meters, storing scores
    CLOSED = "closed"  # scores stored; machines being returned to normal play
    ABORTED = "aborted"  # director abort: no scores count, machines released
    RESTARTED = "restarted"  # T20: this attempt is void, the heat runs again


TERMINAL_STATES = frozenset({RunState.CLOSED, RunState.ABORTED, RunState.RESTARTED})


class HeatRun(Base):
    __tablename__ = "heat_run"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bank_name: Mapped[str] = mapped_column(String(32), nullable=False, index=True)
    # The tournament heat this run plays (storage.tournament), None for a technician's
    # test heat.  Kept without a foreign key so the journal never blocks on that schema.
    heat_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    attempt: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    credits: Mapped[int] = mapped_column(Integer, nullable=False)
    seconds: Mapped[int] = mapped_column(Integer, nullable=False)
    state: Mapped[RunState] = mapped_column(enum_type(RunState, "run_state"), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    # The heat clock's authority: play ends here, whatever the machine timers say.
    ends_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    paused_left_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # True once every machine is back in normal play: the run needs nothing more.
    settled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # F5: the heat's format as journaled when the run was made (gateway.heat_formats spec;
    # NULL = timed, as every run before formats), so recovery reads the same limit.
    format: Mapped[str | None] = mapped_column(String(40), nullable=True)
