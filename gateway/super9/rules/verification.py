"""The ticket's verification section (S9-7), as keyed at hand-in — pure.

S9-7: "The verification section on the ticket must be completed accurately and in
full."  Staff key what the player wrote: name, ID or Rewards card number, contact, and
whether the section is signed.  *In full* is the ``verification_fields`` setting (which
fields must be there; default all four).  *Accurately* is checked where the gateway can:
a keyed ID or card number must be the buyer's, from the player register.

Clauses: docs/rules.md#s9-7.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gateway.tournament.rules.eligibility import normalise_id


class VerificationError(ValueError):
    """The section is incomplete or inaccurate; the message names S9-7."""


@dataclass(frozen=True, slots=True)
class Verification:
    name: str = ""
    id: str = ""  # ID / passport number or Rewards card number
    contact: str = ""
    signature: bool = False  # the player signed the section

    def to_json(self) -> dict[str, str | bool]:
        return {
            "name": self.name.strip(),
            "id": self.id.strip(),
            "contact": self.contact.strip(),
            "signature": self.signature,
        }


def check_verification(
    section: Verification,
    required: Iterable[str],
    *,
    id_number: str,
    card_number: str | None,
) -> None:
    """Raise :class:`VerificationError` unless the section passes S9-7."""
    keyed = section.to_json()
    missing = [f for f in required if not keyed.get(f)]
    if missing:
        raise VerificationError(
            f"rule 7: the verification section is incomplete: {', '.join(missing)} missing"
        )
    given = section.id.strip()
    if given and normalise_id(given) not in {normalise_id(id_number), card_number or ""}:
        raise VerificationError(
            "rule 7: the ID or card number on the verification section is not the buyer's"
        )
