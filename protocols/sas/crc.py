"""CRC-16/KERMIT, the SAS frame check (sas.md §2).

Polynomial 0x1021 reflected (0x8408), init 0, no final XOR, sent low byte first.
KERMIT is the bit-reflected twin of CRC-16/XMODEM, which the standard library computes in
C (``binascii.crc_hqx``); reflecting every input byte (one ``bytes.translate``) and the
16-bit result gives KERMIT at C speed.  ``crc16_kermit_table`` is the plain table-driven
algorithm, kept as the readable reference the fast path is tested against.
"""

from __future__ import annotations

from binascii import crc_hqx

_REV8 = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def _rev16(value: int) -> int:
    return (_REV8[value & 0xFF] << 8) | _REV8[value >> 8]


def crc16_kermit(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/KERMIT of ``data``; pass a previous result as ``crc`` to continue it."""
    return _rev16(crc_hqx(bytes(data).translate(_REV8), _rev16(crc)))


def _make_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x8408 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _make_table()


def crc16_kermit_table(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """Table-driven reference implementation (slow; for tests and documentation)."""
    for b in bytes(data):
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc


def crc_bytes(data: bytes | bytearray | memoryview) -> bytes:
    """The two CRC bytes as sent on the wire: low byte first."""
    return crc16_kermit(data).to_bytes(2, "little")


def append_crc(data: bytes | bytearray) -> bytes:
    """``data`` followed by its CRC (low byte first)."""
    return bytes(data) + crc16_kermit(data).to_bytes(2, "little")


def check_crc(frame: bytes | bytearray | memoryview) -> bool:
    """True when the last two bytes of ``frame`` are the CRC of the rest.

    The CRC of a whole frame including its own CRC is 0, so this is one pass.
    """
    return len(frame) >= 2 and crc16_kermit(frame) == 0
