"""``reelgate bank check|enable|disable A``: a technician readies or stands down a bank
(``clear-mark``: :mod:`gateway.app.commands.bank_marks`).

``enable`` and ``disable`` drive the bank's machines, so they hold its lease while they
do (:mod:`gateway.heats.ownership`): with the bank held by another process (``reelgate
serve``, a test heat) they refuse in one line, exit 2, and change nothing.  With
``--server URL`` (a token) the gateway serving the bank checks, enables or disables it
through its API (``/api/v1/banks/A/...``), and the floor's rows change through the API.

``check`` polls the machines too, so it holds the lease while it does: with the bank
held by another process it says in one line who holds it and that the machines answer
that process (a second poller on a SAS line reads as "no answer", which is not the
machines' truth), and points at ``--server`` for the holder's live view; exit 2.
``enable`` ends with one line saying what it did: the bank enabled, who is left out."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.app.commands import bank_marks
from gateway.app.commands.serve import add_snmp_secrets_argument, snmp_secrets
from gateway.app.context import GatewayContext, bank_links, check_endpoint, close_links
from gateway.app.identity import host_actor
from gateway.app.options import add_gateway, add_json, add_write
from gateway.app.output import emit
from gateway.app.remote import call
from gateway.clocks.central import DEFAULT_LIMIT_MS, ClockOffset, central_offset
from gateway.errors import OperatorError
from gateway.floor.model import BankSpec, MachineSpec, resolve_snmp
from gateway.floor.snmp import SnmpSecrets
from gateway.floor.store import add_machine, move_machine, set_bank_enabled
from gateway.heats.bank_readiness import (
    normal_play,
    refuse_blocked,
    refuse_heat_under_way,
    refuse_machine_in_heat,
)
from gateway.heats.ownership import hold_banks
from gateway.heats.preflight import MachineCheck, add_health, check_bank
from storage import aft as aft_store
from storage.aft import RegistrationRow
from storage.lease import lease_of


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "bank", help="check, enable or disable a tournament bank"
    )
    actions = parser.add_subparsers(dest="bank_action", required=True, metavar="ACTION")

    check = actions.add_parser("check", help="preflight every machine of a bank")
    check.add_argument("bank")
    add_gateway(check, floor_required=False)
    add_json(check)
    add_snmp_secrets_argument(check)
    check.add_argument(
        "--server",
        metavar="URL",
        help="check through the API of the gateway serving the bank (token: $REELGATE_TOKEN "
        "or --token-file)",
    )
    check.add_argument("--token-file", metavar="FILE", help="file holding the API token")
    check.add_argument(
        "--max-clock-offset",
        type=float,
        default=DEFAULT_LIMIT_MS,
        metavar="MS",
        help="this host's clock against the database's: further than MS is a blocker for "
        f"synchronised starts (default {DEFAULT_LIMIT_MS:g})",
    )
    check.set_defaults(handler=_check, remote=_remote_check)

    enable = actions.add_parser("enable", help="enable a bank whose machines pass the check")
    enable.add_argument("bank")
    add_gateway(enable, floor_required=False)
    enable.add_argument(
        "--exclude", action="append", default=[], metavar="MACHINE", help="leave a machine out"
    )
    enable.add_argument(
        "--reason", action="append", default=[], help="why (one per --exclude, logged)"
    )
    add_write(enable, now=False)
    add_json(enable)
    add_snmp_secrets_argument(enable)
    enable.set_defaults(handler=_enable, remote=_remote_enable)

    add = actions.add_parser("add-machine", help="add a machine to a bank (stored)")
    add.add_argument("bank")
    add.add_argument("machine")
    add.add_argument("--endpoint", required=True, help="e.g. sas+tcp://10.0.0.5:4001?address=1")
    add.add_argument(
        "--snmp",
        help="its board's SNMP agent: udp://host:port?user=U (v3 authPriv) or "
        "?version=2c; passphrases and communities go in the SNMP secrets file",
    )
    add.add_argument(
        "--aft-registration-key",
        metavar="HEX40",
        help="the gateway's AFT registration key for it (40 hex digits; with --aft-pos-id)",
    )
    add.add_argument("--aft-pos-id", type=int, metavar="N", help="the gateway's AFT POS ID for it")
    add_gateway(add, floor_required=False)
    add_write(add, now=False)
    add.set_defaults(handler=_add_machine, remote=_remote_add_machine)

    move = actions.add_parser("move-machine", help="move a machine to another bank/endpoint")
    move.add_argument("machine")
    move.add_argument("--to", dest="to_bank", help="the bank it moves to")
    move.add_argument("--endpoint", help="its new endpoint")
    add_gateway(move, floor_required=False)
    add_write(move, now=False)
    move.set_defaults(handler=_move_machine, remote=_remote_move_machine)

    disable = actions.add_parser("disable", help="return every machine to normal play")
    disable.add_argument("bank")
    add_gateway(disable, floor_required=False)
    add_write(disable, now=False)
    disable.set_defaults(handler=_disable, remote=_remote_disable)
    bank_marks.register(actions)  # clear-mark


def _check(args: argparse.Namespace) -> int:
    if not 0 < args.max_clock_offset <= 10_000:
        raise OperatorError("--max-clock-offset must be between 0 and 10000 ms")
    checks, host = asyncio.run(_run_check(args))
    _print_checks(checks, as_json=args.json)
    # The host's line on stderr: the machines' table (or JSON) on stdout stays as it was.
    blockers = host.blockers(args.max_clock_offset)
    print(
        f"host clock: {host.offset_s * 1000:+.1f} ms +/- {host.error_s * 1000:.1f} ms from "
        f"the database's" + (f"; blocker: {blockers[0]}" if blockers else ""),
        file=sys.stderr,
    )
    return 0 if all(c.ok for c in checks) and not blockers else 1


async def refuse_held(sessions: async_sessionmaker[AsyncSession], bank: str) -> None:
    """One line naming the live holder of ``bank``, if another process drives it."""
    view = await lease_of(sessions, bank)
    if view is None or not view.live(datetime.now(UTC)):
        return
    raise OperatorError(
        f"bank {bank} is held by {view.holder} on {view.host} pid {view.pid} since "
        f"{view.acquired_at:%H:%M:%S} UTC: its machines answer that process, not this "
        f"check; see its live view with `reelgate bank check {bank} --server URL`"
    )


async def _run_check(args: argparse.Namespace) -> tuple[list[MachineCheck], ClockOffset]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        host = await central_offset(ctx.engine)  # the host's part of the preflight
        bank = ctx.bank(args.bank)
        secrets = snmp_secrets(args, bank.machines)  # a missing secret: before any link
        await refuse_held(ctx.sessions, bank.name)
        # Held while polling: serve taking the bank mid-check would see the same mess.
        async with hold_banks(ctx.sessions, ctx.journal, [bank.name], holder="bank check"):
            links, _failed = await bank_links(bank, include_excluded=True)
            try:
                checks = await check_bank(links)
            finally:
                await close_links(links)
        await _record_aft(ctx.sessions, checks)
        add_health(checks, await _health(bank.machines, secrets))
        return checks, host
    finally:
        await ctx.close()


async def _health(machines: Sequence[MachineSpec], secrets: SnmpSecrets) -> dict[str, list[str]]:
    """SNMP device health of the machines whose boards have an agent (gateway.machines.health)."""
    from gateway.machines.health import board_problems  # pysnmp loads only when a check runs

    # A missing secret: OperatorError before any socket.
    return await board_problems(resolve_snmp(machines, secrets))


def _exclusions(args: argparse.Namespace) -> dict[str, str]:
    if len(args.exclude) != len(args.reason):
        raise OperatorError("--exclude: every excluded machine needs its own --reason")
    out: dict[str, str] = {}
    for machine_id, reason in zip(args.exclude, args.reason, strict=True):
        if not reason.strip():
            raise OperatorError(f"--reason for {machine_id}: must not be empty")
        out[machine_id] = reason.strip()
    return out


def _enable(args: argparse.Namespace) -> int:
    exclusions = _exclusions(args)  # validate before touching anything
    checks = asyncio.run(_run_enable(args, exclusions))
    _print_checks(checks, as_json=args.json, title=f"bank {args.bank} enable")
    # After --json the line goes to stderr: stdout stays one JSON document.
    print(
        enabled_line(args.bank, len(checks), exclusions),
        file=sys.stderr if args.json else sys.stdout,
    )
    return 0


def enabled_line(bank: str, ready: int, exclusions: dict[str, str]) -> str:
    """``bank A enabled: 7 machines ready; A07 left out (reel 2 sticks)``."""
    line = f"bank {bank} enabled: {ready} machine{'s' if ready != 1 else ''} ready"
    if exclusions:
        left = ", ".join(f"{m} ({why})" for m, why in sorted(exclusions.items()))
        return f"{line}; {left} left out"
    return f"{line}; none left out"


async def _run_enable(args: argparse.Namespace, exclusions: dict[str, str]) -> list[MachineCheck]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        bank = ctx.bank(args.bank)
        ids = {m.id for m in bank.machines}
        unknown = sorted(set(exclusions) - ids)
        if unknown:
            raise OperatorError(f"--exclude {unknown[0]}: not a machine of bank {bank.name}")
        active = [m for m in bank.machines if m.id not in exclusions]
        secrets = snmp_secrets(args, active)  # a missing secret: before any link
        async with hold_banks(ctx.sessions, ctx.journal, [bank.name], holder="bank enable"):
            checks = await _checked(ctx.sessions, bank, exclusions, active, secrets)
            await set_bank_enabled(
                ctx.sessions, bank.name, enabled=True, exclusions=exclusions, actor=host_actor()
            )
        return checks
    finally:
        await ctx.close()


async def _record_aft(
    sessions: async_sessionmaker[AsyncSession], checks: list[MachineCheck]
) -> None:
    """Keep what preflight found of each machine's AFT registration (storage.aft)."""
    now = datetime.now(UTC)
    rows = [
        RegistrationRow(c.machine_id, a.asset_number, a.registered, a.status, a.pos_id,
                        a.reason, now)
        for c in checks
        if (a := c.aft) is not None
    ]  # fmt: skip
    if rows:
        await aft_store.record(sessions, rows)


async def _checked(
    sessions: async_sessionmaker[AsyncSession],
    bank: BankSpec,
    exclusions: dict[str, str],
    active: list[MachineSpec],
    secrets: SnmpSecrets,
) -> list[MachineCheck]:
    """The preflight of the machines to enable; a blocked one refuses the enable."""
    links, _ = await bank_links(bank, include_excluded=True)
    try:
        checks = await check_bank({m: link for m, link in links.items() if m not in exclusions})
    finally:
        await close_links(links)
    await _record_aft(sessions, checks)
    add_health(checks, await _health(active, secrets))
    refuse_blocked(bank.name, checks, exclude_hint="--exclude it with a --reason")
    return checks


def _add_machine(args: argparse.Namespace) -> int:
    spec = asyncio.run(_floor_change(args, "floor.add-machine"))
    print(f"machine {spec.id} added to bank {spec.bank} at position {spec.position}")
    return 0


def _move_machine(args: argparse.Namespace) -> int:
    if args.to_bank is None and args.endpoint is None:
        raise OperatorError("move-machine: give --to BANK and/or --endpoint URI")
    spec = asyncio.run(_floor_change(args, "floor.move-machine"))
    print(f"machine {spec.id} now in bank {spec.bank} at {spec.endpoint}")
    return 0


async def _floor_change(args: argparse.Namespace, action: str) -> MachineSpec:
    """A technician's change to the floor: stored (the database is the truth) and audited
    in the same transaction (:mod:`gateway.floor`).  The endpoint is parsed by its driver
    first, so a bad one is never stored."""
    if args.endpoint is not None:
        check_endpoint(args.machine, args.endpoint)
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        await refuse_machine_in_heat(ctx.journal, args.machine)
        if action == "floor.add-machine":
            return await add_machine(
                ctx.sessions,
                args.bank,
                args.machine,
                args.endpoint,
                snmp=args.snmp,
                aft_registration_key=args.aft_registration_key,
                aft_pos_id=args.aft_pos_id,
                actor=host_actor(),
            )
        return await move_machine(
            ctx.sessions,
            args.machine,
            bank=args.to_bank,
            endpoint=args.endpoint,
            actor=host_actor(),
        )
    finally:
        await ctx.close()


def _disable(args: argparse.Namespace) -> int:
    stuck = asyncio.run(_run_disable(args))
    if stuck:
        print(f"bank {args.bank} disabled; NOT back in normal play: {', '.join(stuck)}")
        return 1
    print(f"bank {args.bank} disabled; every machine back in normal play")
    return 0


async def _run_disable(args: argparse.Namespace) -> list[str]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        bank = ctx.bank(args.bank)
        async with hold_banks(ctx.sessions, ctx.journal, [bank.name], holder="bank disable"):
            await refuse_heat_under_way(ctx.journal, bank.name)
            links, _ = await bank_links(bank, include_excluded=True)
            try:
                results = await asyncio.gather(*(normal_play(link) for link in links.values()))
            finally:
                await close_links(links)
            await set_bank_enabled(ctx.sessions, bank.name, enabled=False, actor=host_actor())
        return [m for m, ok in zip(links, results, strict=True) if not ok]
    finally:
        await ctx.close()


# -- through the API (--server): the running gateway drives the bank -----------------------


def _remote_checks(args: argparse.Namespace, data: dict[str, Any], title: str) -> int:
    return emit(
        args,
        data,
        ["machine", "ready", "blocks"],
        [[m["machine"], "yes" if m["ready"] else "NO", "; ".join(m["blockers"]) or "ok"]
         for m in data["machines"]],
        title=title,
    )  # fmt: skip


def _remote_check(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/banks/{args.bank}/check", {})
    _remote_checks(args, data, f"bank {args.bank} check")
    return 0 if data["ready"] else 1


def _remote_enable(args: argparse.Namespace) -> int:
    exclusions = _exclusions(args)
    data = call(args, "POST", f"/banks/{args.bank}/enable", {"exclude": exclusions})
    code = _remote_checks(args, data, f"bank {args.bank} enabled")
    ready = sum(1 for m in data["machines"] if m["ready"])
    print(enabled_line(args.bank, ready, exclusions), file=sys.stderr if args.json else sys.stdout)
    return code


def _remote_disable(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/banks/{args.bank}/disable", {})
    if data["stuck"]:
        print(f"bank {args.bank} disabled; NOT back in normal play: {', '.join(data['stuck'])}")
        return 1
    print(f"bank {args.bank} disabled; every machine back in normal play")
    return 0


def _remote_add_machine(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"machine": args.machine, "endpoint": args.endpoint}
    for key in ("snmp", "aft_registration_key", "aft_pos_id"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    data = call(args, "POST", f"/banks/{args.bank}/machines", body)
    print(f"machine {data['machine']} added to bank {data['bank']} at position {data['position']}")
    return 0


def _remote_move_machine(args: argparse.Namespace) -> int:
    if args.to_bank is None and args.endpoint is None:
        raise OperatorError("move-machine: give --to BANK and/or --endpoint URI")
    body = {k: v for k, v in (("to", args.to_bank), ("endpoint", args.endpoint)) if v is not None}
    data = call(args, "POST", f"/machines/{args.machine}/move", body)
    print(f"machine {data['machine']} now in bank {data['bank']} at {data['endpoint']}")
    return 0


def _print_checks(checks: list[MachineCheck], *, as_json: bool, title: str = "bank check") -> None:
    if as_json:
        print(json.dumps([c.as_dict() for c in checks], indent=2))
        return
    table = Table(title=title)
    for col in ("machine", "answers", "tournament", "AFT asset", "credits", "clock", "blocks"):
        table.add_column(col)
    for c in checks:
        clock = "-" if c.clock_offset_s is None else f"{c.clock_offset_s:+.1f} s"
        if c.clock_set:
            clock += " (set)"
        aft = "-" if c.aft is None else f"{c.aft.asset_number} ({c.aft.status})"
        table.add_row(
            c.machine_id,
            "yes" if c.answers else "NO",
            c.tournament or "-",
            aft,
            "-" if c.credits is None else str(c.credits),
            clock,
            "; ".join(c.blockers) or "ok",
        )
    Console().print(table)
    for c in checks:  # tolerated, never blocking (docs/sas.md, real machines)
        for quirk in c.quirks:
            print(f"{c.machine_id} quirk: {quirk}")
