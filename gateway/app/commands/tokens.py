"""``reelgate tokens ...``: API tokens for integrations and the CLI.

A token acts as the account that owns it, with that account's role or ``auditor``
(read-only), until it expires or is revoked.  The secret is printed once; the database
keeps only its sha256.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import service
from gateway.accounts.roles import Role
from gateway.app.database import run
from gateway.app.identity import host_actor
from gateway.app.options import OneLineParser, add_common, now_of, parse_time
from gateway.app.output import emit
from gateway.errors import OperatorError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "tokens", help="API tokens: create (scoped, expiring), list, revoke"
    )
    actions = parser.add_subparsers(
        dest="tokens_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )
    p = actions.add_parser("create", help="a new token; the secret is shown once")
    add_common(p, read=True)
    p.add_argument("--user", required=True, help="the account the token acts as")
    p.add_argument("--role", choices=[r.value for r in Role], help="default: the user's role")
    p.add_argument(
        "--expires", required=True, metavar="DAYS|TIME", help="days from now (e.g. 30) or a time"
    )
    p.add_argument("--label", default="", help="what the token is for")
    p.set_defaults(handler=_create)

    p = actions.add_parser("list", help="every token (never the secret)")
    add_common(p, read=True, write=False)
    p.set_defaults(handler=_list)

    p = actions.add_parser("revoke", help="revoke a token at once")
    add_common(p, read=True)
    p.add_argument("token", type=int)
    p.set_defaults(handler=_revoke)


def _expiry(args: argparse.Namespace, now: datetime) -> datetime:
    """``--expires`` as a time: days counted from the write's judged time, which exists
    only inside the write's transaction (after its preflight)."""
    text = args.expires.strip()
    if text.isdigit():
        days = int(text)
        if not 1 <= days <= service.TOKEN_MAX_TTL.days:
            raise OperatorError(f"--expires: 1 to {service.TOKEN_MAX_TTL.days} days")
        return now + timedelta(days=days)
    return parse_time(text, field="--expires")


def _create(args: argparse.Namespace) -> int:
    if not args.expires.strip().isdigit():
        parse_time(args.expires, field="--expires")  # a bad time: one line before any I/O

    async def work(session: AsyncSession) -> dict[str, Any]:
        now = now_of(args)
        token, secret = await service.create_token(
            session,
            args.user,
            role=args.role,
            expires_at=_expiry(args, now),
            label=args.label,
            actor=host_actor(),
            now=now,
        )
        return {"id": token.id, "role": token.role, "expires_at": token.expires_at, "token": secret}

    return emit(args, run(args, work))


def _list(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [
            {
                "id": t.id,
                "user": name,
                "role": t.role,
                "prefix": t.prefix,
                "label": t.label,
                "expires_at": t.expires_at,
                "revoked": t.revoked_at is not None,
            }
            for t, name in await service.list_tokens(session)
        ]

    data = run(args, work)
    head = ["id", "user", "role", "prefix", "label", "expires", "revoked"]
    keys = ["id", "user", "role", "prefix", "label", "expires_at", "revoked"]
    return emit(args, data, head, [[d[k] for k in keys] for d in data])


def _revoke(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        await service.revoke_token(session, args.token, actor=host_actor(), now=now_of(args))
        return {"revoked": args.token}

    return emit(args, run(args, work))
