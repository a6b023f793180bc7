"""Who the command line is, for the audit log.

A write made straight to the database runs as the host's administrator and is recorded
under the operating-system account and the host name, ``os:ACCOUNT@HOST`` — taken from
the process (its effective user id and ``socket.gethostname()``), never from the command
line or the environment, so nobody can type someone else's name.  A write through the
API (``--server``) is recorded under the token's account by the API itself.
"""

from __future__ import annotations

import getpass
import os
import socket

ACTOR_MAX = 100


def os_account() -> str:
    try:
        import pwd  # POSIX only
    except ImportError:  # pragma: no cover - Windows: the logon name
        return getpass.getuser()
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:  # pragma: no cover - a uid with no passwd entry (containers)
        return f"uid{os.geteuid()}"


def host_actor() -> str:
    """``os:ACCOUNT@HOST``, the actor of every direct write of this process."""
    return f"os:{os_account()}@{socket.gethostname()}"[:ACTOR_MAX]
