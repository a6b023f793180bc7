"""SAS denomination codes (LP 1F reply, byte 6) and their value in cents per credit.

Only whole-cent denominations are listed: credits and money are integers in Reelgate,
and a funds transfer (AFT, in cents) must be an exact multiple of the denomination.
Codes from SAS 6.02 table C-4.
"""

from __future__ import annotations

DENOMINATION_CENTS: dict[int, int] = {
    0x01: 1,
    0x02: 5,
    0x03: 10,
    0x04: 25,
    0x05: 50,
    0x06: 100,
    0x07: 500,
    0x08: 1_000,
    0x09: 2_000,
    0x0A: 10_000,
    0x0B: 20,
    0x0C: 200,
    0x0D: 250,
    0x0E: 2_500,
    0x0F: 5_000,
    0x10: 20_000,
    0x11: 25_000,
    0x12: 50_000,
    0x13: 100_000,
    0x14: 200_000,
    0x15: 250_000,
    0x16: 500_000,
    0x17: 2,
    0x18: 3,
    0x19: 15,
    0x1A: 40,
}


def cents_per_credit(code: int) -> int | None:
    """Cents one credit is worth, or None for an unknown or fractional-cent code."""
    return DENOMINATION_CENTS.get(code)


def describe_denomination(code: int) -> str:
    cents = DENOMINATION_CENTS.get(code)
    if cents is None:
        return f"code {code:02X}"
    return f"{cents // 100}.{cents % 100:02d}"
