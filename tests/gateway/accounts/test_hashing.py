"""argon2 off the event loop (issue 25.3): each verify in a worker thread, at most SLOTS at
once per event loop; a name that is no account verifies the dummy hash (one verify, the
same parameters)."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest
from argon2 import PasswordHasher

import storage.accounts
from gateway.accounts import hashing


@pytest.fixture(autouse=True)
def cheap_argon2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    )


async def test_verify_runs_in_a_worker_thread_a_few_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop_thread = threading.get_ident()
    loop = asyncio.get_running_loop()
    release = threading.Event()
    full = asyncio.Event()
    running: list[int] = []

    def slow(stored: str, password: str) -> bool:
        running.append(threading.get_ident())
        if len(running) == hashing.SLOTS:
            loop.call_soon_threadsafe(full.set)
        release.wait(timeout=30)
        return stored == "right" and password == "pw"

    monkeypatch.setattr(hashing, "password_matches", slow)
    tasks = [asyncio.create_task(hashing.verify("right", "pw")) for _ in range(6)]
    await asyncio.wait_for(full.wait(), 30)  # the first SLOTS reach their threads
    for _ in range(20):
        await asyncio.sleep(0)  # every task has run up to its first wait
    slots = hashing._slots_of_loop()
    assert slots.locked()  # the other four wait their turn on the loop, not in threads
    assert len(running) == hashing.SLOTS
    assert loop_thread not in running
    release.set()
    assert await asyncio.gather(*tasks) == [True] * 6
    assert len(running) == 6


async def test_no_account_costs_one_verify_of_the_dummy_hash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[str] = []
    real = hashing.password_matches

    def counting(stored: str, password: str) -> bool:
        checked.append(stored)
        return real(stored, password)

    monkeypatch.setattr(hashing, "password_matches", counting)
    assert await hashing.verify(None, "anything at all") is False
    assert checked == [hashing.dummy_hash()]
    real_hash = storage.accounts.hash_password("correct horse battery")
    assert await hashing.verify(real_hash, "correct horse battery") is True
    # Same algorithm and parameters (the "$argon2id$v=19$m=..,t=..,p=.." prefix).
    assert real_hash.split("$")[1:4] == hashing.dummy_hash().split("$")[1:4]


async def test_the_dummy_hash_follows_the_hasher(monkeypatch: pytest.MonkeyPatch) -> None:
    before = hashing.dummy_hash()
    monkeypatch.setattr(
        storage.accounts, "HASHER", PasswordHasher(time_cost=2, memory_cost=128, parallelism=1)
    )
    after = hashing.dummy_hash()
    assert "m=128,t=2" in after
    assert after != before


async def test_workers_run_below_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31, item 4: argon2's workers run at a lower CPU priority than the event
    loop's thread (Linux keeps one per thread), so a burst of sign-ins cannot take the
    cores from the desks' requests."""
    if not hasattr(os, "getpriority"):
        pytest.skip("no per-thread priority here")
    seen: list[tuple[int, int]] = []

    def recording(stored: str, password: str) -> bool:
        seen.append(
            (threading.get_ident(), os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        )
        return True

    monkeypatch.setattr(hashing, "password_matches", recording)
    loop_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert await hashing.verify("stored", "pw") is True
    [(thread, nice)] = seen
    assert thread != threading.get_ident()
    assert nice == min(loop_nice + hashing.NICE, 19)


async def test_a_new_password_is_hashed_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding an account (the console's user page) hashes in the same workers."""
    threads: list[int] = []
    real = storage.accounts.hash_password

    def recording(password: str) -> str:
        threads.append(threading.get_ident())
        return real(password)

    monkeypatch.setattr(storage.accounts, "hash_password", recording)
    made = await hashing.hash_new("correct horse battery")
    assert threads
    assert threads[0] != threading.get_ident()
    assert storage.accounts.password_matches(made, "correct horse battery")
