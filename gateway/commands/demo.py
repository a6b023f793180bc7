"""``reelgate demo``: a whole qualifying heat on an emulated bank, with nothing to set up.

The run itself lives in :mod:`gateway.heats.demo`, imported only when the demo runs (the
CLI imports every command module just to build its parser).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gateway.errors import OperatorError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run a whole qualifying heat on an emulated bank, no set-up needed"
    )
    parser.add_argument("--seconds", type=int, default=25, help="heat length (default 25)")
    parser.add_argument("--machines", type=int, default=8, help="machines in the bank (2-40)")
    parser.add_argument("--credits", type=int, default=1000, help="tournament credits per seat")
    parser.add_argument("--keep", action="store_true", help="keep the demo folder afterwards")
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    if not 3 <= args.seconds <= 600:
        raise OperatorError("--seconds must be between 3 and 600")
    if not 2 <= args.machines <= 40:
        raise OperatorError("--machines must be between 2 and 40")
    if not 1 <= args.credits <= 99_999_999:
        raise OperatorError("--credits must be between 1 and 99999999")
    logging.basicConfig(level=logging.ERROR)
    folder = Path(tempfile.mkdtemp(prefix="reelgate-demo-"))
    try:
        from gateway.heats.demo import run

        return asyncio.run(run(args, folder))
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
