"""Prometheus metrics of a running gateway, read when scraped.

The poll path pays nothing for them: the drivers keep plain integer counters
(:class:`~gateway.machines.capabilities.CountedLink`) and :class:`GatewayCollector`
turns them into metric families only when ``/metrics`` is asked.  What only the database
knows (each bank's latest heat run and lease) is read once per scrape by
:meth:`DatabaseSnapshot.refresh`, bounded, before the registry is rendered; a scrape
during an outage shows the last values read and ``reelgate_database_read_ok 0``.

Per heat, when the scheduler reaps it (:class:`HeatMetrics`): the start skew (spread of
the machines' unlock acknowledgements) and the time from the heat clock's end to the last
score stored, as histograms and as the bank's last values.

Names (every one prefixed ``reelgate_``): ``machine_polls_total``, ``machine_replies_total``,
``machine_timeouts_total``, ``machine_nacks_total``, ``machine_retries_total``,
``machine_failures_total`` and ``machine_link_up`` by bank and machine; ``heat_state``
by bank and state; ``heat_start_skew_seconds``, ``heat_end_to_stored_seconds`` and
``heats_finished_total`` by bank; ``spool_depth``, ``spool_writes_total``; ``bank_lease``
by bank and holder; ``bank_lease_held`` by bank (this process); ``event_loop_lag_seconds``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, TypeGuard

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.app.monitoring.checks import CHECK_TIMEOUT_S, link_up
from gateway.app.monitoring.loop import LoopWatch
from gateway.heats.heat_core import HeatOutcome
from gateway.heats.spool import JournalWriter
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.capabilities import CountedLink, LinkCounters
from gateway.machines.links import MachineLink
from storage.db import READ_ONLY
from storage.journal import HeatRun, RunState
from storage.lease import BankLease

log = logging.getLogger(__name__)

IDLE = "idle"  # a bank that never ran a heat
HEAT_STATES = (IDLE, *(s.value for s in RunState))
# Skew: milliseconds on a healthy bank; end-to-stored: well under a second to a few s.
SKEW_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
STORED_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)
_COUNTER_HELP = {
    "polls": "requests sent to the machine (SAS polls, MQTT commands)",
    "replies": "requests the machine answered",
    "timeouts": "tries that got no reply in time",
    "nacks": "tries the machine refused at the link level (SAS NACK, board refusal)",
    "retries": "repeats sent after a timeout, NACK or garbled reply",
    "failures": "requests given up after every try",
}


@dataclass(slots=True)
class DatabaseSnapshot:
    """Each bank's latest heat run state and lease holder, as last read."""

    states: dict[str, str] = field(default_factory=dict)  # bank -> RunState value
    holders: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # live leases
    ok: bool = False
    read_at: datetime | None = None

    async def refresh(
        self, sessions: async_sessionmaker[AsyncSession], timeout_s: float = CHECK_TIMEOUT_S
    ) -> None:
        try:
            async with asyncio.timeout(timeout_s):
                states, holders = await _read(sessions, datetime.now(UTC))
        except Exception as exc:  # an outage: keep what was read last
            log.debug("metrics: database not read (%s)", exc)
            self.ok = False
            return
        self.states, self.holders = states, holders
        self.ok, self.read_at = True, datetime.now(UTC)


async def _read(
    sessions: async_sessionmaker[AsyncSession], now: datetime
) -> tuple[dict[str, str], dict[str, tuple[str, str, int]]]:
    """Each bank's latest run state and live lease, in one read-only transaction (on
    SQLite it takes no write lock: a scrape never queues behind the journal's writes)."""
    latest = select(func.max(HeatRun.id)).group_by(HeatRun.bank_name).scalar_subquery()
    async with sessions() as session:
        await session.connection(execution_options=READ_ONLY)
        runs = (
            await session.execute(
                select(HeatRun.bank_name, HeatRun.state).where(HeatRun.id.in_(latest))
            )
        ).all()
        leases = (
            await session.execute(
                select(BankLease.bank_name, BankLease.holder, BankLease.host, BankLease.pid)
                .where(BankLease.released.is_(False), BankLease.expires_at > now)
            )
        ).all()
    return (
        {bank: state.value for bank, state in runs},
        {bank: (holder, host, pid) for bank, holder, host, pid in leases},
    )


class HeatMetrics:
    """Observed once per heat, when the scheduler reaps it (not on any poll path)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.skew = Histogram(
            "reelgate_heat_start_skew_seconds",
            "spread of the machines' unlock acknowledgements at a heat's start",
            ("bank",), registry=registry, buckets=SKEW_BUCKETS,
        )  # fmt: skip
        self.stored = Histogram(
            "reelgate_heat_end_to_stored_seconds",
            "from the heat clock's end to the last score of the heat stored",
            ("bank",), registry=registry, buckets=STORED_BUCKETS,
        )  # fmt: skip
        self.last_skew = Gauge(
            "reelgate_heat_last_start_skew_seconds", "the bank's last heat's start skew",
            ("bank",), registry=registry,
        )  # fmt: skip
        self.last_stored = Gauge(
            "reelgate_heat_last_end_to_stored_seconds",
            "the bank's last heat's end-to-stored time", ("bank",), registry=registry,
        )  # fmt: skip
        self.finished = Counter(
            "reelgate_heats_finished", "heats driven to an end by this process",
            ("bank", "state"), registry=registry,
        )  # fmt: skip

    def observe(self, bank: str, outcome: HeatOutcome) -> None:
        self.finished.labels(bank, outcome.state.value).inc()
        skew = start_skew_s(outcome)
        if skew is not None:
            self.skew.labels(bank).observe(skew)
            self.last_skew.labels(bank).set(skew)
        stored = end_to_stored_s(outcome)
        if stored is not None:
            self.stored.labels(bank).observe(stored)
            self.last_stored.labels(bank).set(stored)


def start_skew_s(outcome: HeatOutcome) -> float | None:
    acks = [s.unlock_ack_ms for s in outcome.seats.values() if s.unlock_ack_ms is not None]
    return (max(acks) - min(acks)) / 1000 if acks else None


def end_to_stored_s(outcome: HeatOutcome) -> float | None:
    if outcome.committed_at is None or outcome.ends_at is None:
        return None
    return max(0.0, (outcome.committed_at - outcome.ends_at).total_seconds())


class GatewayView(Protocol):
    """What the collector reads of the running gateway, at each scrape."""

    @property
    def links(self) -> Mapping[str, Mapping[str, MachineLink]]: ...

    @property
    def supervisors(self) -> Mapping[str, BankSupervisor]: ...

    @property
    def writer(self) -> JournalWriter: ...

    @property
    def banks(self) -> Iterable[str]:
        """Every bank on the floor."""
        ...

    @property
    def held(self) -> Iterable[str]:
        """The banks whose lease this process holds."""
        ...


COUNTER_NAMES = ("polls", "replies", "timeouts", "nacks", "retries", "failures")


def _values(c: LinkCounters) -> tuple[int, ...]:
    return (c.polls, c.replies, c.timeouts, c.nacks, c.retries, c.failures)  # COUNTER_NAMES


_COUNTED: dict[type, bool] = {}


def counted(driver: object) -> TypeGuard[CountedLink]:
    """``isinstance(driver, CountedLink)``, decided once per driver class: a protocol
    check walks every member each time, and a scrape asks it of every machine."""
    kind = type(driver)
    known = _COUNTED.get(kind)
    if known is None:
        known = _COUNTED[kind] = isinstance(driver, CountedLink)
    return known


class LoopCollector(Collector):
    def __init__(self, loop: LoopWatch) -> None:
        self.loop = loop

    def collect(self) -> Iterable[Metric]:
        yield GaugeMetricFamily(
            "reelgate_event_loop_lag_seconds", "how late the event loop's last heartbeat was",
            value=self.loop.lag_s,
        )  # fmt: skip


class GatewayCollector(Collector):
    """Reads the gateway's counters at scrape time (see the module docstring)."""

    def __init__(self, view: GatewayView, snapshot: DatabaseSnapshot) -> None:
        self.view = view
        self.snapshot = snapshot

    def collect(self) -> Iterable[Metric]:
        yield from self._machines()
        yield from self._banks()
        writer = self.view.writer
        yield GaugeMetricFamily(
            "reelgate_spool_depth", "journal writes waiting for the database",
            value=writer.spool_depth(),
        )  # fmt: skip
        yield CounterMetricFamily(
            "reelgate_spool_writes", "journal writes that went through the spool",
            value=writer.spooled_total,
        )  # fmt: skip
        yield GaugeMetricFamily(
            "reelgate_database_read_ok", "1 if the last scrape read the database",
            value=1 if self.snapshot.ok else 0,
        )  # fmt: skip

    def _machines(self) -> Iterable[Metric]:
        families = [
            CounterMetricFamily(
                f"reelgate_machine_{name}", _COUNTER_HELP[name], labels=("bank", "machine")
            )
            for name in COUNTER_NAMES
        ]
        up = GaugeMetricFamily(
            "reelgate_machine_link_up", "1 while the machine's link answers",
            labels=("bank", "machine"),
        )  # fmt: skip
        for bank, links in sorted(self.view.links.items()):
            supervisor = self.view.supervisors.get(bank)
            for machine_id, link in sorted(links.items()):
                labels = (bank, machine_id)
                up.add_metric(labels, 1 if link_up(link, supervisor) else 0)
                driver = link.driver
                if not counted(driver):
                    continue
                for family, value in zip(families, _values(driver.link_counters()), strict=True):
                    family.add_metric(labels, value)
        yield from families
        yield up

    def _banks(self) -> Iterable[Metric]:
        state = GaugeMetricFamily(
            "reelgate_heat_state", "1 for the state of the bank's latest heat run",
            labels=("bank", "state"),
        )  # fmt: skip
        lease = GaugeMetricFamily(
            "reelgate_bank_lease", "1 for the process holding the bank's live lease",
            labels=("bank", "holder", "host", "pid"),
        )  # fmt: skip
        held = GaugeMetricFamily(
            "reelgate_bank_lease_held", "1 while this process holds the bank's lease",
            labels=("bank",),
        )  # fmt: skip
        snap = self.snapshot
        mine = set(self.view.held)
        for bank in sorted(self.view.banks):
            current = snap.states.get(bank, IDLE)
            for value in HEAT_STATES:
                state.add_metric((bank, value), 1 if value == current else 0)
            holder = snap.holders.get(bank)
            if holder is not None:
                lease.add_metric((bank, holder[0], holder[1], str(holder[2])), 1)
            held.add_metric((bank,), 1 if bank in mine else 0)
        yield from (state, lease, held)
