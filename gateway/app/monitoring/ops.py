"""What ``/metrics``, ``/healthz`` and ``/readyz`` serve (:class:`~gateway.web.api.ops.Operations`).

:class:`ProcessOps` is a process with a database and nothing else (``reelgate api``):
live while its event loop turns, ready while the database answers.  :class:`GatewayOps`
is ``reelgate serve``: before the gateway is up (recovery under way, the banks not yet
taken) it is live but not ready; :meth:`GatewayOps.bind` adds the gateway's metrics
(:mod:`.metrics`) and readiness checks (:mod:`.checks`).  Each has its own Prometheus
registry, never the global one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, ProcessCollector
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app.monitoring.checks import (
    SPOOL_LIMIT,
    bank_checks,
    broker_check,
    database_check,
    recovery_check,
    spool_check,
    witness_check,
)
from gateway.app.monitoring.loop import LoopWatch
from gateway.app.monitoring.metrics import (
    DatabaseSnapshot,
    GatewayCollector,
    HeatMetrics,
    LoopCollector,
)
from gateway.heats.spool import JournalWriter
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.links import MachineLink
from gateway.web.api.ops import Check
from protocols.mqtt.client import MqttSession

if TYPE_CHECKING:
    from gateway.app.gateway import RunningGateway


class ProcessOps:
    def __init__(self, *, loop: LoopWatch | None = None) -> None:
        self._registry = CollectorRegistry()
        self.loop = loop or LoopWatch()
        self._registry.register(LoopCollector(self.loop))
        ProcessCollector(registry=self._registry)  # CPU, memory, open files (Linux /proc)
        self._database: tuple[str, AsyncEngine] | None = None

    @property
    def registry(self) -> CollectorRegistry:
        return self._registry

    def use_database(self, url: str, engine: AsyncEngine) -> None:
        self._database = (url, engine)

    def start(self) -> None:
        self.loop.start()

    async def close(self) -> None:
        await self.loop.close()

    async def before_scrape(self) -> None:
        return None

    def liveness(self) -> Sequence[Check]:
        return [self.loop.check()]

    async def database(self) -> Check:
        if self._database is None:
            return Check("database", False, "not opened yet")
        return await database_check(*self._database)

    def witness(self) -> list[Check]:
        """The audit chain's witness: not ready while its last write failed."""
        if self._database is None:
            return []
        found = witness_check(self._database[1])
        return [] if found is None else [found]

    async def readiness(self) -> Sequence[Check]:
        return [await self.database(), *self.witness()]


class _Live:
    """The running gateway as :class:`GatewayCollector` reads it (fresh at every scrape:
    the floor is reloaded, banks are taken and let go)."""

    def __init__(self, gateway: RunningGateway) -> None:
        self._gateway = gateway

    @property
    def links(self) -> Mapping[str, Mapping[str, MachineLink]]:
        return self._gateway.links

    @property
    def supervisors(self) -> Mapping[str, BankSupervisor]:
        return self._gateway.supervisors

    @property
    def writer(self) -> JournalWriter:
        return self._gateway.context.writer

    @property
    def banks(self) -> Iterable[str]:
        return self._gateway.context.floor.banks

    @property
    def held(self) -> Iterable[str]:
        ownership = self._gateway.ownership
        return () if ownership is None else list(ownership.leases)


class GatewayOps(ProcessOps):
    def __init__(self, *, spool_limit: int = SPOOL_LIMIT, loop: LoopWatch | None = None) -> None:
        super().__init__(loop=loop)
        self.spool_limit = spool_limit
        self.heats = HeatMetrics(self.registry)
        self.snapshot = DatabaseSnapshot()
        self.gateway: RunningGateway | None = None
        self.broker: MqttSession | None = None
        self._collector: GatewayCollector | None = None

    def bind(self, gateway: RunningGateway, broker: MqttSession | None = None) -> None:
        """The gateway is up (its banks taken, recoveries started): serve its state."""
        self.gateway, self.broker = gateway, broker
        self._collector = GatewayCollector(_Live(gateway), self.snapshot)
        self.registry.register(self._collector)
        gateway.running.on_finished.append(self.heats.observe)

    def unbind(self) -> None:
        if self._collector is not None:
            self.registry.unregister(self._collector)
            self._collector = None
        self.gateway = None

    async def before_scrape(self) -> None:
        if self.gateway is not None and self.gateway.ctx is not None:
            await self.snapshot.refresh(self.gateway.ctx.sessions)

    async def database(self) -> Check:
        gateway = self.gateway
        if gateway is None or gateway.ctx is None:
            return await super().database()
        return await database_check(gateway.ctx.url, gateway.ctx.engine)

    async def readiness(self) -> Sequence[Check]:
        checks = [await self.database(), *self.witness()]
        gateway = self.gateway
        if gateway is None or gateway.ctx is None or gateway.scheduler is None:
            return [*checks, Check("gateway", False, "starting: banks not taken yet")]
        checks.append(spool_check(gateway.ctx.writer, self.spool_limit))
        if self.broker is not None:
            checks.append(broker_check(self.broker))
        checks.append(recovery_check(gateway.scheduler.busy))
        checks.extend(bank_checks(gateway.ctx.floor, gateway.links, gateway.supervisors))
        return checks
