"""A thin tap on a carrier: every byte both ways into a capture file, nothing else changed.

:class:`TapCarrier` wraps any :class:`Carrier`: a write is recorded and passed on in the
same call, received bytes are recorded and delivered in the same call, so the line sees
exactly what it would without the tap (no delay, no split, no merge).  The core above
stays sans-I/O and untouched.  The records are :mod:`protocols.sas.capture`'s format;
:class:`CaptureFile` writes them with a size limit and rotation (``FILE``, ``FILE.1``
... ``FILE.<keep>``, oldest dropped), so a capture never grows without bound.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TextIO

from protocols.sas.capture import EGM, HOST, CaptureHeader, CaptureRecord, header_line, records_of
from protocols.sas.carriers.base import Carrier
from protocols.sas.wire import StreamDecoder

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_KEEP = 3


class CaptureFile:
    """Capture records to ``path``, rotated past ``max_bytes`` (``keep`` old files).

    ``clock``: monotonic seconds (the event loop's time); ``t`` is counted from the first
    call.  Opening fails with ``OSError`` (the caller names the file)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        endpoint: str,
        clock: Callable[[], float],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
        wall: Callable[[], dt.datetime] | None = None,
    ) -> None:
        if max_bytes < 1024:
            raise ValueError("a capture's size limit is at least 1024 bytes")
        if keep < 0:
            raise ValueError("keep must be >= 0")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = keep
        self._clock = clock
        self._t0 = clock()
        started = (wall or (lambda: dt.datetime.now(dt.UTC)))()
        self.header = CaptureHeader(endpoint, started.isoformat(timespec="microseconds"))
        self.records = 0  # written in all (every file)
        self.rotations = 0
        self._file: TextIO | None = None
        self._size = 0
        self._decoders = {HOST: StreamDecoder(), EGM: StreamDecoder()}
        self._open()

    def _open(self) -> None:
        self._file = self.path.open("w", encoding="utf-8")
        self._size = 0
        self._line(header_line(self.header))

    def _line(self, text: str) -> None:
        assert self._file is not None
        self._file.write(text + "\n")
        self._file.flush()
        self._size += len(text) + 1

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.close()
        self.rotations += 1
        if self.keep == 0:
            self.path.unlink(missing_ok=True)
        else:
            for k in range(self.keep - 1, 0, -1):
                older = self.path.with_name(f"{self.path.name}.{k}")
                if older.exists():
                    older.replace(self.path.with_name(f"{self.path.name}.{k + 1}"))
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        self._open()

    def record(self, direction: str, wire: bytes) -> None:
        """``wire``: escaped bytes as the carrier moved them."""
        if self._file is None or not wire:
            return
        t = self._clock() - self._t0
        for rec in records_of(t, direction, self._decoders[direction].feed_chunks(wire)):
            self.write(rec)

    def write(self, record: CaptureRecord) -> None:
        if self._file is None:
            return
        text = record.to_json()
        if self._size + len(text) + 1 > self.max_bytes:
            self._rotate()
        self._line(text)
        self.records += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class CaptureSink(Protocol):
    def record(self, direction: str, wire: bytes) -> None: ...


class CaptureMemory:
    """Capture records kept in memory (a report that shows each poll's bytes)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._t0 = clock()
        self.records: list[CaptureRecord] = []
        self._decoders = {HOST: StreamDecoder(), EGM: StreamDecoder()}

    def record(self, direction: str, wire: bytes) -> None:
        t = self._clock() - self._t0
        self.records += records_of(t, direction, self._decoders[direction].feed_chunks(wire))


class TapCarrier(Carrier):
    """``inner`` with every byte recorded in ``capture`` (see the module doc)."""

    def __init__(self, inner: Carrier, capture: CaptureSink) -> None:
        super().__init__()
        self.inner = inner
        self.capture = capture
        inner.set_handlers(self._received, self._lost)

    def _received(self, data: bytes) -> None:
        self.capture.record(EGM, data)
        self._deliver(data)

    def _lost(self, exc: Exception | None) -> None:
        self._mark_lost(exc)

    def _write(self, data: bytes) -> None:
        self.capture.record(HOST, data)
        self.inner.write(data)

    def _close(self) -> None:
        self.inner.close()
