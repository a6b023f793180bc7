"""argon2 off the event loop, a few at a time, and the same work for a name that is no
account.

A verify costs ~0.5 s of CPU and 64 MiB (RFC 9106's second recommendation); on the event
loop it stopped every request for that long.  It runs in a worker thread (argon2-cffi
releases the GIL), at most :data:`SLOTS` at once per event loop: more would only share
the same cores and multiply the memory, and a flood of logins waits its turn here
instead of starving the desks.  A name that is no account (or a disabled one) is
verified against :func:`dummy_hash`, made by the same hasher with the same parameters,
so both answers take one verify.
"""

from __future__ import annotations

import asyncio
import secrets
import weakref

from argon2 import PasswordHasher

import storage.accounts
from storage.accounts import password_matches as password_matches  # tests count the calls

SLOTS = 2

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
    async with _slots_of_loop():
        return await asyncio.to_thread(_matches, stored_hash, password)


def _matches(stored_hash: str | None, password: str) -> bool:
    # In the worker: the dummy hash is made here the first time (one hash's cost).
    if stored_hash is None:
        password_matches(dummy_hash(), password)
        return False
    return password_matches(stored_hash, password)


async def hash_new(password: str) -> str:
    """A new password's hash, in a worker thread under the same slots."""
    async with _slots_of_loop():
        return await asyncio.to_thread(storage.accounts.hash_password, password)
