"""argon2 off the event loop, a few at a time, and the same work for a name that is no
account.

A verify costs ~0.5 s of CPU and 64 MiB (RFC 9106's second recommendation); on the event
loop it stopped every request for that long.  It runs in a worker thread (argon2-cffi
releases the GIL), at most :data:`SLOTS` at once per event loop: more would only share
the same cores and multiply the memory, and a flood of logins waits its turn here
instead of starving the desks.  A name that is no account (or a disabled one) is
verified against :func:`dummy_hash`, made by the same hasher with the same parameters,
so both answers take one verify.

The workers are threads of their own (:data:`POOL`), at a lower CPU priority than the
event loop (``nice`` :data:`NICE`, Linux: a thread's own): on a busy two-core host two
verifies and the loop's thread were three runnable threads of equal weight, so the loop
waited its turn behind argon2 and a burst of sign-ins stalled every desk's request
(issue 31, item 4).  Now the loop's thread preempts them whenever it has work; argon2
gets what is left, which only makes a sign-in slower while the desks are busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from argon2 import PasswordHasher

import storage.accounts
from storage.accounts import password_matches as password_matches  # tests count the calls

SLOTS = 2
NICE = 10  # added to the workers' nice value: the event loop's thread comes first

T = TypeVar("T")

_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)
# The hasher itself is held, not its id(): a freed hasher's id can be reused by the next.
_dummy: list[tuple[PasswordHasher, str]] = []  # (hasher, a hash of nothing anyone knows)


def dummy_hash() -> str:
    """A hash with the current hasher's parameters that no password matches (in practice:
    its password is random and forgotten)."""
    hasher = storage.accounts.HASHER
    if _dummy and _dummy[0][0] is hasher:
        return _dummy[0][1]
    made = hasher.hash(secrets.token_urlsafe(32))
    _dummy[:] = [(hasher, made)]
    return made


def _lower_priority() -> None:
    """A worker's start: lower its own CPU priority (Linux keeps a nice value per
    thread; elsewhere, or where refused, it runs at the process's)."""
    with contextlib.suppress(AttributeError, OSError):  # not Linux: the process's
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(os.getpriority(os.PRIO_PROCESS, me) + NICE, 19))


@functools.cache  # one pool per process, made on the first sign-in
def pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(SLOTS, "argon2", initializer=_lower_priority)


async def _in_worker(work: Callable[..., T], *args: str | None) -> T:
    async with _slots_of_loop():
        return await asyncio.get_running_loop().run_in_executor(pool(), work, *args)


def _slots_of_loop() -> asyncio.Semaphore:
    # A semaphore serves one event loop (tests run each on a loop of their own).
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(SLOTS)
    return slots


async def verify(stored_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored_hash`` (None: no account; the dummy hash is
    verified instead and the answer is False)."""
    return await _in_worker(_matches, stored_hash, password)


def _matches(stored_hash: str | None, password: str) -> bool:
    # In the worker: the dummy hash is made here the first time (one hash's cost).
    if stored_hash is None:
        password_matches(dummy_hash(), password)
        return False
    return password_matches(stored_hash, password)


async def hash_new(password: str) -> str:
    """A new password's hash, in a worker thread under the same slots."""
    return await _in_worker(storage.accounts.hash_password, password)
