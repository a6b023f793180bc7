"""Monitoring around a running gateway: its metrics and checks bound, the systemd watch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from gateway.app.monitoring.ops import GatewayOps
from gateway.app.monitoring.systemd import Notifier, watch, watchdog_interval
from protocols.mqtt.client import MqttSession

if TYPE_CHECKING:
    from gateway.app.gateway import RunningGateway


async def recovered(gateway: RunningGateway) -> None:
    """Return once no bank is being recovered (banks taken later recover on their own)."""
    while pending := [t for t in gateway.running.busy.values() if not t.done()]:
        await asyncio.wait(pending)  # each recovery ends (done, failed or cancelled)


@contextlib.asynccontextmanager
async def monitored(
    gateway: RunningGateway,
    ops: GatewayOps,
    broker: MqttSession | None = None,
    notifier: Notifier | None = None,
) -> AsyncIterator[GatewayOps]:
    ops.bind(gateway, broker)
    notifier = notifier or Notifier.from_env()
    task = asyncio.create_task(
        watch(
            notifier,
            recovered=lambda: recovered(gateway),
            liveness=ops.liveness,
            readiness=ops.readiness,
            interval_s=watchdog_interval(),
        ),
        name="systemd-watch",
    )
    try:
        yield ops
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        notifier.close()
        ops.unbind()
