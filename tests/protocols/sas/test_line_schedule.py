"""The pure turn scheduler of a SAS line (protocols.sas.line_schedule), times passed in."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.sas.line_schedule import SAS_CHAR_TIME, LineSchedule, Urgency

SPACING = 0.200


def line(addresses: range = range(1, 9), char_time: float = SAS_CHAR_TIME) -> LineSchedule:
    s = LineSchedule(char_time=char_time)
    for a in addresses:
        s.add_address(a, SPACING)
    return s


def exchange(s: LineSchedule, now: float, frame: int = 4, reply: int = 1) -> int:
    """Grant, send and finish one exchange at ``now``; returns the address served."""
    t = s.grant(now)
    assert t is not None
    s.sent(t.address, frame, now)
    s.done(reply, now)
    return t.address


def test_one_message_at_a_time() -> None:
    s = line()
    s.submit(1, Urgency.NORMAL)
    s.submit(2, Urgency.NORMAL)
    t = s.grant(0.0)
    assert t is not None
    s.sent(t.address, 4, 0.0)
    assert s.grant(1.0) is None  # busy until the exchange ends, however long
    with pytest.raises(RuntimeError):
        s.sent(2, 4, 1.0)
    s.done(1, 1.0)
    assert s.grant(1.0) is not None


def test_urgent_before_normal_before_background() -> None:
    s = line()
    s.submit(1, Urgency.BACKGROUND)
    s.submit(2, Urgency.NORMAL)
    s.submit(3, Urgency.URGENT)
    s.submit(4, Urgency.URGENT)
    served = []
    now = 0.0
    while s.waiting:
        served.append(exchange(s, now))
        now += 0.01
    assert served == [3, 4, 2, 1]  # urgent in firing order, then the rest


def test_an_address_waiting_to_start_gets_no_other_turn() -> None:
    # a general poll to a machine about to start would push its start out by 200 ms
    s = line()
    s.submit(5, Urgency.URGENT)
    s.sent(5, 2, 0.0)  # ...except that it was polled just now: inside its spacing
    s.done(1, 0.0)
    s.submit(5, Urgency.BACKGROUND)
    s.submit(6, Urgency.BACKGROUND)
    t = s.grant(0.01)
    assert t is not None
    assert t.address == 6
    assert t.urgency is Urgency.BACKGROUND


def test_spacing_per_address_sas_one_poll_every_200_ms() -> None:
    # sas.md §1: at most one poll to an EGM every 200 ms; other EGMs may go meanwhile
    s = line()
    s.submit(1, Urgency.NORMAL)
    assert exchange(s, 0.0) == 1
    s.submit(1, Urgency.NORMAL)
    s.submit(2, Urgency.NORMAL)
    assert exchange(s, 0.01) == 2  # 1 is inside its spacing: 2 goes first
    assert s.grant(0.1) is None
    assert s.next_time(0.1) == pytest.approx(SPACING)
    assert exchange(s, SPACING) == 1


def test_line_time_is_accounted_in_characters() -> None:
    # LP 02 (4 characters) and its ACK (1): 5 x 11 bits at 19 200 baud ~ 2.86 ms
    s = line()
    s.submit(1, Urgency.URGENT)
    s.submit(2, Urgency.URGENT)
    exchange(s, 0.0, frame=4, reply=1)  # the carrier answered at once (a TCP board)
    assert s.grant(0.001) is None
    assert s.next_time(0.001) == pytest.approx(5 * SAS_CHAR_TIME)
    assert s.grant(5 * SAS_CHAR_TIME) is not None
    assert s.stats.busy_seconds == pytest.approx(5 * SAS_CHAR_TIME)


def test_withdrawn_requests_are_never_granted() -> None:
    s = line()
    t = s.submit(1, Urgency.URGENT)
    s.submit(2, Urgency.BACKGROUND)
    s.withdraw(t)
    g = s.grant(0.0)
    assert g is not None
    assert g.address == 2  # 1 no longer holds 2 off the line either


def test_unknown_addresses_are_refused() -> None:
    s = line(range(1, 3))
    with pytest.raises(ValueError, match="not on this line"):
        s.submit(9, Urgency.NORMAL)
    with pytest.raises(ValueError, match=r"1\.\.127"):
        s.add_address(128, SPACING)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 16), st.sampled_from(list(Urgency)), st.floats(0, 0.05)),
        min_size=1,
        max_size=80,
    )
)
def test_no_poll_spacing_is_ever_broken_and_the_line_never_doubles(
    requests: list[tuple[int, Urgency, float]],
) -> None:
    s = line(range(1, 17))
    now = 0.0
    last: dict[int, float] = {}
    pending = list(requests)
    for _ in range(2000):  # bounded: every request is served well within this
        while pending and pending[0][2] <= 0.01:
            address, urgency, _ = pending.pop(0)
            s.submit(address, urgency)
        if pending:
            a, u, d = pending[0]
            pending[0] = (a, u, d - 0.01)
        t = s.grant(now)
        if t is not None:
            if t.address in last:
                assert now - last[t.address] >= SPACING - 1e-12
            last[t.address] = now
            s.sent(t.address, 4, now)
            s.done(1, now + 0.002)
        if not pending and not s.waiting:
            break
        nxt = s.next_time(now)
        now = max(now + 0.001, nxt if nxt is not None else now + 0.01)
    assert not s.waiting


def test_general_polls_go_round_robin() -> None:
    # every machine of a 127-address loop gets a general poll before any gets a second
    s = line(range(1, 128), char_time=0.0)
    now = 0.0
    order: list[int] = []
    for _ in range(2 * 127):
        for a in range(1, 128):
            if not s.queued(a):
                s.submit(a, Urgency.BACKGROUND)
        t = s.grant(now)
        if t is None:
            nxt = s.next_time(now)
            assert nxt is not None
            now = nxt
            t = s.grant(now)
        assert t is not None
        s.sent(t.address, 1, now)
        s.done(1, now + 0.002)
        order.append(t.address)
        now += 0.002
    assert sorted(order[:127]) == list(range(1, 128))
    assert sorted(order[127:]) == list(range(1, 128))
