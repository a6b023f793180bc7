"""Playing cards for tie-breaks (T19) and the seeded shuffle behind digital draws.

Card values: Ace is low (1), then 2–10, Jack 11, Queen 12, King 13.  Suits never matter
(equal values draw again) but are recorded, so a physical card is keyed in whole.

Digital draws are recomputable by anyone holding the recorded seed.  The algorithm:

* ``uniform(seed, context, n)`` — an integer in ``[0, n)``: for ``counter = 0, 1, ...``
  take ``d = HMAC-SHA256(key=seed, msg=f"{context}|{counter}")`` as a big-endian 256-bit
  integer and return ``d % n`` unless ``d >= 2**256 - (2**256 % n)`` (rejected to keep it
  unbiased), in which case try the next counter.
* ``shuffle(seed, context, items)`` — Fisher–Yates from the top: for ``i`` from
  ``len-1`` down to ``1`` swap item ``i`` with item ``uniform(seed, f"{context}|{i}", i+1)``.
* A digital card round for a tie: the 52 cards in the order ``A♣ 2♣ … K♣ A♦ … K♦ A♥ … K♥
  A♠ … K♠`` are shuffled with context ``f"{tie_context}|round={round}"``; the tied entries,
  sorted by entry id, take cards from the top in turn.

Clauses: docs/rules.md#t19.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from gateway.tournament.rules.enums import CardSuit
from gateway.tournament.rules.violations import RuleViolation

T = TypeVar("T")


_SUIT_LETTERS = {
    CardSuit.CLUBS: "C",
    CardSuit.DIAMONDS: "D",
    CardSuit.HEARTS: "H",
    CardSuit.SPADES: "S",
}
_LETTER_SUITS = {letter: suit for suit, letter in _SUIT_LETTERS.items()}

_RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
_RANK_PARSE = {"A": 1, "J": 11, "Q": 12, "K": 13}


@dataclass(frozen=True, slots=True, order=True)
class Card:
    value: int  # 1 (Ace, low) .. 13 (King)
    suit: CardSuit

    def __post_init__(self) -> None:
        if not 1 <= self.value <= 13:
            raise RuleViolation(19, f"card value {self.value} is not between 1 (Ace) and 13 (King)")

    def __str__(self) -> str:
        name = _RANK_NAMES.get(self.value, str(self.value))
        return name + _SUIT_LETTERS[self.suit]

    @classmethod
    def parse(cls, text: str) -> Card:
        """``"AS"``, ``"10H"``, ``"qd"`` — value (A, 2–10, J, Q, K) then suit (C, D, H, S)."""
        match = re.fullmatch(r"\s*(10|[2-9]|[AJQK])([CDHS])\s*", text.upper())
        if not match:
            raise RuleViolation(
                19, f"card {text!r} is not a card (A, 2-10, J, Q, K, then suit C/D/H/S)"
            )
        rank, suit = match.groups()
        value = _RANK_PARSE.get(rank) or int(rank)
        return cls(value, _LETTER_SUITS[suit])


FULL_DECK: tuple[Card, ...] = tuple(Card(v, s) for s in _SUIT_LETTERS for v in range(1, 14))


def uniform(seed: bytes, context: str, n: int) -> int:
    if n < 1:
        raise ValueError("n must be positive")
    limit = 2**256 - (2**256 % n)
    for counter in range(1000):  # rejection is at most n / 2**256 likely; bounded anyway
        digest = hmac.new(seed, f"{context}|{counter}".encode(), hashlib.sha256).digest()
        value = int.from_bytes(digest, "big")
        if value < limit:
            return value % n
    raise RuntimeError("uniform(): no unbiased value in 1000 tries")  # pragma: no cover


def shuffle(seed: bytes, context: str, items: Sequence[T]) -> list[T]:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = uniform(seed, f"{context}|{i}", i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def digital_card_round(
    seed: bytes, tie_context: str, round_number: int, entry_ids: Sequence[int]
) -> dict[int, Card]:
    """Deal one card to each tied entry (sorted by id) from a seeded shuffle of 52 cards."""
    if len(entry_ids) > len(FULL_DECK):
        raise RuleViolation(19, "more tied entries than cards in a deck")
    deck = shuffle(seed, f"{tie_context}|round={round_number}", FULL_DECK)
    return {entry: deck[i] for i, entry in enumerate(sorted(entry_ids))}


def parse_seed(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise RuleViolation(19, "seed must be hexadecimal") from None
    if len(seed) < 16:
        raise RuleViolation(19, "seed must be at least 16 bytes (32 hex digits)")
    return seed
