"""Where witness entries go: an append-only file, or syslog (RFC 5424) over UDP or TCP.

A sink's :meth:`~Sink.write` may block (a TCP connect), and so may :meth:`~Sink.sync` (a
file's ``fdatasync``); the witness calls both off the event loop, once per batch of
commits (``sync`` at most once a second).  The spec is one
string (``records.witness``, ``$REELGATE_AUDIT_WITNESS``):

* a path — the file (created mode 0640, only ever appended to; each batch is in the
  file — the kernel's — when the desk is answered, and forced to the disk at most a
  second later: an ``fdatasync`` costs 7-40 ms on a busy disk, too much for every answer);
* ``syslog+udp://HOST:PORT`` / ``syslog+tcp://HOST:PORT`` — a collector or the venue's
  second gateway (``reelgate audit witness-receive``); TCP frames by octet counting
  (RFC 6587) and reconnects on the next batch after a failure;
* ``none`` — no witness (``audit verify`` then says a cut tail cannot be seen).
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from gateway.records import syslog

SYSLOG_SCHEMES = ("syslog+udp", "syslog+tcp")


class Sink(Protocol):
    def write(self, lines: list[str], at: datetime) -> None: ...

    def sync(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WitnessSpec:
    """A parsed ``records.witness``: ``file`` or ``syslog`` (with its transport)."""

    kind: str  # "file", "syslog+udp", "syslog+tcp", "none"
    path: Path | None = None
    host: str = ""
    port: int = 0

    def describe(self) -> str:
        if self.kind == "file":
            return f"file {self.path}"
        if self.kind == "none":
            return "none"
        return f"{self.kind}://{self.host}:{self.port}"


def parse_spec(text: str) -> WitnessSpec:
    """ValueError (one line) for a spec that is none of the forms above."""
    text = text.strip()
    if not text:
        raise ValueError("empty witness")
    if text == "none":
        return WitnessSpec("none")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return WitnessSpec("file", Path(text).expanduser())
    if scheme not in SYSLOG_SCHEMES:
        raise ValueError(
            "must be a file path, syslog+udp://HOST:PORT, syslog+tcp://HOST:PORT or none"
        )
    host, _, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) <= 65535:
        raise ValueError(f"{scheme}://HOST:PORT: needs a host and a port 1..65535")
    return WitnessSpec(scheme, host=host, port=int(port))


class FileSink:
    """Appends lines to one file (``O_APPEND``: whole lines even with several writers)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._lock = threading.Lock()

    def write(self, lines: list[str], at: datetime) -> None:
        data = "".join(f"{line}\n" for line in lines).encode("ascii")
        with self._lock:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            os.write(self._fd, data)

    def sync(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fdatasync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fdatasync(self._fd)
                os.close(self._fd)
                self._fd = None


class SyslogSink:
    """RFC 5424 messages to a collector: one datagram each (UDP) or octet-counted frames
    on one connection (TCP)."""

    def __init__(self, spec: WitnessSpec, hostname: str | None = None) -> None:
        self.spec = spec
        self.hostname = hostname or socket.gethostname()
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def _connect(self) -> socket.socket:
        if self.spec.kind == "syslog+udp":
            family = socket.getaddrinfo(self.spec.host, self.spec.port, type=socket.SOCK_DGRAM)[0]
            sock = socket.socket(family[0], socket.SOCK_DGRAM)
            sock.connect(family[4])
            return sock
        sock = socket.create_connection((self.spec.host, self.spec.port), timeout=5)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def write(self, lines: list[str], at: datetime) -> None:
        messages = [
            syslog.format_message(line, at=at, hostname=self.hostname, procid=str(os.getpid()))
            for line in lines
        ]
        with self._lock:
            try:
                if self._sock is None:
                    self._sock = self._connect()
                if self.spec.kind == "syslog+udp":
                    for message in messages:
                        self._sock.send(message)
                else:
                    self._sock.sendall(b"".join(syslog.frame(m) for m in messages))
            except OSError:
                self._drop()
                raise

    def sync(self) -> None:
        return None  # the collector keeps it

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        with self._lock:
            self._drop()


def open_sink(spec: WitnessSpec) -> Sink | None:
    if spec.kind == "none":
        return None
    if spec.kind == "file":
        assert spec.path is not None
        return FileSink(spec.path)
    return SyslogSink(spec)
