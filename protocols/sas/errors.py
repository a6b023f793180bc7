"""Typed SAS errors.

Decoders raise these; framers and the link return them as *events* (the instance itself),
so a corrupted frame never escapes as an untyped exception and never stops the stream.
"""

from __future__ import annotations


class SasError(Exception):
    """Base of every error raised by the SAS core."""


class ProtocolError(SasError):
    """Bytes that are not valid SAS.  ``raw`` holds the offending bytes (may be empty)."""

    def __init__(self, message: str, raw: bytes | bytearray = b"") -> None:
        super().__init__(message)
        self.raw = bytes(raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args[0]!r}, raw={self.raw.hex(' ')!r})"


class EscapeError(ProtocolError):
    """``FF`` followed by something other than ``00`` or ``FF`` in the escaped stream."""


class CrcError(ProtocolError):
    """The frame's CRC-16/KERMIT does not check."""


class LengthError(ProtocolError):
    """A frame or field of the wrong length (or a length byte that disagrees)."""


class UnknownPollError(ProtocolError):
    """A long poll code that is not in the poll table (an EGM stays silent)."""


class BcdError(ProtocolError, ValueError):
    """Invalid BCD nibble on decode, or a value that does not fit on encode."""


class FieldError(ProtocolError, ValueError):
    """A field value out of range (address, ASCII text, date, flag)."""


class UnexpectedReplyError(ProtocolError):
    """A reply byte that cannot answer the poll just sent (wrong address or command)."""


class TruncatedFrameError(ProtocolError):
    """A frame cut short by a new wakeup byte or by the inter-byte gap."""


class LinkStateError(SasError):
    """The caller used the link state machine out of turn (e.g. a second poll in flight)."""
