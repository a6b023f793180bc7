"""A second person, or a director, proven at the command line by their password.

Dual control (:mod:`gateway.accounts.dual`) and back-dated writes need an account, not a
typed name: the command names the account (``--second NAME``, ``--confirmed-by NAME``,
``--director NAME``) and the person types its password — at a prompt (``getpass``) on
a terminal, else one line per account from standard input, in the order the command
asks.  The password is checked as a sign-in is (:mod:`gateway.accounts.signin`): under
the login backoff, a wrong one counted, audited and committed though the command is
refused.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Collection
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.accounts import signin
from gateway.accounts.roles import Role
from gateway.accounts.service import Principal, name_of
from gateway.accounts.signin import LoginFailed
from gateway.app.identity import host_actor
from gateway.errors import OperatorError

_GATE = signin.Gate()  # the backoffs of this command's process (the row's count is shared)


def read_password(name: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(f"password of {name}: ")
    line = sys.stdin.readline()
    if not line:
        raise OperatorError(f"password of {name}: nothing on standard input")
    return line.rstrip("\r\n")


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
    try:
        found = await signin.check(sessions, normal, password, now, source=host_actor(), gate=_GATE)
    except LoginFailed as exc:
        raise OperatorError(f"{option} {normal}: {str(exc).removeprefix('login: ')}") from None
    if found.role not in roles:
        needed = ", ".join(sorted(r.value for r in roles))
        raise OperatorError(f"{option} {normal}: must be {needed}, not {found.role.value}")
    return found
