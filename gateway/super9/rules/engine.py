"""The Super 9 draw engine: pure, incremental, fast.

Every valid spin calls its number (S9-12); after each spin the engine knows which
tickets have all nine numbers called (S9-13).

Layout for speed: each ticket is a 37-bit mask of its numbers (for the near-complete
list), and ``_holds[n]`` is a bitset over the tickets — one Python int, bit ``i`` set
when ticket ``i`` holds ``n``.  A ticket still lacks a number exactly when it is in the
bitset of some uncalled number, so when ``n`` is called for the first time the tickets
it completes are ``_holds[n]`` minus the union of the uncalled numbers' bitsets: about
36 big-int operations done in C, whatever the number of tickets.  Only the set bits are
then turned into ticket keys (a scan of the bitset's nonzero bytes, or the holder list
itself when every remaining holder completes), so a spin that completes nothing costs
microseconds, and one that completes thousands costs about as much as listing them.
A repeat (S9-19) does no work.  The near-complete list for displays is derived on
demand (cached per called set), off the spin-to-winners path.

A voided spin (S9-18.2) must never reach :meth:`DrawEngine.call`; the session decides
which spins are valid and replays from scratch if a spin is voided after the fact.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter
from typing import Generic, TypeVar

from gateway.super9.rules.tickets import validate_numbers

K = TypeVar("K", bound=Hashable)

_GONE = 1 << 40  # mask of a removed ticket: a bit no spin calls, so never complete
_AS_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_BITS_OF = [tuple(b for b in range(8) if v >> b & 1) for v in range(256)]  # byte -> bits


def _bitset(indexes: list[int], size: int) -> int:
    """The int with bit ``i`` set for every ``i`` in ``indexes`` (all loops run in C)."""
    flags = bytearray(size)
    deque(map(flags.__setitem__, indexes, repeat(1)), maxlen=0)
    return int(flags.translate(_AS_DIGITS)[::-1] or b"0", 2)


def _members(bits: int) -> list[int]:
    """The set bits of ``bits``, lowest first: only nonzero bytes reach Python code."""
    size = (bits.bit_length() + 7) // 8
    raw = bits.to_bytes(size, "little")
    return [j * 8 + b for j in compress(range(size), raw) for b in _BITS_OF[raw[j]]]


@dataclass(frozen=True, slots=True)
class SpinOutcome(Generic[K]):
    spin: int  # 1-based index among valid spins
    number: int
    repeat: bool  # number was already called (S9-19)
    distinct: int  # distinct numbers called so far
    completed: tuple[K, ...]  # tickets whose ninth number this spin called (S9-13)


class DrawEngine(Generic[K]):
    def __init__(self, tickets: Mapping[K, Iterable[int]], *, near: int = 2) -> None:
        self._keys: list[K] = list(tickets)
        self._index: dict[K, int] = {k: i for i, k in enumerate(self._keys)}
        self._holders: list[list[int]] = [[] for _ in range(37)]  # ticket indexes, rising
        holders = self._holders
        self._masks: list[int] = []
        for i, key in enumerate(self._keys):
            mask = 0
            for n in validate_numbers(tickets[key]):  # S9-8 and S9-9
                holders[n].append(i)
                mask |= 1 << n
            self._masks.append(mask)
        self._holds: list[int] = [_bitset(h, len(self._keys)) for h in holders]
        self._near = near
        self._called: list[int] = []
        self._called_mask = 0
        self._spins = 0
        # (called mask, [tickets with exactly j numbers to go for j = 0..near] as bitsets)
        self._near_cache: tuple[int, list[int]] | None = None
        self._done: list[tuple[int, list[int]]] = []  # (valid spin, ticket indexes)
        self._completed: dict[K, int] | None = None  # cache of :attr:`completed`
        self._n_done = 0  # completed tickets still in play

    @property
    def completed(self) -> dict[K, int]:
        """Ticket -> the valid spin that completed it (removed tickets left out).

        Built once per change and shared: read it, do not modify it.
        """
        if self._completed is None:
            keys, masks = self._keys, self._masks
            self._completed = {
                keys[i]: spin for spin, done in self._done for i in done if not masks[i] & _GONE
            }
        return self._completed

    @property
    def completed_count(self) -> int:
        """How many tickets in play are complete (without building :attr:`completed`)."""
        return self._n_done

    def completion_groups(self) -> Iterator[tuple[int, list[K]]]:
        """(valid spin, tickets in play it completed), in spin order, lazily."""
        keys, masks = self._keys, self._masks
        for spin, done in self._done:
            group = [keys[i] for i in done if not masks[i] & _GONE]
            if group:
                yield spin, group

    @property
    def called(self) -> list[int]:
        """Numbers in the order first called (repeats not listed twice)."""
        return list(self._called)

    @property
    def spins(self) -> int:
        """Valid spins so far, repeats included."""
        return self._spins

    def call(self, number: int) -> SpinOutcome[K]:
        if not 0 <= number <= 36:
            raise ValueError(f"number {number} is outside 0-36 (rule 8)")
        self._spins += 1
        bit = 1 << number
        if self._called_mask & bit:
            return SpinOutcome(self._spins, number, True, len(self._called), ())
        self._called_mask |= bit
        self._called.append(number)
        holds = self._holds
        lacking = 0  # tickets still missing some number: union over the uncalled ones
        for n in range(37):
            if not self._called_mask >> n & 1:
                lacking |= holds[n]
        fresh = holds[number] & ~lacking
        if not fresh:
            return SpinOutcome(self._spins, number, False, len(self._called), ())
        # Every holder left completes (the last numbers of a game): the list is at hand.
        done = list(self._holders[number]) if fresh == holds[number] else _members(fresh)
        self._done.append((self._spins, done))
        self._completed = None
        self._n_done += len(done)
        keys = self._keys
        completed = (keys[done[0]],) if len(done) == 1 else itemgetter(*done)(keys)
        return SpinOutcome(self._spins, number, False, len(self._called), completed)

    def remove(self, key: K) -> None:
        """Take a disqualified ticket out of the game (S9-9, S9-21); play goes on."""
        i = self._index[key]
        mask, self._masks[i] = self._masks[i], _GONE
        if mask & _GONE:
            return
        if not mask & ~self._called_mask:
            self._n_done -= 1  # it had completed
        out = ~(1 << i)
        for n in range(37):
            if mask >> n & 1:
                self._holds[n] &= out
                self._holders[n].remove(i)
        self._near_cache = None
        self._completed = None

    def remaining(self, key: K) -> int:
        """Numbers of ``key`` not yet called; -1 for a removed ticket."""
        mask = self._masks[self._index[key]]
        return -1 if mask & _GONE else (mask & ~self._called_mask).bit_count()

    def near_complete(self, limit: int = 50) -> list[tuple[K, int]]:
        """Tickets still in play with 1..near numbers to go, fewest first, then in order.

        Counted with bitsets, like :meth:`call`: ``exactly[j]`` holds the tickets with
        ``j`` of the uncalled numbers seen so far; adding each uncalled number's bitset
        moves its holders up one (those past ``near`` drop out).  Removed and completed
        tickets are in no uncalled bitset, so they stay at 0 and are never listed.
        """
        cache = self._near_cache
        if cache is None or cache[0] != self._called_mask:
            exactly = [(1 << len(self._keys)) - 1] + [0] * self._near
            for n in range(37):
                holds = self._holds[n]
                if self._called_mask >> n & 1 or not holds:
                    continue
                for j in range(self._near, 0, -1):
                    exactly[j] = (exactly[j] & ~holds) | (exactly[j - 1] & holds)
                exactly[0] &= ~holds
            cache = self._near_cache = (self._called_mask, exactly)
        rows: list[tuple[K, int]] = []
        for left in range(1, self._near + 1):
            bits = cache[1][left]
            while bits and len(rows) < limit:  # bounded by ``limit``: lowest ticket first
                low = bits & -bits
                rows.append((self._keys[low.bit_length() - 1], left))
                bits ^= low
        return rows
