"""The heat state table: every (state, wanted) pair is either in the table or refused."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.heats import states
from storage.journal import TERMINAL_STATES, RunState


@given(st.sampled_from(RunState), st.sampled_from(RunState))
def test_every_pair_is_allowed_or_refused(current: RunState, wanted: RunState) -> None:
    if wanted in states.TRANSITIONS[current]:
        states.check(current, wanted)
    else:
        with pytest.raises(states.IllegalTransition, match=wanted.value):
            states.check(current, wanted)


def test_the_main_line_and_its_exits() -> None:
    line = [RunState.SCHEDULED, RunState.ARMED, RunState.RUNNING, RunState.ENDING,
            RunState.COLLECTING, RunState.CLOSED]  # fmt: skip
    for a, b in itertools.pairwise(line):
        states.check(a, b)
    for terminal in TERMINAL_STATES:
        assert states.TRANSITIONS[terminal] == frozenset()
    # Once scores may be stored, a heat is never restarted from under them (T20 restarts
    # void an attempt; a half-collected one would lose or double scores).
    assert RunState.RESTARTED not in states.TRANSITIONS[RunState.COLLECTING]
    assert RunState.ABORTED not in states.TRANSITIONS[RunState.COLLECTING]
    # a pause only from play, and back
    assert states.TRANSITIONS[RunState.PAUSED] >= {RunState.RUNNING}
    assert RunState.PAUSED not in states.TRANSITIONS[RunState.ARMED]
