"""The escaped 9-bit byte stream used over TCP and a Linux PARMRK serial port (sas.md §1).

Encoding
    ``FF 00 b``  byte ``b`` with the wakeup (9th) bit set
    ``FF FF``    a literal ``FF`` data byte (wakeup clear)
    any other    itself, wakeup clear

Decoding is incremental (:class:`StreamDecoder`): an escape may be split across
``feed()`` calls.  Garbage and resynchronisation:

* ``FF x`` with ``x`` not ``00``/``FF``: an :class:`EscapeError` event; both bytes are
  skipped and decoding carries on with the next byte.
* ``FF 00 00`` (also what Linux reports for a line break) decodes as a wakeup ``00``,
  i.e. broadcast address 0; the framers treat it as such.
* A stream that ends inside an escape keeps the partial escape until the next feed.

The hot path is bytes-level: a buffer with no ``FF`` in it (the usual EGM reply) comes
back as one :class:`Chunk` without touching individual bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocols.sas.errors import EscapeError

_FF = b"\xff"
_FFFF = b"\xff\xff"
_WAKEUP = b"\xff\x00"


def escape(data: bytes | bytearray, wakeup: bool = True) -> bytes:
    """Escape ``data``; with ``wakeup`` the first byte carries the wakeup bit (host side)."""
    if not data:
        return b""
    if wakeup:
        return _WAKEUP + bytes(data[:1]) + bytes(data[1:]).replace(_FF, _FFFF)
    return bytes(data).replace(_FF, _FFFF)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A run of decoded bytes; ``wakeup`` is the 9th bit of ``data[0]`` (never of the rest)."""

    data: bytes
    wakeup: bool


WireEvent = Chunk | EscapeError

# decoder states
_PLAIN, _AFTER_FF, _AFTER_FF00 = 0, 1, 2


class StreamDecoder:
    """Incremental decoder of the escaped stream.

    ``feed_chunks()`` is the fast interface (runs of bytes); ``feed()`` gives the same
    information one ``(byte, wakeup)`` pair at a time for callers that want it.
    """

    __slots__ = ("_state",)

    def __init__(self) -> None:
        self._state = _PLAIN

    @property
    def pending(self) -> bool:
        """True while a partial escape waits for its next byte."""
        return self._state != _PLAIN

    def reset(self) -> None:
        self._state = _PLAIN

    def feed_chunks(self, data: bytes | bytearray) -> list[WireEvent]:
        if self._state == _PLAIN and _FF not in data:  # fast path: nothing escaped
            return [Chunk(bytes(data), False)] if data else []
        data = bytes(data)
        out: list[WireEvent] = []
        cur = bytearray()
        cur_wakeup = False
        state = self._state
        i, n = 0, len(data)
        while i < n:
            if state == _PLAIN:
                j = data.find(0xFF, i)
                if j < 0:
                    cur += data[i:]
                    break
                cur += data[i:j]
                i = j + 1
                state = _AFTER_FF
            elif state == _AFTER_FF:
                b = data[i]
                i += 1
                if b == 0xFF:
                    cur.append(0xFF)
                    state = _PLAIN
                elif b == 0x00:
                    state = _AFTER_FF00
                else:
                    if cur:
                        out.append(Chunk(bytes(cur), cur_wakeup))
                        cur = bytearray()
                        cur_wakeup = False
                    out.append(EscapeError(f"invalid escape FF {b:02X}", bytes((0xFF, b))))
                    state = _PLAIN
            else:  # _AFTER_FF00: this byte carries the wakeup bit and starts a new chunk
                if cur:
                    out.append(Chunk(bytes(cur), cur_wakeup))
                cur = bytearray((data[i],))
                cur_wakeup = True
                i += 1
                state = _PLAIN
        if cur:
            out.append(Chunk(bytes(cur), cur_wakeup))
        self._state = state
        return out

    def feed(self, data: bytes | bytearray) -> list[tuple[int, bool] | EscapeError]:
        """Per-byte view: ``(byte, wakeup)`` pairs and :class:`EscapeError` events."""
        out: list[tuple[int, bool] | EscapeError] = []
        for ev in self.feed_chunks(data):
            if isinstance(ev, EscapeError):
                out.append(ev)
                continue
            out.append((ev.data[0], ev.wakeup))
            out.extend((b, False) for b in ev.data[1:])
        return out
