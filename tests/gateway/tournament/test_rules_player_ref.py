"""Typed player references (audit 25.6): ``id:N``, ``card:N``, ``idnum:N``; a bare value is
a card or ID number, never a player number."""

from __future__ import annotations

import pytest

from gateway.tournament.rules.player_ref import PlayerRef, RefKind, parse_player_ref
from gateway.tournament.rules.violations import RuleViolation


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("id:12", RefKind.ID, "12"),
        (" ID:0012 ", RefKind.ID, "12"),
        ("card:123456789", RefKind.CARD, "123456789"),
        ("idnum:8001015009087", RefKind.IDNUM, "8001015009087"),
        ("123456789", RefKind.BARE, "123456789"),  # a short card number: never an id
        ("C1X", RefKind.BARE, "C1X"),
    ],
)
def test_forms(text: str, kind: RefKind, value: str) -> None:
    assert parse_player_ref(text) == PlayerRef(kind, value)


@pytest.mark.parametrize(
    "text", ["", "   ", "id:", "id:x", "id:0", "id:-1", "id:²", "card:", "idnum:--", "seat:4",
             "x" * 101, "a\x00b", f"id:{2**63}"],
)  # fmt: skip
def test_refused_in_one_line_naming_the_field(text: str) -> None:
    with pytest.raises(RuleViolation, match=r"^signer: ") as caught:
        parse_player_ref(text, "signer")
    assert "\n" not in str(caught.value)


def test_an_unknown_prefix_names_the_forms() -> None:
    with pytest.raises(RuleViolation, match="id:N, card:N or idnum:N"):
        parse_player_ref("seat:4")
