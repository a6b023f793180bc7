"""A second person, or a director, proven at the command line by their password.

Dual control (:mod:`gateway.accounts.dual`) and back-dated writes need an account, not a
typed name: the command names the account (``--second NAME``, ``--confirmed-by NAME``,
``--director NAME``) and the person types its password — at a prompt (``getpass``) on
a terminal, else one line per account from standard input, in the order the command
asks.  The password is checked against ``users`` under the login backoff; a wrong one
counts as a failed login and is committed even though the command is refused.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Collection
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.accounts import lockout
from gateway.accounts.roles import Role
from gateway.accounts.service import Principal, name_of
from gateway.errors import OperatorError
from storage.accounts import password_matches, user_by_name


def read_password(name: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"password of {name}: ")
    line = sys.stdin.readline()
    if not line:
        raise OperatorError(f"password of {name}: nothing on standard input")
    return line.rstrip("\r\n")


async def _check(
    session: AsyncSession, name: str, password: str, now: datetime
) -> Principal | str:
    """The account, or why not (a failure is counted on the row, for the caller to commit)."""
    user = await user_by_name(session, name)
    if user is None or user.disabled:
        return "unknown account or wrong password"
    why_not = lockout.refusal(user.failed_logins, user.locked_until, now)
    if why_not is not None:
        return why_not
    if not password_matches(user.password_hash, password):
        user.failed_logins += 1
        user.locked_until = lockout.locked_until_after(user.failed_logins, now)
        return "unknown account or wrong password"
    user.failed_logins, user.locked_until = 0, None
    return Principal(user.id, user.name, Role(user.role))


async def authenticate(
    sessions: async_sessionmaker[AsyncSession],
    option: str,
    name: str,
    *,
    roles: Collection[Role],
    now: datetime,
) -> Principal:
    """The account ``name`` after its password, in a transaction of its own; refused in
    one line naming ``option`` unless its role is one of ``roles``."""
    normal = name_of(name)
    password = read_password(normal)
    async with sessions() as session, session.begin():
        found = await _check(session, normal, password, now)
    if isinstance(found, str):
        raise OperatorError(f"{option} {normal}: {found}")
    if found.role not in roles:
        needed = ", ".join(sorted(r.value for r in roles))
        raise OperatorError(f"{option} {normal}: must be {needed}, not {found.role.value}")
    return found
