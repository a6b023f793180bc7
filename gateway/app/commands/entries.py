"""``reelgate entries ...``: the cash desk — entry purchases (T5–T9) and refunds
(T20, or a director's decision under T23).

Clauses: docs/rules.md#t5 to #t9, #t20, #t23.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts.roles import Permission
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import PLAYER_HELP, OneLineParser, add_common, add_second, now_of, write_of
from gateway.app.output import emit, rands
from gateway.app.remote import remote_refund, remote_sell
from gateway.app.tenders import sale_tender
from gateway.clocks import deadlines
from gateway.tournament import services as svc
from gateway.tournament.services.cashdesk import tender_of
from gateway.tournament.services.common import find_tournament
from gateway.tournament.services.entry_list import list_entries
from storage.enums import Tender


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "entries", help="cash desk: sell tournament entries, refunds, list entries"
    )
    actions = parser.add_subparsers(
        dest="entries_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    p = actions.add_parser("sell", help="sell seats to a player (rules 5–9)")
    add_common(p, read=True)
    p.add_argument("player", help=PLAYER_HELP)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("--package", default="single", help="package code (default: single)")
    p.add_argument("--quantity", type=int, default=1)
    pay = p.add_mutually_exclusive_group()
    pay.add_argument(
        "--tender",
        choices=[t.value for t in Tender],
        help="how it is paid: cash (default), card (not packages) or comp (one entry paid "
        "by the casino)",
    )
    pay.add_argument("--card-payment", action="store_true", help="the same as --tender card")
    pay.add_argument("--complimentary", action="store_true", help="the same as --tender comp")
    p.add_argument(
        "--reference",
        help="till slip / receipt number: a second sale on the same slip (same cashier, "
        "same day) answers with the first",
    )
    p.set_defaults(handler=_sell, remote=remote_sell)

    p = actions.add_parser("refund", help="refund an unused entry (rule 20 / rule 23)")
    add_common(p, read=True)
    p.add_argument("entry", type=int)
    p.add_argument("--rule", type=int, choices=[20, 23], required=True)
    p.add_argument("--reason", required=True)
    p.add_argument(
        "--tender",
        choices=[t.value for t in Tender],
        help="how the money goes back (default: as the entry was paid)",
    )
    add_second(p, Permission.ENTRY_REFUND)
    p.set_defaults(handler=_refund, remote=remote_refund)

    p = actions.add_parser("list", help="entries of a tournament (optionally one player's)")
    add_common(p, read=True, write=False)
    p.add_argument("--tournament", "-t", required=True)
    p.add_argument("player", nargs="?", help=PLAYER_HELP)
    p.set_defaults(handler=_list)


def _sell(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[dict[str, Any], str]:
        t = await find_tournament(session, args.tournament)
        write = write_of(args, t.venue_tz)
        deadlines.entry_sale(t, write)  # the sale window at the real time
        sale = await svc.sell_entries(
            session,
            t.id,
            args.player,
            package_code=args.package,
            quantity=args.quantity,
            tender=sale_tender(args),
            cashier=host_actor(),
            now=write.at,
            reference=args.reference,
        )
        p = sale.purchase
        return {
            "purchase": p.id,
            "kind": p.kind,
            "tender": tender_of(p),
            "replayed": sale.replayed,
            "package": p.package_code,
            "seats": p.seats,
            "amount": rands(p.amount_cents),
            "amount_cents": p.amount_cents,
            "valid_until": p.valid_until,
            "entries": sale.entry_ids,
        }, t.venue_tz

    data, zone = run(args, work)
    return emit(args, data, zone=zone)


def _refund(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        refund = await svc.refund_entry(
            session,
            args.entry,
            rule=args.rule,
            reason=args.reason,
            actor=host_actor(),
            now=now_of(args),
            tender=Tender(args.tender) if args.tender else None,
        )
        return {
            "entry": refund.entry_id,
            "tender": refund.tender,
            "amount": rands(refund.amount_cents),
            "amount_cents": refund.amount_cents,
        }

    return emit(args, run(args, work))


def _list(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> tuple[list[dict[str, Any]], str]:
        zone, found = await list_entries(session, args.tournament, args.player or None)
        return [asdict(row) for row in found], zone

    data, zone = run(args, work)
    return emit(
        args,
        data,
        ["entry", "player", "status", "kind", "package", "bought", "valid until"],
        [
            [
                d["entry"],
                f"{d['player']} {d['player_name']}",
                d["status"],
                d["kind"],
                d["package"],
                d["purchased_at"],
                d["valid_until"],
            ]
            for d in data
        ],
        zone=zone,
    )
