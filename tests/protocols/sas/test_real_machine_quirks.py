"""Lenient where SAS allows, strict where money is (issue 28; docs/sas.md, real machines).

The two quirks a third-party EGM showed: LP 1F's base percent as BCD ``00 00 95 00``
instead of four ASCII digits, and LP 01 answered ``01 01 51 08`` (the ACK, then the rest
of the poll echoed).  A display-only field that breaks its format is kept as received and
flagged; money stays strict; bytes after a reply are flagged, counted and the reply
stands, with the link's state machine exactly as before.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulators.machine import EmulatedMachine
from emulators.sas_face import SasFace
from emulators.sas_quirks import Quirks
from protocols.sas import (
    Ack,
    BcdError,
    CurrentCreditsReply,
    FieldQuirk,
    HostLink,
    HostState,
    MachineInfoReply,
    PollReply,
    ReplyParser,
    SendCurrentCredits,
    SendMachineInfo,
    Shutdown,
    Startup,
    TrailingBytes,
    append_crc,
    decode_reply,
    encode_egm_message,
    escape,
)
from protocols.sas.carriers.memory import memory_pair
from protocols.sas.client import SasClient
from protocols.sas.link import LinkSettings

H = bytes.fromhex
# LP 1F reply, address 1: game "RG", additional "001", denomination 01, max bet 05,
# progressive group 00, options 0000, paytable "RG0001", then the base percent
LP1F_HEAD = H("01 1F") + b"RG" + b"001" + H("01 05 00 00 00") + b"RG0001"


def lp1f(base_percent: bytes) -> bytes:
    return append_crc(LP1F_HEAD + base_percent)


# -- display-only fields: kept as received --------------------------------------------


def test_base_percent_in_bcd_is_kept_as_received_and_flagged() -> None:
    """Golden vector: the third-party EGM's LP 1F (base percent BCD 00 00 95 00)."""
    frame = lp1f(H("00 00 95 00"))
    reply = decode_reply(frame, SendMachineInfo(1))
    assert isinstance(reply, MachineInfoReply)
    assert reply.base_percent == "00 00 95 00"
    assert reply.quirks == (FieldQuirk("base percent", H("00 00 95 00"), "is not ASCII digits"),)
    assert (reply.game_id, reply.paytable_id) == ("RG", "RG0001")
    assert reply.encode() == frame  # as received: the same bytes go back out


def test_base_percent_in_ascii_has_no_quirk() -> None:
    reply = decode_reply(lp1f(b"9500"), SendMachineInfo(1))
    assert isinstance(reply, MachineInfoReply)
    assert (reply.base_percent, reply.quirks) == ("9500", ())


@given(st.binary(min_size=4, max_size=4))
def test_any_base_percent_decodes_and_goes_back_out_unchanged(raw: bytes) -> None:
    frame = lp1f(raw)
    reply = decode_reply(frame, SendMachineInfo(1))
    assert isinstance(reply, MachineInfoReply)
    digits = raw.isascii() and raw.decode().isdigit()
    assert bool(reply.quirks) is not digits
    assert reply.base_percent == (raw.decode() if digits else raw.hex(" "))
    assert reply.encode() == frame


@given(st.binary(min_size=6, max_size=6), st.binary(min_size=3, max_size=3))
def test_any_paytable_or_additional_id_never_fails_the_reply(paytable: bytes, extra: bytes) -> None:
    frame = append_crc(H("01 1F") + b"RG" + extra + H("01 05 00 00 00") + paytable + b"9000")
    reply = decode_reply(frame, SendMachineInfo(1))
    assert isinstance(reply, MachineInfoReply)
    assert {q.field for q in reply.quirks} == {
        name for name, raw in (("additional ID", extra), ("paytable ID", paytable))
        if not raw.isascii()
    }  # fmt: skip
    assert reply.encode() == frame


def test_a_quirk_must_really_break_the_format() -> None:
    """Built by hand (an emulator), a quirk is what the decoder would have flagged."""
    with pytest.raises(ValueError, match="no such quirk"):
        MachineInfoReply(
            1, "RG", "001", 1, 5, 0, 0, "RG0001", "39 35 30 30",
            (FieldQuirk("base percent", b"9500", "is not ASCII digits"),),
        )  # fmt: skip
    with pytest.raises(ValueError, match="base percent must be ASCII digits"):
        MachineInfoReply(1, "RG", "001", 1, 5, 0, 0, "RG0001", "92.5")


# -- money stays strict -----------------------------------------------------------------


def test_credits_in_bad_bcd_still_fail() -> None:
    """LP 1A carries money: a nibble above 9 is an error (the link asks again), never a
    value guessed or kept as received."""
    with pytest.raises(BcdError):
        decode_reply(append_crc(H("01 1A 00 00 9A 00")), SendCurrentCredits(1))


@given(st.binary(min_size=4, max_size=4))
def test_credits_are_bcd_or_an_error(raw: bytes) -> None:
    frame = append_crc(H("01 1A") + raw)
    if all(n <= 9 for b in raw for n in (b >> 4, b & 15)):
        reply = decode_reply(frame, SendCurrentCredits(1))
        assert reply == CurrentCreditsReply(1, int(raw.hex()))
    else:
        with pytest.raises(BcdError):
            decode_reply(frame, SendCurrentCredits(1))


# -- trailing bytes: flagged, counted, the reply stands ---------------------------------


def test_ack_followed_by_the_poll_echoed_is_an_ack_with_trailing_bytes() -> None:
    """Golden vector: LP 01 answered ``01 01 51 08``."""
    parser = ReplyParser()
    parser.expect(Shutdown(1))
    assert parser.feed(H("01 01 51 08")) == [Ack(1)]
    assert parser.trailing == 3
    assert parser.take_trailing() == [TrailingBytes(Shutdown(1), Ack(1), H("01 51 08"))]
    assert parser.take_trailing() == []


def test_trailing_bytes_split_across_reads() -> None:
    parser = ReplyParser()
    parser.expect(Startup(1))
    assert parser.feed(H("01")) == []  # a lone address: held (ACK or busy)
    assert parser.gap() == [Ack(1)]
    assert parser.feed(H("02 CA")) == []
    assert parser.feed(H("3A")) == []
    assert [t.data for t in parser.take_trailing()] == [H("02 CA"), H("3A")]
    assert parser.trailing == 3
    parser.expect(Startup(1))  # the next poll: what comes now is its reply, not a tail
    assert parser.feed(H("01 55")) == [Ack(1)]
    assert parser.trailing == 4


@given(st.binary(min_size=1, max_size=12), st.integers(0, 99_999_999))
def test_any_tail_after_a_reply_is_counted_exactly(tail: bytes, credits: int) -> None:
    reply = CurrentCreditsReply(1, credits)
    parser = ReplyParser()
    parser.expect(SendCurrentCredits(1))
    assert parser.feed(encode_egm_message(reply) + escape(tail, wakeup=False)) == [reply]
    assert parser.trailing == len(tail)
    assert b"".join(t.data for t in parser.take_trailing()) == tail


def test_host_link_flags_trailing_bytes_and_keeps_its_rules() -> None:
    link = HostLink(LinkSettings())
    link.send(Shutdown(1), 0.0)
    link.receive_data(H("01 01 51 08"), 0.001)
    events = link.events()
    assert events == [
        PollReply(Shutdown(1), Ack(1), 1),
        TrailingBytes(Shutdown(1), Ack(1), H("01 51 08")),
    ]
    assert link.state is HostState.IDLE
    assert link.trailing_bytes == 3
    assert link.next_deadline() is None  # no retry, no wait: the reply stood


# -- the emulator with both quirks, through the client ----------------------------------


async def test_client_reads_a_quirky_emulated_machine() -> None:
    host_end, egm_end = memory_pair()
    face = SasFace(
        EmulatedMachine("Q-1", seed=1), 1, quirks=Quirks(base_percent_bcd=True, ack_echo=True)
    )
    face.attach(egm_end)
    client = SasClient(host_end, 1, min_spacing=0.0)
    try:
        async with asyncio.timeout(10):
            info = await client.machine_info()
            await client.lock()
            await client.unlock()
            credits = await client.credits()
    finally:
        await client.close()
        face.close()
    assert info.base_percent == "00 00 90 00"  # the emulator's 90.00 %, in BCD
    assert [q.field for q in info.quirks] == ["base percent"]
    assert credits == 0
    assert face.machine.play_enabled()
    assert client.stats.trailing_bytes == 6  # LP 01 and LP 02, 3 bytes each
    assert [t.data for t in client.trailing] == [H("01 51 08"), H("02 CA 3A")]
    assert client.stats.failures == client.stats.retries == 0


def test_quirk_names_parse_or_name_the_bad_one() -> None:
    assert Quirks.parse("base-percent-bcd, ack-echo").names() == ["base-percent-bcd", "ack-echo"]
    assert Quirks.parse("") == Quirks()
    with pytest.raises(ValueError, match="unknown quirk 'nope'"):
        Quirks.parse("ack-echo,nope")
