"""Tournament-mode field layouts that sas.md marks **[A]** (assumption), kept in ONE place.

A site whose EGMs lay out long poll 8C or the tournament meter replies differently edits
this module only; the poll table (lengths) and the message classes read from it.

LP 8C host message [A] (13 bytes in all, sas.md §3)::

    addr 8C game(2 BCD) time MMSS(2 BCD) credits(4 BCD) pulses(1: 00/01) CRC(2)

    e.g. game 1, 05:00, 1000 credits: 01 8C 00 01 05 00 00 00 10 00 00 5B DA

Exit tournament mode [A] = the same poll with time 0000 and credits 0.

LP 95..98 reply [A]: ``addr cmd game(2 BCD) meter(4 BCD) CRC`` (10 bytes);
LP 99 reply [A]: ``addr 99 game(2 BCD)`` + the four meters in 95→98 order + CRC (22 bytes).
Tournament credits are play-only with no cash value (T12 and T18): the EGM keeps them
apart from its cashable credit meter, and nothing here moves money.
"""

from __future__ import annotations

from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.errors import FieldError, LengthError

TOURNAMENT_MODE_HOST_LENGTH = 13  # whole frame, address to CRC [S]
TOURNAMENT_MODE_BODY_LENGTH = TOURNAMENT_MODE_HOST_LENGTH - 4  # minus addr, cmd, CRC
TOURNAMENT_METER_REPLY_LENGTH = 10  # LP 95..98 [A]
TOURNAMENT_METERS_REPLY_LENGTH = 22  # LP 99 [A]
METER_WIDTH = 4  # BCD bytes per tournament meter [A]
# LP 8C host field widths in BCD bytes [A]; gateway.heat_limits derives a heat's limits here.
GAME_WIDTH = 2
MINUTES_WIDTH = 1
SECONDS_WIDTH = 1
CREDITS_WIDTH = 4


def encode_tournament_mode(
    game: int, minutes: int, seconds: int, credits: int, pulses: bool
) -> bytes:
    """Body of LP 8C (everything between the command byte and the CRC)."""
    if not 0 <= seconds <= 59:
        raise FieldError(f"tournament time seconds must be 0..59, not {seconds}")
    return (
        bcd_encode(game, GAME_WIDTH)
        + bcd_encode(minutes, MINUTES_WIDTH)
        + bcd_encode(seconds, SECONDS_WIDTH)
        + bcd_encode(credits, CREDITS_WIDTH)
        + (b"\x01" if pulses else b"\x00")
    )


def decode_tournament_mode(body: bytes) -> tuple[int, int, int, int, bool]:
    """``(game, minutes, seconds, credits, pulses)`` from an LP 8C body."""
    if len(body) != TOURNAMENT_MODE_BODY_LENGTH:
        raise LengthError(
            f"LP 8C body must be {TOURNAMENT_MODE_BODY_LENGTH} bytes, not {len(body)}", body
        )
    game = bcd_decode(body[0:2])
    minutes = bcd_decode(body[2:3])
    seconds = bcd_decode(body[3:4])
    credits = bcd_decode(body[4:8])
    if seconds > 59:
        raise FieldError(f"LP 8C seconds {seconds} > 59", body)
    if body[8] not in (0, 1):
        raise FieldError(f"LP 8C pulses flag must be 00 or 01, not {body[8]:02X}", body)
    return game, minutes, seconds, credits, body[8] == 1
