"""T15 prize arithmetic, pure: the advertised schedule, the surplus split, the receipt.

T15: "Advertised prize values are the minimum values that will be paid out.  Casino
management reserves the right to apportion surplus entries at its sole discretion."

Our reading:

* A stage's schedule maps places 1..n to the advertised minimum in integer cents.  Once
  advertised a minimum can be raised but never lowered or withdrawn (it is the least
  that will be paid), and the schedule is frozen once a prize of the stage is paid.
* The surplus (money beyond the minimums, e.g. from a larger field) is split by a
  director's decision.  The decision names an amount per place and those amounts must
  add up to the surplus to the cent: nothing is left unapportioned or invented.
  :func:`split_by_weights` proposes such a split from weights (largest remainder), and
  conserves every cent.
* A prize is paid to the winning entry's player only (prizes are not transferable): the
  person signing keys their ID or card, which must be that player's, and a witness who
  is not the winner countersigns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gateway.tournament.rules.eligibility import normalise_id
from gateway.tournament.rules.violations import RuleViolation

RULE = 15
TIE_RULE = 19  # prize places need a strict order


@dataclass(frozen=True, slots=True)
class PrizeAmount:
    """One place's prize: the advertised minimum plus its share of the surplus."""

    place: int
    minimum_cents: int
    surplus_cents: int = 0

    @property
    def total_cents(self) -> int:
        return self.minimum_cents + self.surplus_cents


def _cents(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleViolation(RULE, f"{what}: a whole number of cents, got {value!r}")
    return value


def check_schedule(
    minimums: Mapping[int, int], *, prize_places: int | None = None
) -> tuple[PrizeAmount, ...]:
    """The schedule as places 1..n, each with a positive minimum (T15).

    ``prize_places`` (the final's strictly ordered places, T19) caps the places: a prize
    place past it could be shared by a tie nobody is asked to draw.
    """
    if not minimums:
        raise RuleViolation(RULE, "a prize schedule needs at least one place")
    places = sorted(minimums)
    if places != list(range(1, len(places) + 1)):
        raise RuleViolation(RULE, f"prize places must be 1 to {len(places)}, got {places}")
    if prize_places is not None and len(places) > prize_places:
        raise RuleViolation(
            TIE_RULE,
            f"{len(places)} prize places but only {prize_places} are strictly ordered "
            "(raise prize_places first)",
        )
    out = []
    for place in places:
        cents = _cents(minimums[place], f"place {place}")
        if cents <= 0:
            raise RuleViolation(RULE, f"place {place}: the advertised prize must be positive")
        out.append(PrizeAmount(place, cents))
    return tuple(out)


def check_change(old: Mapping[int, int], new: Mapping[int, int]) -> None:
    """An advertised minimum is the least that will be paid: never lowered or withdrawn."""
    for place, cents in sorted(old.items()):
        if place not in new:
            raise RuleViolation(RULE, f"place {place} was advertised at {cents} c: it stays")
        if new[place] < cents:
            raise RuleViolation(
                RULE,
                f"place {place} was advertised at {cents} c, the minimum that will be paid; "
                f"it cannot drop to {new[place]} c",
            )


def check_apportionment(
    surplus_cents: int, shares: Mapping[int, int], places: Sequence[int]
) -> dict[int, int]:
    """Every place's share of the surplus (0 where none is named), adding up to it exactly."""
    surplus = _cents(surplus_cents, "surplus")
    if surplus < 0:
        raise RuleViolation(RULE, "the surplus cannot be negative")
    unknown = sorted(set(shares) - set(places))
    if unknown:
        raise RuleViolation(RULE, f"places {unknown} have no advertised prize to add to")
    out = {place: _cents(shares.get(place, 0), f"share of place {place}") for place in places}
    if any(cents < 0 for cents in out.values()):
        raise RuleViolation(RULE, "a share of the surplus cannot be negative")
    given = sum(out.values())
    if given != surplus:
        raise RuleViolation(
            RULE,
            f"the shares add up to {given} c but the surplus is {surplus} c: "
            "every cent of the surplus must be apportioned",
        )
    return out


def split_by_weights(total_cents: int, weights: Sequence[int]) -> tuple[int, ...]:
    """``total_cents`` split in proportion to ``weights`` (largest remainder; ties go to
    the earlier place), so the parts add up to the total exactly."""
    total = _cents(total_cents, "surplus")
    if total < 0 or not weights or any(w < 0 for w in weights) or sum(weights) == 0:
        raise RuleViolation(RULE, "weights: non-negative, at least one above 0; total >= 0")
    whole = sum(weights)
    parts = [total * w // whole for w in weights]
    leftover = total - sum(parts)
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in by_remainder[:leftover]:
        parts[i] += 1
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Winner:
    """The player holding the winning entry, as the desk checks the receipt against."""

    name: str
    id_number: str
    card_number: str | None


def check_receipt(winner: Winner, *, signer: str, signature: str, witness: str) -> None:
    """The winner signs for the prize in person (not transferable); a witness who is not
    the winner is named.  ``signer`` and ``witness`` are as keyed: an ID or card number."""
    if not signature.strip():
        raise RuleViolation(RULE, "record the winner's signature of receipt")
    if not witness.strip():
        raise RuleViolation(RULE, "name the witness to the receipt")
    keys = {normalise_id(winner.id_number)}
    if winner.card_number:
        keys.add(winner.card_number.strip())
    if signer.strip() not in keys and normalise_id(signer) not in keys:
        raise RuleViolation(
            RULE,
            f"prizes are not transferable: the prize is {winner.name}'s "
            f"(ID {winner.id_number}), not {signer.strip()!r}'s",
        )
    said = witness.strip()
    if said in keys or normalise_id(said) in keys or said.casefold() == winner.name.casefold():
        raise RuleViolation(RULE, "the witness must be someone other than the winner")
