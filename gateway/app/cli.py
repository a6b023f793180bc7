"""The `reelgate` command line.

:data:`COMMANDS` names every command, the module that builds it and its one-line help.
Only the chosen command's module is imported (``reelgate tournament list`` never loads
the SAS driver or the Super 9 desk); ``reelgate --help`` is built from the table alone.
A command module offers ``register(subparsers)``; its handler returns an exit code.

Every parser is a :class:`~gateway.app.options.OneLineParser`, so a usage mistake is one
line.  Errors meant for the operator are raised as :class:`OperatorError` and printed as
one line; nothing else is caught, so real bugs keep their traceback.  Output to a pipe
closed early (``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from gateway.app.configfile import apply_config
from gateway.app.options import OneLineParser, add_reasons
from gateway.errors import OperatorError
from storage.chain_errors import AuditKeyMissing

# name -> (module in gateway.app.commands, help); keep in the order --help shows them.
COMMANDS: dict[str, tuple[str, str]] = {
    "db": ("db", "create, migrate or check the database schema; back it up, restore it"),
    "config": ("config", "check or show the configuration (file and environment)"),
    "serve": ("serve", "run the gateway: recovery, bank supervision, scheduled heats"),
    "bank": ("bank", "check, enable or disable a tournament bank; add or move machines"),
    "heat": ("heat", "heats: schedule, registration, scores, incidents; test heat, recovery"),
    "tournament": ("tournament", "slot tournament: settings, standings, qualifiers, card draws"),
    "hotseat": ("hotseat", "hot-seat draws and wild cards: commit, draw, show, pay"),
    "players": ("players", "tournament players, exclusion registers, disqualification"),
    "entries": ("entries", "cash desk: sell tournament entries, refunds, list entries"),
    "teams": ("teams", "team tournaments: settings, registration, team standings (H1-H9)"),
    "walkup": ("walkup", "walk-up play: windows per bank, sessions at the machine (W1-W9)"),
    "super9": ("super9", "the Super 9 roulette promotion: tickets, wheel, draw, jackpot"),
    "audit": ("audit", "verify or read the audit log of every change people made"),
    "export": ("export", "signed exports (JSON + HTML) of heats, stages, tournaments, Super 9"),
    "cashup": ("cashup", "the day's cash-up per cashier, reconciled to the cent"),
    "users": ("users", "accounts: add, list, disable, enable, reset a password; the roles"),
    "tokens": ("tokens", "API tokens: create (scoped, expiring), list, revoke"),
    "api": ("api", "serve the desks' HTTP API (/api/v1) on a desk host"),
    "signage": ("signage", "serve the leaderboard / Super 9 signage page from the MQTT feed"),
    "sas": ("sas", "talk SAS to one machine"),
    "board": ("board", "the interface-board agent: one EGM over SAS, exposed over MQTT"),
    "emulate": ("emulate", "run emulated devices on loopback for tests, demos and benchmarks"),
    "demo": ("demo", "run a whole qualifying heat on an emulated bank, no set-up needed"),
}


class _Version(argparse.Action):
    """``--version`` from the installed distribution, read only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help=str(kw.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("reelgate")
        except PackageNotFoundError:  # run from a source tree that was never installed
            found = "unknown (not installed)"
        print(f"reelgate {found}")
        parser.exit(0)


def _top_parser() -> tuple[OneLineParser, argparse._SubParsersAction[OneLineParser]]:
    parser = OneLineParser(
        prog="reelgate",
        description="Reelgate: slot tournament and Super 9 promotion gateway.",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    return parser, sub


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with ``command`` built in full and every other command by name only."""
    parser, sub = _top_parser()
    for name, (module_name, help_text) in COMMANDS.items():
        if name == command:
            module = importlib.import_module(f"gateway.app.commands.{module_name}")
            module.register(sub)
            add_reasons(parser)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The command named on the line (the first word not an option), if it is one."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            return _main(args_list)
        finally:
            # argparse's --help and its errors leave through SystemExit: their output is
            # flushed here too, or a closed pipe would only show at interpreter exit.
            sys.stdout.flush()
    except BrokenPipeError:
        # The reader left (``| head``): nothing more to say, and nothing to flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _main(argv: list[str]) -> int:
    _training_banner(show=False)  # nothing owed from an earlier command of this process
    parser = build_parser(_chosen(argv))
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:  # a placeholder: only reached for a command the table mislabels
        parser.error(f"{args.command}: not available")
    try:
        apply_config(args)  # --database from the configuration file, when one is in effect
        if getattr(args, "server", None):  # through the API: only what it covers
            handler = _remote_handler(args)
        code: int = handler(args)
        _training_banner()
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
    except (OperatorError, AuditKeyMissing) as exc:
        _training_banner(show=False)
        print(f"reelgate: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code


def _training_banner(*, show: bool = True) -> None:
    """Every screen of a training database says so (on standard error, after the
    output, so a refusal stays one line and piped output stays clean)."""
    keyed = sys.modules.get("gateway.app.keyed")  # loaded by every command that opens a DB
    text = keyed.take_banner() if keyed is not None else None
    if show and text:
        print(text, file=sys.stderr)


def _remote_handler(args: argparse.Namespace) -> Any:
    from gateway.app.remote import refuse_uncovered

    remote = getattr(args, "remote", None)
    if remote is None:
        raise refuse_uncovered(args)
    return remote


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
