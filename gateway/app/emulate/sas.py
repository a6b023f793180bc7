"""``reelgate emulate sas``: serve a bank of emulated slot machines over SAS/TCP.

Prints one JSON line per machine (``machine``, ``endpoint``, ``port``, ``address``,
``tournament_supported``, ``asset_number``) and then ``{"ready": true, ...}``, so scripts
and tests can read the endpoints; then serves until interrupted (or for ``--duration`` seconds).
``--floor-out FILE`` also writes a floor file of one bank holding them (written before
the ready line), so ``reelgate bank check A --floor FILE`` runs as soon as it is ready.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import sys
from typing import Any

from emulators.bank import Bank
from emulators.sas_quirks import QUIRK_NAMES, Quirks
from gateway.app.floor_file import write_floor_file
from gateway.errors import OperatorError


def register(kinds: Any) -> None:
    parser: argparse.ArgumentParser = kinds.add_parser(
        "sas",
        help="emulated slot machines speaking SAS over TCP on 127.0.0.1",
        description="Serve N emulated EGMs; machine i listens on 127.0.0.1:BASE_PORT+i "
        "(BASE_PORT 0 picks free ports).  Prints the endpoints as JSON lines.",
    )
    parser.add_argument("--machines", type=int, default=1, metavar="N")
    parser.add_argument("--base-port", type=int, default=0, metavar="P")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--address", type=int, default=1, help="SAS address of every EGM")
    parser.add_argument(
        "--loop-size",
        type=int,
        default=1,
        metavar="L",
        help="L machines to a port, a multi-drop loop at addresses 1..L (default 1)",
    )
    parser.add_argument(
        "--play", action="store_true", help="simulated players press spin while play is enabled"
    )
    parser.add_argument(
        "--pace", type=float, default=2.5, help="seconds between a player's spins (with --play)"
    )
    parser.add_argument(
        "--no-tournament-support",
        type=int,
        default=0,
        metavar="K",
        help="the last K machines clear LP A0 bit 3 (heats run host-timed on them)",
    )
    parser.add_argument(
        "--asset-numbers",
        default=None,
        metavar="N,N,...",
        help="each machine's AFT asset number, in order (default 1001, 1002, ...)",
    )
    parser.add_argument(
        "--aft-lax",
        action="store_true",
        help="model lax EGMs: AFT transfers need no registration and any asset number",
    )
    parser.add_argument(
        "--aft-refuse",
        type=int,
        default=0,
        metavar="K",
        help="the last K machines refuse AFT registration (a preflight blocker)",
    )
    parser.add_argument(
        "--enforce-gap",
        action="store_true",
        help="drop a host message with more than 5 ms between two of its bytes, as a real "
        "EGM does (off by default: a network path may deliver one message in late pieces)",
    )
    parser.add_argument(
        "--quirks",
        default="",
        metavar="NAME,...",
        help="every machine shows these real-EGM quirks: "
        f"{', '.join(QUIRK_NAMES)} (docs/sas.md, real machines)",
    )
    parser.add_argument(
        "--serial",
        action="append",
        default=[],
        metavar="DEVICE",
        help="also serve one machine on this serial port (repeatable), e.g. /dev/ttyUSB0",
    )
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    parser.add_argument(
        "--floor-out",
        metavar="FILE",
        help="write a floor file of one bank holding these machines (for --floor FILE)",
    )
    parser.add_argument(
        "--bank-name", default="A", metavar="NAME", help="the bank's name in --floor-out (A)"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.machines < 1 or args.machines > 5000:
        raise OperatorError("--machines must be 1..5000")
    if not 0 <= args.no_tournament_support <= args.machines:
        raise OperatorError(f"--no-tournament-support must be 0..{args.machines}")
    if args.base_port and not 1024 <= args.base_port <= 65535 - (args.machines - 1):
        raise OperatorError(
            f"--base-port {args.base_port}: ports up to {args.base_port + args.machines - 1} "
            "must lie in 1024..65535 (or use 0 for free ports)"
        )
    if not 1 <= args.address <= 127:
        raise OperatorError("--address must be 1..127")
    args.asset_numbers = _asset_numbers(args.asset_numbers, args.machines)
    if not 0 <= args.aft_refuse <= args.machines:
        raise OperatorError(f"--aft-refuse must be 0..{args.machines}")
    if not 1 <= args.loop_size <= 127:
        raise OperatorError("--loop-size must be 1..127 (a SAS loop's addresses)")
    if args.pace <= 0:
        raise OperatorError("--pace must be positive")
    if args.duration is not None and args.duration <= 0:
        raise OperatorError("--duration must be positive")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", args.bank_name):
        raise OperatorError("--bank-name: 1-32 letters, digits, '-' or '_'")
    try:
        args.quirks = Quirks.parse(args.quirks)
    except ValueError as exc:
        raise OperatorError(f"--quirks: {exc}") from None
    return asyncio.run(_serve(args))


def _asset_numbers(text: str | None, machines: int) -> list[int] | None:
    if text is None:
        return None
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        raise OperatorError(f"--asset-numbers {text!r}: numbers separated by commas") from None
    if len(numbers) != machines:
        raise OperatorError(f"--asset-numbers: {len(numbers)} given for {machines} machines")
    if any(not 1 <= n <= 0xFFFFFFFF for n in numbers) or len(set(numbers)) != machines:
        raise OperatorError("--asset-numbers: each 1..4294967295, no two the same")
    return numbers


def serial_errors() -> type[Exception]:
    import serial

    error: type[Exception] = serial.SerialException
    return error


async def _serve(args: argparse.Namespace) -> int:
    bank = Bank(
        args.machines,
        base_port=args.base_port,
        seed=args.seed,
        no_tournament_support=args.no_tournament_support,
        address=args.address,
        asset_numbers=args.asset_numbers,
        aft_lax=args.aft_lax,
        aft_refuse=args.aft_refuse,
        loop_size=args.loop_size,
        enforce_gap=args.enforce_gap,
        quirks=args.quirks,
    )
    try:
        machines = await bank.start()
        on_serial = [await bank.serve_serial(device) for device in args.serial]
    except OSError as exc:
        await bank.close()
        raise OperatorError(f"cannot serve the bank: {exc.strerror or exc}") from None
    except serial_errors() as exc:
        await bank.close()
        raise OperatorError(f"cannot open serial port: {exc}") from None
    try:
        out = sys.stdout
        for b in machines:
            out.write(json.dumps(b.describe()) + "\n")
        for s in on_serial:
            out.write(json.dumps(s.describe()) + "\n")
        if args.floor_out:
            described = [b.describe() for b in machines] + [s.describe() for s in on_serial]
            write_floor_file(args.floor_out, args.bank_name, described)
        if args.play:
            bank.start_players(seed=args.seed, pace=args.pace)
        ready = {"ready": True, "machines": len(machines) + len(on_serial), "play": args.play}
        out.write(json.dumps(ready) + "\n")
        out.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            async with asyncio.timeout(args.duration):
                await stop.wait()
        except TimeoutError:
            pass
    finally:
        await bank.close()
    return 0
