"""``reelgate audit verify|show``: check and read the tamper-evident audit log."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from alembic.util.exc import CommandError
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from gateway.errors import OperatorError
from storage import audit, migrate
from storage.db import database_url, make_engine, make_sessionmaker


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "audit", help="verify or read the audit log of every change people made"
    )
    actions = parser.add_subparsers(dest="audit_action", required=True, metavar="ACTION")

    verify = actions.add_parser("verify", help="recompute the hash chain; exit 1 if broken")
    _common(verify)
    verify.set_defaults(handler=_verify)

    show = actions.add_parser("show", help="list the latest audit rows, newest last")
    _common(show)
    show.add_argument("--subject", help="only rows about this subject (exact)")
    show.add_argument("--limit", type=int, default=50, help="at most this many rows (50)")
    show.set_defaults(handler=_show)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", help="database URL (default: REELGATE_DATABASE_URL)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def _resolve(url: str | None) -> str:
    resolved = database_url(url)
    try:
        make_url(resolved)
    except ArgumentError as exc:
        raise OperatorError(f"--database: not a database URL: {resolved!r}") from exc
    return resolved


def _safe(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _open(url: str) -> None:
    """Bring the database to the current schema; one-line errors for a bad database."""
    try:
        migrate.upgrade(url)
    except CommandError as exc:  # e.g. a newer schema than this Reelgate knows
        raise OperatorError(f"--database {_safe(url)}: {exc}") from exc
    except (OSError, DBAPIError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OperatorError(f"--database {_safe(url)}: cannot open: {first}") from exc


def _verify(args: argparse.Namespace) -> int:
    url = _resolve(args.database)
    _open(url)
    result = asyncio.run(_run_verify(url))
    if args.json:
        print(json.dumps({"database": _safe(url), **result.as_dict()}))
    elif result.ok:
        print(f"audit log intact: {result.rows_checked} rows, last hash {result.last_hash}")
    else:
        print(f"audit log BROKEN at row {result.first_bad_id}: {result.problem}")
        print(f"rows 1..{result.last_id} check out")
    return 0 if result.ok else 1


async def _run_verify(url: str) -> audit.VerifyResult:
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            return await audit.verify(session)
    finally:
        await engine.dispose()


def _show(args: argparse.Namespace) -> int:
    if args.limit < 1 or args.limit > 10_000:
        raise OperatorError("--limit must be between 1 and 10000")
    url = _resolve(args.database)
    _open(url)
    rows = asyncio.run(_run_show(url, args.subject, args.limit))
    if args.json:
        print(json.dumps(rows))
        return 0
    for row in rows:
        reason = f" — {row['reason']}" if row["reason"] else ""
        print(f"{row['id']:>6} {row['at']} {row['actor']} {row['action']} {row['subject']}{reason}")
        if row["details"]:
            print(f"       {json.dumps(row['details'], ensure_ascii=False)}")
    return 0


async def _run_show(url: str, subject: str | None, limit: int) -> list[dict[str, Any]]:
    engine = make_engine(url)
    try:
        async with make_sessionmaker(engine)() as session:
            query = select(audit.AuditEntry).order_by(audit.AuditEntry.id.desc()).limit(limit)
            if subject is not None:
                query = query.where(audit.AuditEntry.subject == subject)
            entries = (await session.execute(query)).scalars().all()
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
