"""The ``--capture`` options of the commands that talk SAS (``sas probe | capture |
conformance``, ``heat run``, ``serve``, ``board``) and their checks, apart from the tap
itself (:mod:`gateway.app.sas_capture`), so building a command's parser loads no SAS code
(``reelgate heat list --server`` is a desk read).  The defaults are the tap's own
(``protocols.sas.carriers.tap``; a test keeps them equal)."""

from __future__ import annotations

import argparse
from pathlib import Path

from gateway.errors import OperatorError

DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # = protocols.sas.carriers.tap.DEFAULT_MAX_BYTES
DEFAULT_KEEP = 3  # = protocols.sas.carriers.tap.DEFAULT_KEEP


def capture_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    flag = "--out" if required else "--capture"
    parser.add_argument(
        flag,
        dest="capture",
        required=required,
        metavar="FILE",
        help="write every byte both ways to FILE (JSON lines, docs/sas.md)",
    )
    parser.add_argument(
        "--capture-max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"rotate the capture past N bytes ({DEFAULT_MAX_BYTES})",
    )
    parser.add_argument(
        "--capture-keep",
        type=int,
        default=DEFAULT_KEEP,
        metavar="K",
        help=f"rotated files kept: FILE.1 .. FILE.K ({DEFAULT_KEEP})",
    )


def check_capture(args: argparse.Namespace) -> None:
    if getattr(args, "capture", None) is None:
        return
    if args.capture_max_bytes < 1024:
        raise OperatorError("--capture-max-bytes must be at least 1024")
    if args.capture_keep < 0:
        raise OperatorError("--capture-keep must be 0 or more")
    folder = Path(args.capture).resolve().parent
    if not folder.is_dir():
        raise OperatorError(f"{args.capture}: no such folder {folder}")
