"""``reelgate audit verify|show``: check and read the tamper-evident audit log."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from sqlalchemy import select

from gateway.app.database import guarded, open_engine, safe_url
from gateway.app.options import OneLineParser, add_database, add_json
from gateway.errors import OperatorError
from storage import audit
from storage.db import make_sessionmaker


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "audit", help="verify or read the audit log of every change people made"
    )
    actions = parser.add_subparsers(
        dest="audit_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )

    verify = actions.add_parser("verify", help="recompute the hash chain; exit 1 if broken")
    _common(verify)
    verify.set_defaults(handler=_verify)

    show = actions.add_parser("show", help="list the latest audit rows, newest last")
    _common(show)
    show.add_argument("--subject", help="only rows about this subject (exact)")
    show.add_argument("--limit", type=int, default=50, help="at most this many rows (50)")
    show.set_defaults(handler=_show)


def _common(parser: argparse.ArgumentParser) -> None:
    add_database(parser)
    add_json(parser)


def _verify(args: argparse.Namespace) -> int:
    url, result = asyncio.run(_run_verify(args.database))
    if args.json:
        print(json.dumps({"database": safe_url(url), **result.as_dict()}))
    elif result.ok:
        print(f"audit log intact: {result.rows_checked} rows, last hash {result.last_hash}")
    else:
        print(f"audit log BROKEN at row {result.first_bad_id}: {result.problem}")
        print(f"rows 1..{result.last_id} check out")
    return 0 if result.ok else 1


async def _run_verify(given: str | None) -> tuple[str, audit.VerifyResult]:
    url, engine = await open_engine(given)
    try:
        async with make_sessionmaker(engine)() as session:
            return url, await guarded(url, audit.verify(session))
    finally:
        await engine.dispose()


def _show(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > 10_000:
        raise OperatorError("--limit must be between 1 and 10000")
    rows = asyncio.run(_run_show(args.database, args.subject, args.limit))
    if args.json:
        print(json.dumps(rows))
        return 0
    for row in rows:
        reason = f" — {row['reason']}" if row["reason"] else ""
        print(f"{row['id']:>6} {row['at']} {row['actor']} {row['action']} {row['subject']}{reason}")
        if row["details"]:
            print(f"       {json.dumps(row['details'], ensure_ascii=False)}")
    return 0


async def _run_show(given: str | None, subject: str | None, limit: int) -> list[dict[str, Any]]:
    url, engine = await open_engine(given)
    try:
        async with make_sessionmaker(engine)() as session:
            query = select(audit.AuditEntry).order_by(audit.AuditEntry.id.desc()).limit(limit)
            if subject is not None:
                query = query.where(audit.AuditEntry.subject == subject)
            entries = (await guarded(url, session.execute(query))).scalars().all()
    finally:
        await engine.dispose()
    return [
        {
            "id": e.id,
            "at": e.at.isoformat(),
            "actor": e.actor,
            "action": e.action,
            "subject": e.subject,
            "reason": e.reason,
            "details": e.details_dict(),
            "hash": e.hash,
        }
        for e in reversed(entries)
    ]
