"""SAS codec throughput: frames encoded + decoded per CPU-second (median of several runs).

    python bench/sas_codec.py [--runs 7] [--seconds 0.3]

Each row encodes a message to escaped wire bytes and decodes it again with the parser of
the receiving side (EGM-side parser for host polls, host-side parser for replies).  The
last rows run whole poll cycles through the host and EGM link state machines.  The
target that matters: 1000 machines polled every 200 ms = 5000 poll cycles/s on one core,
including the carrier and gateway work around the codec.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.sas import (
    CurrentCreditsReply,
    EgmLink,
    EgmMessage,
    ExceptionReply,
    GeneralPoll,
    HostFrameParser,
    HostLink,
    HostMessage,
    LongPoll,
    ReplyParser,
    SendCurrentCredits,
    SendTournamentMeters,
    TournamentMetersReply,
    TournamentMode,
    encode_egm_message,
    encode_host_message,
)


def host_case(msg: HostMessage) -> Callable[[int], None]:
    parser = HostFrameParser(msg.addr)

    def run(n: int) -> None:
        for _ in range(n):
            events = parser.feed(encode_host_message(msg))
        assert events == [msg], events

    return run


def reply_case(poll: HostMessage, reply: EgmMessage) -> Callable[[int], None]:
    parser = ReplyParser()

    def run(n: int) -> None:
        for _ in range(n):
            parser.expect(poll)
            events = parser.feed(encode_egm_message(reply))
        assert events == [reply], events

    return run


class _Machine:
    def handle(self, poll: LongPoll) -> EgmMessage | None:
        return CurrentCreditsReply(poll.addr, 1234)


def link_case(poll: HostMessage) -> Callable[[int], None]:
    host = HostLink()
    egm = EgmLink(poll.addr, _Machine())

    def run(n: int) -> None:
        now = 0.0
        for _ in range(n):
            now += 0.001
            egm.receive_data(host.send(poll, now), now)
            host.receive_data(egm.data_to_send(), now)
            egm.events()
            event = host.next_event()
        assert event is not None, event
        assert not host.poll_in_flight, event

    return run


CASES: list[tuple[str, Callable[[int], None]]] = [
    ("general poll (host -> EGM)", host_case(GeneralPoll(1))),
    ("exception reply (EGM -> host)", reply_case(GeneralPoll(1), ExceptionReply(1, 0x7E))),
    ("LP 1A poll (host -> EGM)", host_case(SendCurrentCredits(1))),
    ("LP 1A reply (EGM -> host)", reply_case(SendCurrentCredits(1), CurrentCreditsReply(1, 1234))),
    (
        "LP 99 reply (EGM -> host)",
        reply_case(SendTournamentMeters(1, 1), TournamentMetersReply(1, 1, 120, 40, 6000, 7300)),
    ),
    ("LP 8C enter (host -> EGM)", host_case(TournamentMode(1, 1, 5, 0, 1000))),
    ("link cycle: general poll", link_case(GeneralPoll(1))),
    ("link cycle: LP 1A", link_case(SendCurrentCredits(1))),
]


def calibrate(run: Callable[[int], None], seconds: float) -> int:
    """Iterations that take about ``seconds`` of CPU time."""
    n = 1000
    for _ in range(12):  # bounded: n grows until a run is long enough to time
        start = time.process_time()
        run(n)
        spent = time.process_time() - start
        if spent >= seconds / 4:
            break
        n *= 4
    return max(1, int(n * seconds / max(spent, 1e-9)))


def rate(run: Callable[[int], None], n: int) -> float:
    start = time.process_time()
    run(n)
    return n / max(time.process_time() - start, 1e-9)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.2, help="CPU time per run")
    args = ap.parse_args()
    print(f"{'case':<32} {'median frames/CPU-s':>20} {'min':>10} {'max':>10}  ({args.runs} runs)")
    for name, run in CASES:
        n = calibrate(run, args.seconds)
        rates = [rate(run, n) for _ in range(args.runs)]
        med, low, high = statistics.median(rates), min(rates), max(rates)
        print(f"{name:<32} {med:>20,.0f} {low:>10,.0f} {high:>10,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
