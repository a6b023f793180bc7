"""``reelgate cashup --date YYYY-MM-DD``: the day's cash-up per cashier, reconciled.

Tournament entries sold, refunded and complimentary; Super 9 buy-ins; prizes paid; the
jackpot carried; the liability carried forward.  Every figure is checked three ways
(stored rows, SQL totals, the audit log) and the jackpot ledger's chain; any difference
is printed loudly and the command exits 1.  ``--desk`` names the desk the report is for
(the desk itself is not recorded on the rows: see gateway/records/cashup.py).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.app.database import run
from gateway.app.options import add_database, add_json
from gateway.app.output import emit, rands


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "cashup", help="the day's cash-up per cashier, reconciled to the cent"
    )
    add_database(parser)
    add_json(parser)
    parser.add_argument("--date", required=True, metavar="YYYY-MM-DD", help="venue-local day")
    parser.add_argument("--cashier", metavar="ACCOUNT", help="only this cashier's figures")
    parser.add_argument("--desk", metavar="NAME", help="desk name (default $REELGATE_DESK, host)")
    parser.set_defaults(handler=_cashup)


def _cashup(args: argparse.Namespace) -> int:
    from gateway.records.canonical import to_record
    from gateway.records.cashup import cashup_body, parse_day
    from gateway.records.training import is_training
    from gateway.super9.venue import venue_zone

    day = parse_day(args.date)
    desk = args.desk or os.environ.get("REELGATE_DESK") or socket.gethostname()

    async def work(session: AsyncSession) -> dict[str, Any]:
        zone = await venue_zone(session)
        body = await cashup_body(session, day, zone=zone, cashier=args.cashier, desk=desk)
        from zoneinfo import ZoneInfo

        return {"training": await is_training(session), **to_record(body, ZoneInfo(body["zone"]))}

    report = run(args.database, work)
    if args.json:
        emit(args, report)
    else:
        _print(args, report)
    recon = report["reconciliation"]
    if not recon["ok"]:
        for line in recon["mismatches"]:
            print(f"reelgate: RECONCILIATION MISMATCH: {line}", file=sys.stderr)
        return 1
    return 0


def _print(args: argparse.Namespace, r: dict[str, Any]) -> None:
    if r["training"]:
        print("*** TRAINING DATABASE: not a record of real money ***")
    print(f"cash-up {r['day']} ({r['zone']}), desk {r['desk']['name']}: {r['desk']['note']}")
    rows = [_line(x["cashier"], x) for x in r["by_cashier"]] + [_line("TOTAL", r["totals"])]
    emit(
        args,
        r,
        [
            "cashier",
            "entries sold",
            "comp",
            "refunded",
            "S9 buy-ins",
            "S9 prizes",
            "T prizes",
            "HS prizes",
            "team prizes",
            "cash in",
            "cash out",
            "drawer",
            "card in",
            "card out",
            "net",
        ],
        rows,
        title="by cashier",
    )
    j, owe = r["jackpot"], r["liability_carried_forward"]
    print(
        f"jackpot: opening {rands(j['opening_cents'])}, moved {rands(j['moved_cents'])}, "
        f"carried {rands(j['carried_cents'])}"
    )
    print(
        f"liability carried forward: Super 9 prizes unpaid "
        f"{rands(owe['super9_prizes_unpaid_cents'])}, tournament prizes unpaid "
        f"{rands(owe['tournament_prizes_unpaid_cents'])}, hot-seat prizes unpaid "
        f"{rands(owe['hotseat_prizes_unpaid_cents'])}, team prizes unpaid "
        f"{rands(owe['team_prizes_unpaid_cents'])}, jackpot {rands(owe['jackpot_cents'])}"
        f", total {rands(owe['total_cents'])}"
    )
    recon = r["reconciliation"]
    if recon["ok"]:
        print(f"reconciled: {recon['ways']} agree to the cent")
    else:
        print(f"!!! NOT RECONCILED: {len(recon['mismatches'])} mismatch(es) !!!")
        for line in recon["mismatches"]:
            print(f"!!! {line}")


def _line(who: str, f: dict[str, Any]) -> list[Any]:
    sold, comp, ref = f["entries_sold"], f["entries_complimentary"], f["entries_refunded"]
    s9, s9p, tp = f["super9_buy_ins"], f["super9_prizes_paid"], f["tournament_prizes_paid"]
    hs, tm = f["hotseat_prizes_paid"], f["team_prizes_paid"]
    return [
        who,
        f"{sold['seats']} / {rands(sold['amount_cents'])}",
        comp["seats"],
        f"{ref['entries']} / {rands(ref['amount_cents'])}",
        f"{s9['tickets']} / {rands(s9['amount_cents'])}",
        f"{s9p['prizes']} / {rands(s9p['amount_cents'])}",
        f"{tp['prizes']} / {rands(tp['amount_cents'])}",
        f"{hs['prizes']} / {rands(hs['amount_cents'])}",
        f"{tm['prizes']} / {rands(tm['amount_cents'])}",
        rands(f["cash_in_cents"]),
        rands(f["cash_out_cents"]),
        rands(f["drawer_cents"]),
        rands(f["card_in_cents"]),
        rands(f["card_out_cents"]),
        rands(f["net_cents"]),
    ]
