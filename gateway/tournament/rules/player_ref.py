"""How a desk names a player: typed, never guessed.

A player is named by its kind and value — ``id:N`` (the player number the gateway gave),
``card:N`` (the Rewards card) or ``idnum:N`` (the national ID or passport number).  A bare
value, kept for the desks that scan a card or type a document number, is looked up as a
card number and as an ID number only — never as a player number — and refused when it is
one player's card and another's ID number.  Before this, a card number of nine digits or
fewer was read as a player number and a sale went to whoever had that number.

Pure: the lookup over the register is ``gateway.tournament.services.lookup``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gateway.tournament.rules.eligibility import normalise_id
from gateway.tournament.rules.violations import RuleViolation

FORMS = "id:N, card:N or idnum:N"
MAX_LENGTH = 100
ID_MAX = 2**63 - 1  # a BIGINT


class PlayerNotFound(RuleViolation):
    """A well-formed reference naming nobody in the register."""


class RefKind(StrEnum):
    ID = "id"  # the player number (database id)
    CARD = "card"  # Rewards card number
    IDNUM = "idnum"  # national ID or passport number
    BARE = "bare"  # no prefix: a card or an ID number, whichever matches (never both)


@dataclass(frozen=True, slots=True)
class PlayerRef:
    kind: RefKind
    value: str  # for ID: the digits; for IDNUM and BARE the raw text (normalised by use)

    @property
    def number(self) -> int:
        return int(self.value)

    def __str__(self) -> str:
        return self.value if self.kind is RefKind.BARE else f"{self.kind.value}:{self.value}"


def parse_player_ref(text: str, field: str = "player") -> PlayerRef:
    """``text`` as a typed reference, or a :class:`RuleViolation` naming ``field`` and the
    forms."""
    raw = text.strip()
    if not raw or len(raw) > MAX_LENGTH or not raw.isprintable():
        raise RuleViolation(None, f"{field}: name the player as {FORMS}")
    prefix, sep, rest = raw.partition(":")
    if not sep:
        return PlayerRef(RefKind.BARE, raw)
    try:
        kind = RefKind(prefix.strip().lower())
    except ValueError:
        kind = RefKind.BARE
    if kind is RefKind.BARE:
        raise RuleViolation(None, f"{field}: {raw!r} — name the player as {FORMS}")
    value = rest.strip()
    if kind is RefKind.ID:
        if not (value.isascii() and value.isdigit() and 0 < int(value) <= ID_MAX):
            raise RuleViolation(None, f"{field}: id: takes a player number, not {value!r}")
        return PlayerRef(kind, str(int(value)))
    if not value or (kind is RefKind.IDNUM and not normalise_id(value)):
        raise RuleViolation(None, f"{field}: {kind.value}: takes a number")
    return PlayerRef(kind, value)
