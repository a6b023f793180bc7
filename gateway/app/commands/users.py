"""``reelgate users ...``: the accounts people sign in with (roles: docs/roles.md).

A password is never an argument (it would sit in the shell history and the process
list): it is asked for twice on a terminal, or read as one line from standard input with
``--password-stdin``.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.accounts import service
from gateway.accounts.roles import Role, role_table
from gateway.app import keyed
from gateway.app.database import create_if_missing, run
from gateway.app.identity import host_actor
from gateway.app.options import OneLineParser, add_common, now_of
from gateway.app.output import emit
from gateway.errors import OperatorError


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "users", help="accounts: add, list, disable, enable, reset a password; the roles"
    )
    actions = parser.add_subparsers(
        dest="users_action", required=True, metavar="ACTION", parser_class=OneLineParser
    )
    p = actions.add_parser("add", help="add an account with one role")
    add_common(p, read=True)
    p.add_argument("name")
    p.add_argument("--role", required=True, choices=[r.value for r in Role])
    _password_option(p)
    p.add_argument(
        "--training",
        action="store_true",
        help="with a database that does not exist yet: create it as a training one "
        "(as `db init --training`)",
    )
    p.set_defaults(handler=_add)

    p = actions.add_parser("list", help="every account, its role and state")
    add_common(p, read=True, write=False)
    p.set_defaults(handler=_list)

    p = actions.add_parser("disable", help="disable an account (its sessions end)")
    add_common(p, read=True)
    p.add_argument("name")
    p.set_defaults(handler=_disable)

    p = actions.add_parser("enable", help="re-enable a disabled account")
    add_common(p, read=True)
    p.add_argument("name")
    p.set_defaults(handler=_enable)

    p = actions.add_parser("reset-password", help="set a new password; clears a lockout")
    add_common(p, read=True)
    p.add_argument("name")
    _password_option(p)
    p.set_defaults(handler=_reset)

    p = actions.add_parser(
        "unlock", help="clear an account's failed logins and login backoff at once"
    )
    add_common(p, read=True)
    p.add_argument("name")
    p.set_defaults(handler=_unlock)

    p = actions.add_parser("roles", help="the permission table")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_roles)


def _password_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the password as one line from standard input (no prompt)",
    )


def read_password(args: argparse.Namespace) -> str:
    """The new password, refused in one line naming the rule it breaks (docs/roles.md)."""
    try:
        account: str | None = service.name_of(args.name)
    except OperatorError:
        account = None
    if args.password_stdin or not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line:
            raise OperatorError("password: nothing on standard input")
        return service.check_password(line.rstrip("\r\n"), account=account)
    first = getpass.getpass("password: ")
    service.check_password(first, account=account)
    if getpass.getpass("again: ") != first:
        raise OperatorError("password: the two entries differ")
    return first


def _row(u: Any) -> dict[str, Any]:
    return {
        "id": u.id,
        "name": u.name,
        "role": u.role,
        "disabled": u.disabled,
        "failed_logins": u.failed_logins,
        "locked_until": u.locked_until,
        "last_login_at": u.last_login_at,
    }


def _add(args: argparse.Namespace) -> int:
    """The first account may be added to a database that does not exist yet: it is
    created at the newest revision first, saying so in one line on standard error
    (:func:`gateway.app.database.create_if_missing`; one at another revision is still
    refused, for ``db upgrade``)."""
    password = read_password(args)
    created = asyncio.run(create_if_missing(args.database, training=args.training, by=host_actor()))
    if created is not None:
        print(created, file=sys.stderr)
        if args.training:
            keyed.banner(True)

    async def work(session: AsyncSession) -> dict[str, Any]:
        user = await service.add_user(
            session, args.name, args.role, password, actor=host_actor(), now=now_of(args)
        )
        return _row(user)

    return emit(args, run(args, work))


def _list(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [_row(u) for u in await service.list_users(session)]

    data = run(args, work)
    head = ["id", "name", "role", "state", "failed logins", "last sign-in"]
    rows = [
        [
            d["id"],
            d["name"],
            d["role"],
            "disabled" if d["disabled"] else "active",
            d["failed_logins"],
            "never" if d["last_login_at"] is None else d["last_login_at"].isoformat(),
        ]
        for d in data
    ]
    return emit(args, data, head, rows)


def _disable(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        return _row(
            await service.disable_user(
                session, args.name, actor=host_actor(), now=keyed.REAL_CLOCK()
            )
        )

    return emit(args, run(args, work))


def _enable(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        now = keyed.REAL_CLOCK()
        return _row(await service.enable_user(session, args.name, actor=host_actor(), now=now))

    return emit(args, run(args, work))


def _reset(args: argparse.Namespace) -> int:
    password = read_password(args)

    async def work(session: AsyncSession) -> dict[str, Any]:
        user = await service.reset_password(session, args.name, password, actor=host_actor())
        return _row(user)

    return emit(args, run(args, work))


def _unlock(args: argparse.Namespace) -> int:
    async def work(session: AsyncSession) -> dict[str, Any]:
        return _row(await service.unlock_user(session, args.name, actor=host_actor()))

    return emit(args, run(args, work))


def _roles(args: argparse.Namespace) -> int:
    table = role_table()
    data = [{"permission": p, "roles": roles} for p, roles in table]
    return emit(args, data, ["permission", "roles"], [[p, ", ".join(r)] for p, r in table])
