"""The SAS capture file: every byte both ways, with its time, direction and wakeup bit.

A technician's record of one conversation with one EGM, to replay through the host's
decoders (``reelgate sas replay``) or send to whoever must judge the machine
(docs/sas.md, *Real machines*).  The format is JSON lines, UTF-8, one object a line:

* the first line is the header::

    {"format": "reelgate-sas-capture", "version": 1, "endpoint": "sas+tcp://...",
     "started": "2026-12-07T11:30:00+00:00"}

  ``endpoint`` may be any text (a serial sniffer's port name); ``started`` is the wall
  time of ``t = 0``.
* every other line is one run of bytes as it crossed the carrier::

    {"t": 0.012345, "dir": "host", "hex": "01 1f 51 c8", "wakeup": [0]}

  ``t``: seconds since ``started`` (monotonic, microseconds); ``dir``: ``host`` (host to
  EGM) or ``egm`` (EGM to host); ``hex``: the bytes as on the line (unescaped: one byte
  a character, the 9th bit apart); ``wakeup``: the indices in ``hex`` whose wakeup (9th)
  bit is set.  A run that broke the escaped stream's rules has ``"error"`` (its text)
  and the offending bytes in ``hex``.

Lines are at most a few hundred bytes; a writer bounds the file (size limit, rotation)
in :mod:`protocols.sas.carriers.tap`.  Everything here is pure: records to and from
text, and records to the escaped stream the parsers take.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from protocols.sas.errors import EscapeError
from protocols.sas.wire import Chunk, escape

FORMAT = "reelgate-sas-capture"
VERSION = 1
HOST = "host"
EGM = "egm"
DIRECTIONS = (HOST, EGM)


class CaptureError(ValueError):
    """A capture file that cannot be read; the message names the line and what is wrong."""


@dataclass(frozen=True, slots=True)
class CaptureHeader:
    endpoint: str
    started: str  # ISO 8601 wall time of t = 0


@dataclass(frozen=True, slots=True)
class CaptureRecord:
    t: float
    direction: str  # HOST or EGM
    data: bytes  # unescaped
    wakeup: tuple[int, ...] = ()  # indices in ``data`` with the 9th bit set
    error: str | None = None  # the escaped stream broke its rules here

    def escaped(self) -> bytes:
        """The run as the carriers carry it (``FF 00 b`` for a wakeup byte)."""
        if self.error is not None:
            return self.data  # as it came: the parsers report it again
        out = bytearray()
        start = 0
        for i in sorted(self.wakeup):
            out += escape(self.data[start:i], wakeup=False)
            out += escape(self.data[i : i + 1], wakeup=True)
            start = i + 1
        out += escape(self.data[start:], wakeup=False)
        return bytes(out)

    def to_json(self) -> str:
        obj: dict[str, Any] = {
            "t": round(self.t, 6),
            "dir": self.direction,
            "hex": self.data.hex(" "),
            "wakeup": list(self.wakeup),
        }
        if self.error is not None:
            obj["error"] = self.error
        return json.dumps(obj)


def header_line(header: CaptureHeader) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "endpoint": header.endpoint,
            "started": header.started,
        }
    )


def records_of(
    t: float, direction: str, events: Iterable[Chunk | EscapeError]
) -> list[CaptureRecord]:
    """One direction's decoded wire events (:class:`~protocols.sas.wire.StreamDecoder`)
    as records: consecutive chunks merge into one run, an escape error is its own."""
    out: list[CaptureRecord] = []
    data = bytearray()
    wakeup: list[int] = []
    for ev in events:
        if isinstance(ev, EscapeError):
            if data:
                out.append(CaptureRecord(t, direction, bytes(data), tuple(wakeup)))
                data, wakeup = bytearray(), []
            out.append(CaptureRecord(t, direction, ev.raw, (), str(ev)))
            continue
        if ev.wakeup:
            wakeup.append(len(data))
        data += ev.data
    if data:
        out.append(CaptureRecord(t, direction, bytes(data), tuple(wakeup)))
    return out


def parse_capture(lines: Iterable[str]) -> tuple[CaptureHeader, list[CaptureRecord]]:
    """The header and records of a capture's lines; :class:`CaptureError` names the first
    bad line.  Blank lines are skipped; a rotated file starts with its own header."""
    header: CaptureHeader | None = None
    records: list[CaptureRecord] = []
    for n, line in _numbered(lines):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaptureError(f"line {n}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise CaptureError(f"line {n}: not a JSON object")
        if header is None:
            header = _header(obj, n)
            continue
        if "format" in obj:
            continue  # a header again (files joined after rotation)
        records.append(_record(obj, n))
    if header is None:
        raise CaptureError("empty capture: no header line")
    return header, records


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for n, line in enumerate(lines, 1):
        if line.strip():
            yield n, line


def _header(obj: dict[str, Any], n: int) -> CaptureHeader:
    if obj.get("format") != FORMAT:
        raise CaptureError(f"line {n}: not a {FORMAT} file (format {obj.get('format')!r})")
    if obj.get("version") != VERSION:
        raise CaptureError(f"line {n}: version {obj.get('version')!r}, this reads {VERSION}")
    return CaptureHeader(str(obj.get("endpoint", "")), str(obj.get("started", "")))


def _record(obj: dict[str, Any], n: int) -> CaptureRecord:
    t, direction, text = obj.get("t"), obj.get("dir"), obj.get("hex")
    if not isinstance(t, int | float) or isinstance(t, bool) or t < 0:
        raise CaptureError(f"line {n}: t must be seconds >= 0, not {t!r}")
    if direction not in DIRECTIONS:
        raise CaptureError(f"line {n}: dir must be host or egm, not {direction!r}")
    if not isinstance(text, str):
        raise CaptureError(f"line {n}: hex must be text, not {text!r}")
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise CaptureError(f"line {n}: hex {text!r} is not hexadecimal bytes") from None
    wakeup = obj.get("wakeup", [])
    if not isinstance(wakeup, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(data) for i in wakeup
    ):
        raise CaptureError(f"line {n}: wakeup must list byte indices 0..{len(data) - 1}")
    error = obj.get("error")
    if error is not None and not isinstance(error, str):
        raise CaptureError(f"line {n}: error must be text")
    return CaptureRecord(float(t), direction, data, tuple(sorted(set(wakeup))), error)
