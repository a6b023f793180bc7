"""Property tests of the paired links under a bad line (Hypothesis drives the faults)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocols.sas import (
    ExceptionReply,
    GeneralPoll,
    PollFailed,
    PollReply,
    Retrying,
    SendCurrentCredits,
    Shutdown,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from .conftest import LinkPair


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    posts=st.lists(st.integers(0x11, 0x6F), min_size=1, max_size=15),
    drops=st.lists(st.booleans(), max_size=40),
)
def test_exceptions_arrive_once_in_order_despite_lost_replies(
    make_pair: Callable[..., LinkPair], posts: list[int], drops: list[bool]
) -> None:
    """EGM -> host transmissions are lost at random: every exception still reaches the host
    exactly once and in order (repeat = NACK resends it, sync = ACK commits it)."""
    pair = make_pair()
    faults = iter(drops)
    pair.to_host = lambda data: b"" if next(faults, False) else data
    for code in posts:
        pair.egm.post_exception(code)
    got: list[int] = []
    for _ in range(200):  # bounded; drops run out after 40 transmissions
        for ev in pair.poll(GeneralPoll(1)):
            assert isinstance(ev, PollReply | PollFailed | Retrying)
            if isinstance(ev, PollReply):
                assert isinstance(ev.reply, ExceptionReply)
                assert ev.tries <= 3
                if ev.reply.code:
                    got.append(ev.reply.code)
        if len(got) >= len(posts) and len(pair.egm.queue) == 0:
            break
        pair.advance(0.2)
    assert got == posts


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    polls=st.lists(
        st.sampled_from([GeneralPoll(1), SendCurrentCredits(1), Shutdown(1)]), max_size=12
    ),
    garble=st.lists(st.tuples(st.booleans(), st.integers(0, 255)), max_size=40),
)
def test_every_poll_ends_in_one_reply_or_one_failure(
    make_pair: Callable[..., LinkPair], polls: list[object], garble: list[tuple[bool, int]]
) -> None:
    """Bytes are garbled both ways: each poll still ends in exactly one PollReply or
    PollFailed after at most 3 tries, and the links never raise."""
    pair = make_pair()
    faults = iter(garble)

    def mangle(data: bytes) -> bytes:
        hit, value = next(faults, (False, 0))
        if not hit or not data:
            return data
        i = value % len(data)
        return data[:i] + bytes((data[i] ^ (value | 1),)) + data[i + 1 :]

    pair.to_host = mangle
    pair.to_egm = mangle
    for poll in polls:
        events = pair.poll(poll)  # type: ignore[arg-type]
        final = [e for e in events if isinstance(e, PollReply | PollFailed)]
        assert len(final) == 1
        assert final[0].poll == poll
        assert final[0].tries <= 3
        pair.advance(0.2)
