"""Capture options shared by the commands that talk SAS (docs/sas.md, real machines).

``--capture FILE`` (``--out FILE`` on ``sas capture``) with ``--capture-max-bytes`` and
``--capture-keep``; :func:`open_capture` opens one file, :class:`PortCaptures` one file
per port for commands whose links open their own ports (``heat run``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from gateway.app.capture_args import capture_options as capture_options  # re-exported
from gateway.app.capture_args import check_capture as check_capture  # re-exported
from gateway.errors import OperatorError
from protocols.sas.carriers import Carrier
from protocols.sas.carriers.tap import CaptureFile, TapCarrier
from protocols.sas.lines import shared_lines


def open_capture(args: argparse.Namespace, endpoint: str) -> CaptureFile | None:
    """The capture file the options ask for (inside the event loop), or None."""
    if args.capture is None:
        return None
    loop = asyncio.get_running_loop()
    try:
        return CaptureFile(
            args.capture,
            endpoint,
            loop.time,
            max_bytes=args.capture_max_bytes,
            keep=args.capture_keep,
        )
    except OSError as exc:
        raise OperatorError(f"{args.capture}: cannot write ({exc.strerror or exc})") from None


def port_file(base: str, port: str) -> Path:
    """``base`` with the port in its name: ``egm.jsonl`` + ``sas+tcp://127.0.0.1:7001`` ->
    ``egm.jsonl.127.0.0.1_7001`` (serial: the device's name)."""
    bare = port.split("://", 1)[-1]
    return Path(f"{base}.{re.sub(r'[^A-Za-z0-9.-]+', '_', bare).strip('_')}")


class PortCaptures:
    """A tap for :class:`~protocols.sas.lines.LinePool`: one capture file per port, each
    with the options' size limit and rotation; :meth:`close` closes them all."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.base = str(args.capture)
        self.max_bytes = int(args.capture_max_bytes)
        self.keep = int(args.capture_keep)
        self.files: list[CaptureFile] = []

    def __call__(self, port: str, carrier: Carrier) -> Carrier:
        capture = CaptureFile(
            port_file(self.base, port),
            port,
            asyncio.get_running_loop().time,
            max_bytes=self.max_bytes,
            keep=self.keep,
        )
        self.files.append(capture)
        return TapCarrier(carrier, capture)

    def close(self) -> None:
        for capture in self.files:
            capture.close()


@contextlib.contextmanager
def port_captures(args: argparse.Namespace) -> Iterator[PortCaptures | None]:
    """Inside the event loop: every SAS port this process opens while inside is recorded
    (``--capture``), one file per port; nothing when the option is not given."""
    captures = PortCaptures(args) if getattr(args, "capture", None) else None
    pool = shared_lines()
    pool.tap = captures
    try:
        yield captures
    finally:
        pool.tap = None
        if captures is not None:
            captures.close()
