"""Room for a bank's sockets: every machine link holds an open file (a TCP socket or a
serial device), and a thousand-machine floor passes the usual soft limit of 1,024 files
(systemd's default for a service, most shells' too) before counting the database, the
spool, the broker and the HTTP clients.  The soft limit may be raised up to the hard
one by the process itself (systemd's hard default is 524,288), so the gateway does that
before it opens links, instead of failing one machine at a time with EMFILE.
"""

from __future__ import annotations

import logging
import os
import resource
from collections.abc import Callable

log = logging.getLogger(__name__)

SPARE = 128  # database pool, spool, logs, broker, HTTP clients and their reconnects

GetLimit = Callable[[int], tuple[int, int]]
SetLimit = Callable[[int, tuple[int, int]], None]


def open_files() -> int:
    """Files this process holds now (Linux: /proc/self/fd; elsewhere 0, unknown)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def make_room_for(
    links: int,
    *,
    get: GetLimit = resource.getrlimit,
    set_: SetLimit = resource.setrlimit,
    in_use: Callable[[], int] = open_files,
) -> int:
    """Lift the soft open-file limit so ``links`` more files fit beside those open now
    (other banks' links among them) and :data:`SPARE`; returns the soft limit in force.
    Never lowers it; if the hard limit is too low, lifts to it and warns, naming both
    numbers (the links past it will fail to open)."""
    wanted = in_use() + links + SPARE
    soft, hard = get(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            set_(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError) as exc:
            log.warning("open-file limit stays %d (%s); %d links need %d", soft, exc, links, wanted)
            return soft
        soft = target
    if soft < wanted:
        log.warning(
            "open-file limit %d (hard limit %d) is below the %d that %d machine links need: "
            "raise LimitNOFILE (systemd) or ulimit -Hn",
            soft, hard, wanted, links,
        )  # fmt: skip
    return soft


__all__ = ["SPARE", "make_room_for"]
