"""The heat state machine as data: which step may follow which.

    scheduled -> armed -> running -> ending -> collecting -> closed
                            |  ^
                            v  |
                           paused

A director may abort any live state, and a heat may be restarted (T20: "the entire
heat will be restarted" after a tournament-system failure) from any state before its
scores are stored.  Anything not in the table is refused, so a bug or a replayed command
can never, say, collect scores from a heat that never ran.
"""

from __future__ import annotations

from storage.journal import TERMINAL_STATES, RunState

S = RunState

TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    S.SCHEDULED: frozenset({S.ARMED, S.ABORTED, S.RESTARTED}),
    S.ARMED: frozenset({S.RUNNING, S.ABORTED, S.RESTARTED}),
    S.RUNNING: frozenset({S.PAUSED, S.ENDING, S.ABORTED, S.RESTARTED}),
    S.PAUSED: frozenset({S.RUNNING, S.ENDING, S.ABORTED, S.RESTARTED}),
    S.ENDING: frozenset({S.COLLECTING, S.ABORTED, S.RESTARTED}),
    # Once collection has begun scores may already be stored: no restart, only closing.
    S.COLLECTING: frozenset({S.CLOSED}),
    S.CLOSED: frozenset(),
    S.ABORTED: frozenset(),
    S.RESTARTED: frozenset(),
}


class IllegalTransition(Exception):
    def __init__(self, current: RunState, wanted: RunState) -> None:
        super().__init__(f"heat cannot go from {current.value} to {wanted.value}")
        self.current = current
        self.wanted = wanted


def check(current: RunState, wanted: RunState) -> None:
    if wanted not in TRANSITIONS[current]:
        raise IllegalTransition(current, wanted)


def is_terminal(state: RunState) -> bool:
    return state in TERMINAL_STATES
