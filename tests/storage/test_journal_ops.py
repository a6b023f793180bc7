"""Journal ops (storage.journal_ops): every op survives its spool line unchanged.

T12b: a score spooled during an outage is the score stored when the database is back --
the op decoded from the line equals the op written, for every kind of op.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage.effects import EffectIn, EffectKind
from storage.journal import MachineState, ResultIn, RunState
from storage.journal_ops import (
    ResultsOp,
    SeatsOp,
    SettleOp,
    SpooledOp,
    StepOp,
    op_from_json,
)

ids = st.integers(min_value=1, max_value=2**31 - 1)
machines = st.text("ABCDEFGHJK0123456789", min_size=1, max_size=8)
texts = st.text(max_size=40)
counts = st.integers(min_value=0, max_value=2**31 - 1)
# Aware instants as the journal keeps them (UTC), to the microsecond, with other offsets too
# (a line keeps the offset it was written with; the instant is what must survive).
instants = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=2))]),
)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts
details = st.dictionaries(st.text(max_size=10), json_scalars, max_size=3)
effects = st.lists(
    st.builds(EffectIn, st.sampled_from(EffectKind), instants, st.none() | machines, details),
    max_size=3,
)
seat_states = st.dictionaries(machines, st.sampled_from(MachineState), max_size=5)

steps = st.builds(
    StepOp,
    ids,
    st.sampled_from(RunState),
    note=texts,
    started_at=st.none() | instants,
    ends_at=st.none() | instants,
    paused_left_ms=st.none() | counts,
    clear_pause=st.booleans(),
    seats=seat_states,
    effects=effects,
)
seats = st.builds(
    SeatsOp,
    ids,
    seat_states,
    supports=st.dictionaries(machines, st.sampled_from(["native", "host-timed"]), max_size=5),
    note=texts,
    effects=effects,
    unlocked_at=st.dictionaries(machines, instants, max_size=5),
    baselines=st.dictionaries(
        machines, st.dictionaries(st.sampled_from(["games", "wagered", "won"]), counts), max_size=3
    ),
)
results = st.builds(
    ResultsOp,
    ids,
    st.lists(
        st.builds(ResultIn, machines, counts, counts, counts, counts, counts, instants),
        max_size=5,
        unique_by=lambda r: r.machine_id,
    ),
)
settles = st.builds(SettleOp, ids)
every_op = steps | seats | results | settles


@given(every_op)
def test_every_op_is_the_same_op_after_its_spool_line(op: SpooledOp) -> None:
    line = json.dumps(op.to_json(), separators=(",", ":"))
    assert "\n" not in line  # one line per op, whatever its notes hold
    back = op_from_json(json.loads(line))
    assert back == op
    assert type(back) is type(op)
    assert back.to_json() == op.to_json()


def test_the_strategies_cover_every_kind_of_op() -> None:
    kinds = {cls.KIND for cls in (StepOp, SeatsOp, ResultsOp, SettleOp)}
    assert kinds == {"step", "seats", "results", "settle"}
    for kind in kinds:  # each is known to the decoder
        with pytest.raises(ValueError, match=f"journal operation '{kind}' is malformed"):
            op_from_json({"op": kind})


def test_an_op_is_frozen_and_keeps_no_reference_to_its_callers_collections() -> None:
    at = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    states = {"A01": MachineState.ARMED}
    effects_in = [EffectIn(EffectKind.STARTED, at)]
    op = StepOp(7, RunState.RUNNING, ends_at=at + timedelta(seconds=60), seats=states,
                effects=effects_in)  # fmt: skip
    states["A02"] = MachineState.ARMED
    effects_in.clear()
    assert dict(op.seats) == {"A01": MachineState.ARMED}
    assert op.effects == (EffectIn(EffectKind.STARTED, at),)
    with pytest.raises(AttributeError):
        op.note = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        op.seats["A03"] = MachineState.ARMED  # type: ignore[index]


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"op": "rewind", "run_id": 1}, "unknown journal operation 'rewind'"),
        ({"run_id": 1}, "unknown journal operation None"),
        ({"op": "step", "run_id": 1, "state": "dancing"}, "'step' is malformed"),
        ({"op": "results", "run_id": 1, "results": [{"machine_id": "A01"}]}, "malformed"),
        ({"op": "seats", "run_id": 1, "seats": {"A01": "armed"}, "supports": {}, "note": "",
          "unlocked_at": {"A01": "yesterday"}}, "'seats' is malformed"),
    ],
)  # fmt: skip
def test_a_line_holding_no_op_is_refused(record: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        op_from_json(record)
