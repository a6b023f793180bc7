"""``reelgate emulate KIND ...``: run emulated devices (slot machines, boards, the wheel)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any

from gateway.app import emulate as emulate_commands


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "emulate", help="run emulated devices on loopback for tests, demos and benchmarks"
    )
    kinds = parser.add_subparsers(dest="emulator", required=True, metavar="KIND")
    for info in sorted(pkgutil.iter_modules(emulate_commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{emulate_commands.__name__}.{info.name}")
        module.register(kinds)
