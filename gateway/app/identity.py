"""Who the command line is, for the audit log.

A write made straight to the database runs as the host's administrator and is recorded
under the operating-system account and the host name, ``os:ACCOUNT@HOST`` — taken from
the process (its effective user id and ``socket.gethostname()``), never from the command
line or the environment, so nobody can type someone else's name.  A write through the
API (``--server``) is recorded under the token's account by the API itself.

A dual-control write is the exception: its first person signs in as a Reelgate account
(``--as``, password checked by :func:`gateway.app.keyed.preflight`), and the write is
recorded under that account (:func:`sign_in`), the host login beside it in the audit
row's annotation.  Otherwise one person holding the host login and an account of the same
name could be both people.
"""

from __future__ import annotations

import getpass
import os
import socket
from contextvars import ContextVar

ACTOR_MAX = 100

# The account the command's first person proved (--as); set for one command's run only
# (each command runs in its own asyncio.run, whose task holds a copy of the context).
_SIGNED_IN: ContextVar[str | None] = ContextVar("reelgate_signed_in", default=None)


def sign_in(account: str) -> None:
    """Record this command's writes under ``account``, whose password was checked."""
    _SIGNED_IN.set(account)


def os_account() -> str:
    try:
        import pwd  # POSIX only
    except ImportError:  # pragma: no cover - Windows: the logon name
        return getpass.getuser()
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:  # pragma: no cover - a uid with no passwd entry (containers)
        return f"uid{os.geteuid()}"


def host_login() -> str:
    """``os:ACCOUNT@HOST``: the process's operating-system account on this host."""
    return f"os:{os_account()}@{socket.gethostname()}"[:ACTOR_MAX]


def host_actor() -> str:
    """The actor of every direct write of this command: the account signed in with
    ``--as`` (a dual-control write), else :func:`host_login`."""
    return _SIGNED_IN.get() or host_login()
