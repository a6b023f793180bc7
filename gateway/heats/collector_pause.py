"""Keeping the cyclic garbage collector out of a heat's end.

From the end's lock to the last score stored, a 1,000-machine heat allocates enough
(futures, replies, rows) to run the collector a few hundred times: 0.36-0.39 s of passes,
one of them a full pass of about 140 ms, inside an end that took 0.7-0.8 s (measured).
Reference counting still frees nearly everything while the collector waits; only
reference cycles stay until it runs again.  So the heat pauses it over that window, and
the pause is bounded: it ends when the scores are stored, or after ``limit_s`` whatever
happens (a long wait for a game in progress must not let cycles pile up).

Several heats may end together in one process: the collector runs again when the last of
them lets go (and only if it ran before the first took it).
"""

from __future__ import annotations

import asyncio
import gc

_holders: dict[object, asyncio.TimerHandle] = {}
_was_enabled = False


def pause_collector(holder: object, limit_s: float) -> None:
    """Pause the collector for ``holder`` until :func:`resume_collector`, at most
    ``limit_s`` seconds.  A holder that already holds it keeps its first limit."""
    global _was_enabled
    if holder in _holders:
        return
    if not _holders:
        _was_enabled = gc.isenabled()
        gc.disable()
    loop = asyncio.get_running_loop()
    _holders[holder] = loop.call_later(limit_s, resume_collector, holder)


def resume_collector(holder: object) -> None:
    """``holder`` lets go; the collector runs again when no holder is left."""
    handle = _holders.pop(holder, None)
    if handle is None:
        return
    handle.cancel()
    if not _holders and _was_enabled:
        gc.enable()


def collector_held() -> bool:
    return bool(_holders)
