"""The EGM's 5 ms inter-byte gap rule (sas.md §1), as an option of the EGM link.

With ``LinkSettings(enforce_gap=True)`` a host message whose bytes pause for more than
``inter_byte_gap`` is discarded, as a real EGM discards it: no reply, a
``TruncatedFrameError`` event, and the host's retry (sent whole) is answered.  Off by
default.  Time is passed in: every ``now`` below is an injected clock value.
"""

from __future__ import annotations

import pytest

from emulators.machine import EmulatedMachine
from emulators.sas_face import SasFace
from protocols.sas import (
    CurrentCreditsReply,
    EgmLink,
    HostLink,
    LinkSettings,
    PollHandled,
    PollReply,
    Retrying,
    SendCurrentCredits,
    Shutdown,
    TruncatedFrameError,
    encode_host_message,
)

from .conftest import TestMachine

STRICT = LinkSettings(enforce_gap=True)
LP01 = encode_host_message(Shutdown(1))  # FF 00 01 01 51 08: 6 escaped bytes


def _egm(settings: LinkSettings | None = STRICT) -> EgmLink:
    return EgmLink(1, TestMachine(1), 0.0, settings)


def test_a_pause_over_5_ms_inside_a_message_discards_it() -> None:
    egm = _egm()
    egm.receive_data(LP01[:4], 1.000)
    egm.receive_data(LP01[4:], 1.0051)  # 5.1 ms later
    assert egm.data_to_send() == b""  # silence, as a real EGM
    events = egm.events()
    assert len(events) == 1
    assert isinstance(events[0], TruncatedFrameError)
    assert events[0].raw == bytes((0x01, 0x01))  # addr and command read before the pause
    egm.receive_data(LP01, 1.030)  # the host's retry, whole
    assert egm.data_to_send() == b"\x01"
    assert [type(e) for e in egm.events()] == [PollHandled]


def test_a_pause_within_5_ms_is_fine() -> None:
    egm = _egm()
    egm.receive_data(LP01[:4], 1.000)
    egm.receive_data(LP01[4:], 1.0049)
    assert egm.data_to_send() == b"\x01"


def test_pauses_between_messages_do_not_count() -> None:
    egm = _egm()
    egm.receive_data(LP01, 1.0)
    egm.receive_data(encode_host_message(SendCurrentCredits(1)), 9.0)  # seconds later
    assert egm.data_to_send().startswith(b"\x01\x01\x1a")  # ACK, then the credits reply


def test_a_split_escape_is_one_character_and_survives_the_pause() -> None:
    egm = _egm()
    egm.receive_data(LP01[:1], 1.000)  # FF: the first half of the wakeup escape
    egm.receive_data(LP01[1:], 1.050)  # a TCP quirk, not a pause between characters
    assert egm.data_to_send() == b"\x01"


@pytest.mark.parametrize("settings", [None, LinkSettings()], ids=["default", "explicit-off"])
def test_off_by_default(settings: LinkSettings | None) -> None:
    egm = _egm(settings)
    egm.receive_data(LP01[:4], 1.0)
    egm.receive_data(LP01[4:], 1.5)  # half a second: still one message
    assert egm.data_to_send() == b"\x01"


def test_host_and_strict_egm_in_memory_the_retry_gets_through() -> None:
    host, egm = HostLink(), _egm()
    now = 10.0
    wire = host.send(SendCurrentCredits(1), now)  # FF 00 01 1A
    egm.receive_data(wire[:3], now)
    egm.receive_data(wire[3:], now + 0.006)  # a stalled host: discarded
    assert egm.data_to_send() == b""
    deadline = host.next_deadline()
    assert deadline is not None
    host.handle_timers(deadline)  # no reply in time: the host repeats the poll
    assert [type(e) for e in host.events()] == [Retrying]
    retry = host.data_to_send()
    assert retry == wire
    egm.receive_data(retry, deadline)
    host.receive_data(egm.data_to_send(), deadline + 0.002)
    (ev,) = host.events()
    assert isinstance(ev, PollReply)
    assert ev.tries == 2
    assert ev.reply == CurrentCreditsReply(1, 500)


def test_fast_path_and_gap_rule_agree() -> None:
    # whole polls take the fast path whatever the pauses between them
    egm = EgmLink(1, TestMachine(1), 0.0, STRICT, fast_polls=(Shutdown(1),))
    egm.receive_data(LP01[:4], 1.0)
    egm.receive_data(LP01, 1.5)  # the half message is dropped, the whole one answered
    assert egm.data_to_send() == b"\x01"
    assert egm.fast_hits == 1
    assert [type(e) for e in egm.events()] == [TruncatedFrameError, PollHandled]


async def test_the_emulator_option_switches_the_rule_on() -> None:
    on = SasFace(EmulatedMachine("G1"), 1, enforce_gap=True)
    off = SasFace(EmulatedMachine("G2"), 1)
    try:
        assert on.link.settings.enforce_gap
        assert not off.link.settings.enforce_gap
        assert on.link.settings.inter_byte_gap == 0.005
        now = on.link.next_deadline() or 0.0  # any time; the link reads no clock
        for face in (on, off):
            face.link.receive_data(LP01[:4], now)
            face.link.receive_data(LP01[4:], now + 0.010)
        assert on.link.data_to_send() == b""
        assert off.link.data_to_send() == b"\x01"
    finally:
        on.close()
        off.close()
