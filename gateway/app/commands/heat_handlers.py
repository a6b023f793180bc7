"""The handlers of ``reelgate heat run | direct | recover`` (their parser: :mod:`.heat`),
imported only when one of them runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any, Final

from rich.console import Console
from rich.table import Table

from gateway.app.context import GatewayContext, bank_links, close_links
from gateway.app.identity import host_actor
from gateway.app.sas_capture import check_capture, port_captures
from gateway.errors import OperatorError
from gateway.floor.model import BankSpec
from gateway.heat_formats import TIMED, HeatFormat, HeatFormatError, heat_format
from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.orders import check_order, queue_order, unheld
from gateway.heats.ownership import hold_banks
from gateway.heats.recovery import Recovery, recover_bank
from gateway.heats.runner import HeatOutcome, HeatRunner
from storage.journal import DirectorCommand, RunState
from storage.lease import lease_of

DIRECT_POLL_S: Final = 0.2  # the scheduler ticks every 0.5 s


def _trace(enabled: bool) -> Any:
    def sink(note: ProgressNote) -> None:
        if note.kind is Progress.STATE:
            print(f"run {note.run_id} state {note.state}", file=sys.stderr, flush=True)
        elif note.kind is Progress.MALFUNCTION:
            print(f"run {note.run_id} malfunction {note.machine_id}: {note.detail}",
                  file=sys.stderr, flush=True)  # fmt: skip
        elif note.kind is Progress.DONE:
            print(f"run {note.run_id} done {note.machine_id}: {note.detail}",
                  file=sys.stderr, flush=True)  # fmt: skip

    return sink if enabled else None


def run(args: argparse.Namespace) -> int:
    states = [s.value for s in RunState]
    if args.hold_in is not None and args.hold_in not in states:  # a fault test's option
        raise OperatorError(f"--hold-in {args.hold_in!r}: not a run state ({', '.join(states)})")
    if args.seconds <= 0 or args.seconds > 3600:
        raise OperatorError("--seconds must be between 1 and 3600")
    if args.credits <= 0 or args.credits > 99_999_999:
        raise OperatorError("--credits must be between 1 and 99999999 (SAS 8C: 4 BCD bytes)")
    _format_of(args)  # refused here, in one line, before anything is opened
    check_capture(args)
    recoveries, outcome = asyncio.run(_run_heat(args))
    _print(recoveries, outcome, as_json=args.json)
    return 0 if outcome.state is RunState.CLOSED else 1


async def _run_heat(args: argparse.Namespace) -> tuple[list[Recovery], HeatOutcome]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        bank = ctx.bank(args.bank)
        async with hold_banks(ctx.sessions, ctx.journal, [bank.name], holder="heat run"):
            with port_captures(args):  # --capture: every SAS port opened here, recorded
                return await _heat_on_links(ctx, bank, args)
    finally:
        await ctx.close()


async def _heat_on_links(
    ctx: GatewayContext, bank: BankSpec, args: argparse.Namespace
) -> tuple[list[Recovery], HeatOutcome]:
    links, _ = await bank_links(bank, include_excluded=True)
    try:
        sink = _trace(args.trace)
        recoveries = await recover_bank(ctx.writer, links, bank.name, progress=sink)
        hold = RunState(args.hold_in) if args.hold_in else None
        runner = HeatRunner(ctx.writer, links, progress=sink, stop_after=hold)
        outcome = await runner.run_new(
            bank.name, [m.id for m in bank.active],
            credits=args.credits, seconds=args.seconds, heat_format=_format_of(args),
        )  # fmt: skip
        if hold is not None:
            print(f"holding in {hold.value}", file=sys.stderr, flush=True)
            await asyncio.sleep(120)  # bounded: the test kills us long before
        await ctx.writer.drain(10.0)
        return recoveries, outcome
    finally:
        await close_links(links)


def _format_of(args: argparse.Namespace) -> HeatFormat:
    """The test heat's format (F1): timed, ``--games N`` (F2) or ``--credit-limited``."""
    try:
        if args.games is not None:
            return heat_format("games-limited", games_per_seat=args.games)
        if args.credit_limited is not None:
            return heat_format("credit-limited", minimum_bet=args.credit_limited)
    except HeatFormatError as exc:
        raise OperatorError(str(exc)) from None
    return TIMED


def recover(args: argparse.Namespace) -> int:
    recoveries = asyncio.run(_recover_only(args))
    _print(recoveries, None, as_json=args.json)
    return 0


async def _recover_only(args: argparse.Namespace) -> list[Recovery]:
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        bank = ctx.bank(args.bank)
        async with hold_banks(ctx.sessions, ctx.journal, [bank.name], holder="heat recover"):
            links, _ = await bank_links(bank, include_excluded=True)
            try:

                def in_control(r: Recovery) -> None:
                    if args.trace:
                        print(f"run {r.run_id} in control: {r.decision}",
                              file=sys.stderr, flush=True)  # fmt: skip

                got = await recover_bank(
                    ctx.writer, links, bank.name, progress=_trace(args.trace),
                    on_control=in_control,
                )  # fmt: skip
                await ctx.writer.drain(10.0)
                return got
            finally:
                await close_links(links)
    finally:
        await ctx.close()


def direct(args: argparse.Namespace) -> int:
    check_order(args.order, args.heat, args.reason)  # one line, before the database
    if not 0 <= args.wait <= 600:
        raise OperatorError("--wait must be 0..600 seconds")
    return asyncio.run(_run_direct(args))


async def _run_direct(args: argparse.Namespace) -> int:
    """Queue the order for the bank's holder and wait for what it did.

    Only the process holding the bank's lease carries an order out (its scheduler's next
    tick), so an order for a bank nobody holds is refused here: queued, it would be
    carried out by whichever gateway took the bank next, perhaps hours later."""
    ctx = await GatewayContext.open(database=args.database, floor_path=args.floor, spool=args.spool)
    try:
        ctx.bank(args.bank)  # the bank must exist
        holder = await lease_of(ctx.sessions, args.bank)
        if holder is None or not holder.live(datetime.now(UTC)):
            raise OperatorError(unheld(args.bank, args.order))
        async with ctx.sessions.begin() as session:
            cmd = await queue_order(
                session, bank=args.bank, order=args.order, heat_id=args.heat,
                reason=args.reason, actor=host_actor(), now=datetime.now(UTC),
            )  # fmt: skip
            order_id = cmd.id
        said = f"order {order_id} ({args.order}) for bank {args.bank}"
        if args.wait == 0:
            print(f"{said}: queued for {holder.holder} on {holder.host} pid {holder.pid}")
            return 0
        outcome = await _outcome(ctx, order_id, args.wait)
    finally:
        await ctx.close()
    if outcome is None:
        print(
            f"{said}: queued, but {holder.holder} on {holder.host} pid {holder.pid} has not "
            f"carried it out within {args.wait:g} s; it still will on its next tick"
        )
        return 1
    print(f"{said}: {outcome}")
    return 1 if outcome.startswith("refused") else 0


async def _outcome(ctx: GatewayContext, order_id: int, wait_s: float) -> str | None:
    """The order's outcome once the holder stamped it, or None after ``wait_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        async with ctx.sessions() as session:
            row = await session.get(DirectorCommand, order_id)
            if row is not None and row.done_at is not None:
                return row.outcome or "done"
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(min(DIRECT_POLL_S, max(deadline - loop.time(), 0.0)))


def outcome_dict(outcome: HeatOutcome) -> dict[str, Any]:
    acks = [s.unlock_ack_ms for s in outcome.seats.values() if s.unlock_ack_ms is not None]
    first = min(acks) if acks else 0.0
    return {
        "run_id": outcome.run_id,
        "state": outcome.state.value,
        "started_at": outcome.started_at.isoformat() if outcome.started_at else None,
        "ends_at": outcome.ends_at.isoformat() if outcome.ends_at else None,
        "end_to_committed_ms": outcome.end_to_committed_ms,
        "notes": outcome.notes,
        "machines": [
            {
                "id": s.machine_id,
                "support": s.support,
                "start_skew_ms": None if s.unlock_ack_ms is None else s.unlock_ack_ms - first,
                "score": s.score,
                "meters": None
                if s.meters is None
                else {
                    "games_played": s.meters.games_played,
                    "games_won": s.meters.games_won,
                    "credits_wagered": s.meters.credits_wagered,
                    "credits_won": s.meters.credits_won,
                },
                "state": s.state.value,
                "error": s.error,
            }
            for s in outcome.seats.values()
        ],
    }


def recovery_dict(r: Recovery) -> dict[str, Any]:
    return {
        "run_id": r.run_id,
        "found_state": r.found_state.value,
        "decision": r.decision,
        "silent": r.silent,
        "in_control_s": r.in_control_s,
        "outcome": None if r.outcome is None else outcome_dict(r.outcome),
    }


def _print(recoveries: list[Recovery], outcome: HeatOutcome | None, *, as_json: bool) -> None:
    if as_json:
        print(
            json.dumps(
                {
                    "recovered": [recovery_dict(r) for r in recoveries],
                    "heat": None if outcome is None else outcome_dict(outcome),
                },
                indent=2,
            )
        )
        return
    console = Console()
    for r in recoveries:
        console.print(
            f"recovered heat run {r.run_id}: found {r.found_state.value}, {r.decision}"
            + (f", silent: {', '.join(r.silent)}" if r.silent else "")
            + (f" -> {r.outcome.state.value}" if r.outcome else "")
        )
    if not recoveries and outcome is None:
        console.print("nothing to recover")
    if outcome is None:
        return
    d = outcome_dict(outcome)
    table = Table(title=f"heat run {outcome.run_id}: {outcome.state.value}")
    for col in ("machine", "start skew", "score", "played/won", "wagered/won", "state"):
        table.add_column(col)
    for m in d["machines"]:
        meters = m["meters"]
        table.add_row(
            m["id"],
            "-" if m["start_skew_ms"] is None else f"{m['start_skew_ms']:.2f} ms",
            "-" if m["score"] is None else str(m["score"]),
            "-" if meters is None else f"{meters['games_played']}/{meters['games_won']}",
            "-" if meters is None else f"{meters['credits_wagered']}/{meters['credits_won']}",
            m["state"] + (f" ({m['error']})" if m["error"] else ""),
        )
    console.print(table)
