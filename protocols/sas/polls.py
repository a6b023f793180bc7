"""The long poll table: ONE place for every poll's type and lengths, host and EGM alike.

Each entry says how long the host message is and how the EGM's reply is framed, so a
framer on either side can find the end of a frame without understanding its fields.

Lengths are whole frames on the wire, address to CRC inclusive.  Type R polls are
``addr cmd`` only (no CRC); S, M and G polls carry a CRC (sas.md §1).  A length byte
counts the bytes after it, CRC excluded, so such a frame is ``3 + len + 2`` bytes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from protocols.sas import tournament_layout as _tl


class PollType(enum.Enum):
    R = "R"  # read: addr cmd, no CRC
    S = "S"  # single command: addr cmd CRC
    M = "M"  # multi-byte command with data and CRC
    G = "G"  # global broadcast to address 0, no reply


class ReplyKind(enum.Enum):
    ACK = "ack"  # ACK (addr) / NACK (addr|80) / busy (addr 00)
    FIXED = "fixed"  # data reply of a fixed total length
    LENGTH_BYTE = "length_byte"  # data reply: addr cmd len ... CRC


LENGTH_BYTE = None  # marker for a host message framed by a length byte


@dataclass(frozen=True, slots=True)
class PollSpec:
    code: int
    name: str
    type: PollType
    host_length: int | None  # whole host frame; None = length byte at offset 2
    reply: ReplyKind
    reply_length: int | None = None  # whole reply frame for ReplyKind.FIXED
    broadcast: bool = False  # may also go to address 0 (type G, no reply)

    def host_frame_length(self, prefix: bytes | bytearray) -> int | None:
        """Total host frame length once ``prefix`` (>= 2 bytes) is known, else None."""
        if self.host_length is not None:
            return self.host_length
        return 5 + prefix[2] if len(prefix) >= 3 else None

    def reply_frame_length(self, prefix: bytes | bytearray) -> int | None:
        """Total data reply length once ``prefix`` (>= 2 bytes) is known, else None."""
        if self.reply is ReplyKind.FIXED:
            return self.reply_length
        if self.reply is ReplyKind.LENGTH_BYTE:
            return 5 + prefix[2] if len(prefix) >= 3 else None
        return None


_R, _S, _M = PollType.R, PollType.S, PollType.M
_ACK, _FIX, _LEN = ReplyKind.ACK, ReplyKind.FIXED, ReplyKind.LENGTH_BYTE

_TABLE = (
    PollSpec(0x01, "shutdown (lock out play)", _S, 4, _ACK),
    PollSpec(0x02, "startup (enable play)", _S, 4, _ACK),
    PollSpec(0x0E, "enable/disable real time event reporting", _S, 5, _ACK),
    PollSpec(0x0F, "send meters 10 to 15", _R, 2, _FIX, 2 + 6 * 4 + 2),
    PollSpec(0x1A, "send current credits", _R, 2, _FIX, 2 + 4 + 2),
    PollSpec(0x1C, "send gaming machine meters", _R, 2, _FIX, 2 + 8 * 4 + 2),
    PollSpec(0x1F, "send gaming machine ID and information", _R, 2, _FIX, 24),
    PollSpec(0x2F, "send selected meters for game N", _M, LENGTH_BYTE, _LEN),
    PollSpec(0x54, "send SAS version ID and serial number", _R, 2, _LEN),
    PollSpec(0x72, "AFT transfer funds", _M, LENGTH_BYTE, _LEN),
    PollSpec(0x73, "AFT register gaming machine", _M, LENGTH_BYTE, _LEN),
    PollSpec(0x74, "AFT game lock and status request", _M, 8, _LEN),
    PollSpec(0x7E, "send current date and time", _R, 2, _FIX, 2 + 4 + 3 + 2),
    PollSpec(0x7F, "receive date and time", _S, 2 + 4 + 3 + 2, _ACK, broadcast=True),
    PollSpec(0x8C, "enter/exit tournament mode", _M, _tl.TOURNAMENT_MODE_HOST_LENGTH, _ACK),
    PollSpec(0x94, "remote handpay reset", _S, 4, _ACK),
    PollSpec(0x95, "send tournament games played", _M, 6, _FIX, _tl.TOURNAMENT_METER_REPLY_LENGTH),
    PollSpec(0x96, "send tournament games won", _M, 6, _FIX, _tl.TOURNAMENT_METER_REPLY_LENGTH),
    PollSpec(
        0x97, "send tournament credits wagered", _M, 6, _FIX, _tl.TOURNAMENT_METER_REPLY_LENGTH
    ),
    PollSpec(0x98, "send tournament credits won", _M, 6, _FIX, _tl.TOURNAMENT_METER_REPLY_LENGTH),
    PollSpec(0x99, "send tournament meters 95-98", _M, 6, _FIX, _tl.TOURNAMENT_METERS_REPLY_LENGTH),
    PollSpec(0xA0, "send enabled features", _M, 6, _FIX, 12),
)

POLLS: dict[int, PollSpec] = {spec.code: spec for spec in _TABLE}
"""Every long poll Reelgate speaks, by command code."""

SELECTED_METER_WIDTH = 4
"""[A] BCD bytes of a meter in the LP 2F reply when the code is not listed below."""

SELECTED_METER_WIDTHS: dict[int, int] = {}
"""[A] LP 2F meter widths by meter code, for meters an EGM sends wider than 4 bytes.
The LP 2F reply is framed by its length byte, so a wrong width here garbles only the
values of that reply, never the framing of the stream."""
