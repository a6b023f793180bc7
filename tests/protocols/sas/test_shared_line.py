"""Several EGMs on one SAS line: one port, one line, one message at a time.

Emulated multi-drop loops (``Bank(loop_size=N)``: N machines at addresses 1..N behind
one TCP port, as an interface board fronting a serial loop) against clients from one
:class:`LinePool`.  Spacing assertions are lower bounds (a slow machine can only make
gaps longer), so they hold under any load.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest

from emulators.bank import Bank
from gateway.machines.sas import SasDriver
from protocols.sas.client import SasClient, SasLinkLost
from protocols.sas.endpoint import parse_endpoint
from protocols.sas.lines import LinePool, port_key, shared_lines

SPACING = 0.05


@pytest.fixture
async def loop8() -> AsyncIterator[Bank]:
    async with Bank(8, seed=3, loop_size=8) as b:
        yield b


@pytest.fixture
async def pool() -> AsyncIterator[LinePool]:
    p = LinePool()
    yield p
    await p.close()


async def clients(bank: Bank, pool: LinePool) -> list[SasClient]:
    return [await pool.client(m.endpoint, min_spacing=SPACING) for m in bank.machines]


async def test_a_loop_is_one_port_with_addresses_1_to_n(loop8: Bank) -> None:
    ports = {m.port for m in loop8.machines}
    assert len(ports) == 1
    assert [m.face.address for m in loop8.machines] == list(range(1, 9))
    assert len({port_key(parse_endpoint(m.endpoint)) for m in loop8.machines}) == 1


async def test_every_egm_answers_for_itself_over_one_line(loop8: Bank, pool: LinePool) -> None:
    for i, m in enumerate(loop8.machines):
        m.machine.cashable_credits = 100 * (i + 1)
    cs = await clients(loop8, pool)
    assert len({id(c.line) for c in cs}) == 1  # one line for the port
    got = await asyncio.gather(*(c.credits() for c in cs))
    assert got == [100 * (i + 1) for i in range(8)]
    assert all(m.face.polls_seen >= 1 for m in loop8.machines)


async def test_one_message_at_a_time_and_spacing_per_machine(loop8: Bank, pool: LinePool) -> None:
    # sas.md §1: one poll in flight on a loop; at most one poll to an EGM per spacing
    handled: list[tuple[int, float]] = []
    for m in loop8.machines:
        addr = m.face.address
        m.face.on_poll = lambda t, addr=addr: handled.append((addr, t))
    cs = await clients(loop8, pool)
    await asyncio.gather(*(c.general_poll() for c in cs for _ in range(3)))
    flights = [c.line.schedule.stats for c in cs]
    assert flights[0].exchanges == 24
    for c in cs:
        assert c.stats.polls == 3
        assert c.stats.min_gap is not None
        assert c.stats.min_gap >= SPACING - 1e-9
    by_addr: dict[int, list[float]] = {}
    for addr, t in handled:
        by_addr.setdefault(addr, []).append(t)
    for times in by_addr.values():
        assert all(b > a for a, b in itertools.pairwise(times))


async def test_a_bank_start_on_a_loop_goes_back_to_back_in_firing_order(
    loop8: Bank, pool: LinePool
) -> None:
    order: list[int] = []
    for m in loop8.machines:
        m.machine.lock_play()
        addr = m.face.address
        m.face.on_poll = lambda t, addr=addr: order.append(addr)
    cs = await clients(loop8, pool)
    await asyncio.sleep(SPACING)  # out of the spacing of the clients' first polls (none yet)
    prepared = [c.prepare_unlock() for c in reversed(cs)]
    pending = [p.fire() for p in prepared]  # one tight loop: the first goes, 7 queue urgent
    assert cs[-1].line.schedule.waiting == 7
    await asyncio.gather(*pending)
    assert order == list(range(8, 0, -1))
    assert all(m.machine.play_enabled() for m in loop8.machines)


async def test_losing_the_port_fails_everything_waiting_and_the_pool_reopens(
    loop8: Bank, pool: LinePool
) -> None:
    cs = await clients(loop8, pool)
    waits = [asyncio.ensure_future(c.credits()) for c in cs]
    await asyncio.sleep(0)
    loop8.machines[0].face.drop_connection()  # the board's cable: every EGM behind it
    results = await asyncio.gather(*waits, return_exceptions=True)
    assert any(isinstance(r, SasLinkLost) for r in results)
    assert all(c.closed for c in cs)
    again = await pool.client(loop8.machines[3].endpoint, min_spacing=SPACING)
    assert again.line is not cs[3].line
    assert await again.credits() == loop8.machines[3].machine.credits


async def test_the_last_client_to_leave_closes_the_port(loop8: Bank, pool: LinePool) -> None:
    cs = await clients(loop8, pool)
    line = cs[0].line
    for c in cs[:-1]:
        await c.close()
        assert not line.closed  # others are still on it
    assert await cs[-1].credits() == loop8.machines[-1].machine.credits
    await cs[-1].close()
    assert line.closed
    assert pool.line(loop8.machines[0].endpoint) is None


async def test_drivers_of_one_loop_share_the_process_line(loop8: Bank) -> None:
    drivers = [
        SasDriver(m.machine.machine_id, parse_endpoint(m.endpoint), min_spacing=SPACING)
        for m in loop8.machines
    ]
    try:
        for d in drivers:
            await d.open()
        first = shared_lines().line(loop8.machines[0].endpoint)
        assert first is not None
        assert all(shared_lines().line(m.endpoint) is first for m in loop8.machines)
        assert len(await asyncio.gather(*(d.credits() for d in drivers))) == 8
    finally:
        for d in drivers:
            await d.close()
    assert shared_lines().line(loop8.machines[0].endpoint) is None  # closed by the last
