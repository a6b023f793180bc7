"""Desk reads over ``--server URL``: ``tournament list``, ``tournament standings``,
``heat list`` and ``players list`` asked of the API (``GET /api/v1/...``) with the desk's
token, printed as the gateway host prints them.

A desk PC has no database: it loads neither SQLAlchemy nor the models nor the services,
only the HTTP client, so a read costs what the answer costs (``bench/cli_startup.py``).
The API decides what the token's role may read (a 403 is one line).  What the API's
answers do not carry is refused in one line rather than guessed: ``--as-of`` and
``--venue`` of the standings are the host's; over ``--server`` the standings are the
table and its cuts (ties to draw, prizes and amendments are on the console's Standings
and Prizes screens and on the host).
"""

from __future__ import annotations

import argparse
from datetime import date, datetime
from urllib.parse import quote

from gateway.app.output import MANUAL_MARK, emit
from gateway.app.remote import call
from gateway.errors import OperatorError

STANDINGS_ALL = 10_000  # the API's largest page: "every entry" (--limit 0) on a desk


def _ref(text: str) -> str:
    return quote(str(text), safe="")


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def tournaments(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/tournaments")
    return emit(
        args,
        data,
        ["id", "name", "validity", "zone"],
        [[d["id"], d["name"], d["validity"], d["zone"]] for d in data],
    )


def standings(args: argparse.Namespace) -> int:
    for option, given in (("--as-of", args.as_of), ("--venue", args.venue)):
        if given:
            raise OperatorError(f"{option}: read on the gateway host, not over --server")
    if args.limit < 0:
        raise OperatorError("--limit: a number of lines, 0 for all")
    limit = min(args.limit, STANDINGS_ALL) if args.limit else STANDINGS_ALL
    data = call(
        args,
        "GET",
        f"/tournaments/{_ref(args.tournament)}/standings",
        params={"stage": args.stage, "limit": limit},
    )
    cuts = ", ".join(map(str, data["cuts"]))
    rows = [
        [
            x["place"], "=" if x["tied"] else "", x["credits"],
            MANUAL_MARK if x.get("manual") else "", x["entry_id"], x["player_name"],
            x["heat_number"],
        ]
        for x in data["lines"]
    ]  # fmt: skip
    return emit(
        args,
        data,
        ["place", "tie", "credits", "score", "entry", "player", "heat"],
        rows,
        title=f"{args.stage} standings (cuts after places {cuts})",
    )


def heats(args: argparse.Namespace) -> int:
    params: dict[str, str | int] = {"stage": args.stage} if args.stage else {}
    data = call(args, "GET", f"/tournaments/{_ref(args.tournament)}/heats", params=params)
    return emit(
        args,
        data,
        ["heat", "stage", "no.", "starts", "bank", "seats", "booked", "status"],
        [
            [
                h["heat_id"], h["stage"], h["number"], _when(h["starts_at"]), h["bank_name"],
                h["seats"], h["booked"], h["status"],
            ]
            for h in data
        ],
    )  # fmt: skip


def players(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/players", params={"limit": 5000})
    return emit(
        args,
        data,
        ["id", "id number", "name", "born", "card"],
        [
            [d["id"], d["id_number"], d["name"], date.fromisoformat(d["date_of_birth"]), d["card"]]
            for d in data
        ],
    )
