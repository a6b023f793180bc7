"""The Super 9 draw engine: pure, incremental, fast.

Every valid spin calls its number (rule 12); after each spin the engine knows which
tickets have all nine numbers called (rule 13).

Layout for speed: each ticket is a 37-bit mask of its numbers, and ``_holders[n]``
lists the tickets holding number ``n`` (an inverted index).  A spin that calls a new
number ``n`` looks only at the tickets holding ``n`` — about a quarter of them — and a
ticket is complete when its mask has no bit outside the called set; a repeat (rule 19)
looks at none.  Only tickets holding ``n`` can complete on ``n``, so nothing else needs
checking.  The near-complete list for displays is derived on demand (cached per called
set), off the spin-to-winners path.

A voided spin (rule 18.2) must never reach :meth:`DrawEngine.call`; the session decides
which spins are valid and replays from scratch if a spin is voided after the fact.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from gateway.super9.tickets import validate_numbers

K = TypeVar("K", bound=Hashable)

_GONE = 1 << 40  # mask of a removed ticket: a bit no spin calls, so never complete
# Uncalled set as a non-negative mask (CPython's & on negative ints is slower).
_ALL = (1 << 37) - 1 | _GONE


@dataclass(frozen=True, slots=True)
class SpinOutcome(Generic[K]):
    spin: int  # 1-based index among valid spins
    number: int
    repeat: bool  # number was already called (rule 19)
    distinct: int  # distinct numbers called so far
    completed: tuple[K, ...]  # tickets whose ninth number this spin called (rule 13)


class DrawEngine(Generic[K]):
    def __init__(self, tickets: Mapping[K, Iterable[int]], *, near: int = 2) -> None:
        self._keys: list[K] = list(tickets)
        self._index: dict[K, int] = {k: i for i, k in enumerate(self._keys)}
        self._holders: list[list[int]] = [[] for _ in range(37)]
        self._masks: list[int] = []
        for i, key in enumerate(self._keys):
            mask = 0
            for n in validate_numbers(tickets[key]):  # rules 8 and 9
                self._holders[n].append(i)
                mask |= 1 << n
            self._masks.append(mask)
        self._near = near
        self._called: list[int] = []
        self._called_mask = 0
        self._spins = 0
        self._near_cache: tuple[int, list[tuple[int, int]]] | None = None
        self._done: list[tuple[int, list[int]]] = []  # (valid spin, ticket indexes)

    @property
    def completed(self) -> dict[K, int]:
        """Ticket -> the valid spin that completed it (removed tickets left out)."""
        keys, masks = self._keys, self._masks
        return {keys[i]: spin for spin, done in self._done for i in done if not masks[i] & _GONE}

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
        uncalled = _ALL ^ self._called_mask
        masks = self._masks
        done = [i for i in self._holders[number] if not masks[i] & uncalled]
        if done:
            self._done.append((self._spins, done))
        completed = tuple(map(self._keys.__getitem__, done))
        return SpinOutcome(self._spins, number, False, len(self._called), completed)

    def remove(self, key: K) -> None:
        """Take a disqualified ticket out of the game (rules 9, 21); play goes on."""
        self._masks[self._index[key]] = _GONE
        self._near_cache = None

    def remaining(self, key: K) -> int:
        """Numbers of ``key`` not yet called; -1 for a removed ticket."""
        mask = self._masks[self._index[key]]
        return -1 if mask & _GONE else (mask & ~self._called_mask).bit_count()

    def near_complete(self, limit: int = 50) -> list[tuple[K, int]]:
        """Tickets still in play with 1..near numbers to go, fewest first."""
        cache = self._near_cache
        if cache is None or cache[0] != self._called_mask:
            uncalled = ~self._called_mask
            rows = []
            for i, mask in enumerate(self._masks):
                if mask & _GONE:
                    continue
                left = (mask & uncalled).bit_count()
                if 0 < left <= self._near:
                    rows.append((left, i))
            rows.sort()
            cache = self._near_cache = (self._called_mask, rows)
        return [(self._keys[i], left) for left, i in cache[1][:limit]]
