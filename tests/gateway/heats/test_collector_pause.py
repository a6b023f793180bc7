"""The collector's pause at a heat's end (gateway.heats.collector_pause)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from gateway.heats.collector_pause import collector_held, pause_collector, resume_collector


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


async def test_paused_until_the_last_holder_lets_go() -> None:
    a, b = object(), object()
    pause_collector(a, 60.0)
    pause_collector(b, 60.0)
    assert not gc.isenabled()
    assert collector_held()
    resume_collector(a)
    assert not gc.isenabled()  # another heat is still in its end
    resume_collector(b)
    assert gc.isenabled()
    assert not collector_held()
    resume_collector(b)  # a second resume is a no-op
    assert gc.isenabled()


async def test_the_pause_ends_by_its_limit() -> None:
    holder = object()
    pause_collector(holder, 0.0)  # due at the next turn of the loop
    assert not gc.isenabled()
    for _ in range(10):  # bounded: the timer runs within a turn or two
        await asyncio.sleep(0)
        if gc.isenabled():
            break
    assert gc.isenabled()
    assert not collector_held()


async def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    holder = object()
    pause_collector(holder, 60.0)
    resume_collector(holder)
    assert not gc.isenabled()
