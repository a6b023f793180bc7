"""The `reelgate` command line.

Every module in :mod:`gateway.app.commands` contributes its own sub-commands through a
``register(subparsers)`` function, so a new area (SAS, heats, Super 9, ...) adds a
module instead of editing one shared file.  A command's handler returns an exit code.
Errors meant for the operator are raised as :class:`OperatorError` and printed as one
line; nothing else is caught, so real bugs keep their traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from gateway.app import commands
from gateway.errors import OperatorError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reelgate",
        description="Reelgate: slot tournament and Super 9 promotion gateway.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{module_info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except OperatorError as exc:
        print(f"reelgate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
