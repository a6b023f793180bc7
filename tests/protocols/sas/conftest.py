"""In-memory host/EGM link pair (no sockets, no clock) and a small machine for the EGM.

``LinkPair`` wires a :class:`HostLink` to an :class:`EgmLink` with zero wire latency and a
simulated clock: bytes are handed across at once, and time only moves when the pair fires
the next timer of either side.  Hooks may corrupt bytes in either direction.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from protocols.sas import (
    Ack,
    Busy,
    CurrentCreditsReply,
    EgmLink,
    EgmMessage,
    EnabledFeaturesReply,
    HostLink,
    HostMessage,
    HostState,
    LinkEvent,
    LinkSettings,
    LongPoll,
    MetersReply,
    SendCurrentCredits,
    SendEnabledFeatures,
    SendMeters,
    SendTournamentMeters,
    SetDateTime,
    Shutdown,
    Startup,
    TournamentMetersReply,
    TournamentMode,
)

Filter = Callable[[bytes], bytes]


class TestMachine:
    """Just enough of a slot machine to answer the polls the link tests use."""

    __test__ = False  # not a test class

    def __init__(self, addr: int = 1) -> None:
        self.addr = addr
        self.locked = False
        self.credits = 500
        self.games_played = 0
        self.game_in_progress = False
        self.tournament: TournamentMode | None = None
        self.tournament_meters = (0, 0, 0, 0)
        self.clock_set: list[SetDateTime] = []
        self.calls: list[LongPoll] = []
        self.tournament_feature = True

    def handle(self, poll: LongPoll) -> EgmMessage | None:
        self.calls.append(poll)
        a = self.addr
        if isinstance(poll, Shutdown):
            self.locked = True
            return Ack(a)
        if isinstance(poll, Startup):
            self.locked = False
            return Ack(a)
        if isinstance(poll, SendCurrentCredits):
            return CurrentCreditsReply(a, self.credits)
        if isinstance(poll, SendMeters):
            return MetersReply(a, 0, 1000, 400, 0, 0, self.games_played)
        if isinstance(poll, SendEnabledFeatures):
            return EnabledFeaturesReply(
                a, poll.game, bytes((0x08 if self.tournament_feature else 0, 0, 0, 0, 0, 0))
            )
        if isinstance(poll, TournamentMode):
            if self.game_in_progress:  # finish the game first (sas.md §3)
                return Busy(a)
            self.tournament = None if poll.is_exit else poll
            if not poll.is_exit:
                self.credits = poll.credits  # play-only credits (T12, T18)
            return Ack(a)
        if isinstance(poll, SendTournamentMeters):
            return TournamentMetersReply(a, poll.game, *self.tournament_meters)
        if isinstance(poll, SetDateTime):
            self.clock_set.append(poll)
            return Ack(a)
        return None  # unsupported: the EGM stays silent


class LinkPair:
    def __init__(self, settings: LinkSettings | None = None, addr: int = 1) -> None:
        self.now = 0.0
        self.machine = TestMachine(addr)
        self.host = HostLink(settings)
        self.egm = EgmLink(addr, self.machine, now=self.now, settings=settings)
        self.to_egm: Filter = lambda b: b
        self.to_host: Filter = lambda b: b
        self.host_events: list[LinkEvent] = []
        self.egm_events: list[LinkEvent] = []
        self.egm_wire: list[bytes] = []  # everything the EGM sent, in order

    def _pump(self) -> None:
        for _ in range(100):  # bounded: each round moves one batch each way
            moved = False
            out = self.host.data_to_send()
            if out:
                self.egm.receive_data(self.to_egm(out), self.now)
                moved = True
            back = self.egm.data_to_send()
            if back:
                self.egm_wire.append(back)
                self.host.receive_data(self.to_host(back), self.now)
                moved = True
            if not moved:
                break
        self.host_events += self.host.events()
        self.egm_events += self.egm.events()

    def _fire_next(self, limit: float) -> bool:
        deadlines = [
            d for d in (self.host.next_deadline(), self.egm.next_deadline()) if d is not None
        ]
        due = min(deadlines, default=None)
        if due is None or due > limit:
            return False
        self.now = max(self.now, due)
        self.host.handle_timers(self.now)
        self.egm.handle_timers(self.now)
        self._pump()
        return True

    def send(self, msg: HostMessage) -> None:
        out = self.host.send(msg, self.now)
        self.egm.receive_data(self.to_egm(out), self.now)
        self._pump()

    def poll(self, msg: HostMessage) -> list[LinkEvent]:
        """Send ``msg`` and run the clock until the host link is idle; the host's events."""
        start = len(self.host_events)
        self.send(msg)
        for _ in range(50):  # bounded: retries and gaps settle in a few timer firings
            if self.host.state is HostState.IDLE:
                break
            assert self._fire_next(self.now + 1.0), "host link stuck without a timer"
        assert self.host.state is HostState.IDLE
        return self.host_events[start:]

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, firing every timer due on the way."""
        end = self.now + seconds
        for _ in range(100_000):  # bounded
            if not self._fire_next(end):
                break
        self.now = end


@pytest.fixture
def pair() -> LinkPair:
    return LinkPair()


@pytest.fixture
def make_pair() -> Callable[..., LinkPair]:
    """``make_pair(settings)``: a pair with non-default link settings."""
    return LinkPair
