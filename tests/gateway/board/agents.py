"""Interface-board agents in front of emulated EGMs (SAS over loopback TCP)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from emulators.bank import Bank
from gateway.board.agent import BoardAgent
from gateway.board.clock import GatewayClock
from gateway.machines.sas import SasDriver
from protocols.mqtt.client import MqttSettings
from protocols.sas.endpoint import parse_endpoint

SPACING = 0.02  # the emulated EGM answers at once; the SAS 200 ms only slows tests


AFT_KEY = "0123456789abcdef0123456789abcdef01234567"  # the floor's AFT host identity
AFT_POS_ID = 7001


def make_agent(
    bank: Bank,
    index: int,
    broker_url: str,
    site: str,
    *,
    clock: GatewayClock | None = None,
    event_queue: int = 256,
) -> BoardAgent:
    machine = bank.machines[index]
    board_id = machine.machine.machine_id
    driver = SasDriver(board_id, parse_endpoint(machine.endpoint), min_spacing=SPACING)
    driver.use_aft_host(AFT_KEY, AFT_POS_ID)  # the emulated EGMs enforce AFT registration
    settings = MqttSettings.from_url(broker_url)
    return BoardAgent(
        board_id,
        driver,
        settings,
        site,
        clock=clock,
        poll_interval=0.05,
        max_backoff=0.2,
        event_queue=event_queue,
    )


@asynccontextmanager
async def agents_on_bank(
    broker_url: str, site: str, count: int = 1, *, no_tournament_support: int = 0, seed: int = 3
) -> AsyncIterator[tuple[Bank, list[BoardAgent]]]:
    """``count`` emulated EGMs, each behind a started agent on ``broker_url``."""
    async with Bank(count, seed=seed, no_tournament_support=no_tournament_support) as bank:
        agents = [make_agent(bank, i, broker_url, site) for i in range(count)]
        try:
            for agent in agents:
                await agent.start()
            yield bank, agents
        finally:
            for agent in agents:
                await agent.stop()


async def until(predicate: Callable[[], bool], what: str, within: float = 10.0) -> None:
    """Wait (bounded) for a condition that the agent's loops bring about."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
