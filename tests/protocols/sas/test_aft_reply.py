"""The LP 72 reply in its SAS 6.02 layout: golden frames both ways, and what the host
side accepts from EGMs that send less (no transfer information, pre-6.02 bodies)."""

from __future__ import annotations

import datetime as dt

import pytest

from protocols.sas import (
    AftInterrogate,
    AftTransferReply,
    AftTransferStatus,
    LengthError,
    check_crc,
    decode_reply,
)

H = bytes.fromhex

# A restricted load of $300.00 (transaction "T-1", asset 1) done 29 Nov 2026 18:00:05,
# expiring after 1 day, pool 7; the EGM's cumulative restricted meter is now $300.00.
LOAD_WIRE = (
    "01 72 3B"
    " 00 00 FF 00"  # buffer position, full transfer OK, no receipt, in-house to machine
    " 00 00 00 00 00  00 00 03 00 00  00 00 00 00 00"  # cashable, restricted, non-restr.
    " 00  01 00 00 00"  # transfer flags, asset number (binary, low byte first)
    " 03 54 2D 31"  # transaction ID "T-1"
    " 11 29 20 26  18 00 05"  # date MMDDYYYY, time HHMMSS
    " 00 00 00 01  07 00"  # expiration 0000NNNN (1 day), pool ID
    " 05 00 00 00 00 00  05 00 00 03 00 00  05 00 00 00 00 00"  # cumulative meters
    " 4B 18"
)
LOAD = AftTransferReply(
    1,
    buffer_position=0,
    transfer_status=AftTransferStatus.FULL_TRANSFER_OK,
    receipt_status=0xFF,
    transfer_type=0x00,
    cashable_cents=0,
    restricted_cents=30_000,
    nonrestricted_cents=0,
    transfer_flags=0,
    asset_number=1,
    transaction_id="T-1",
    transaction_at=dt.datetime(2026, 11, 29, 18, 0, 5),
    expiration=1,
    pool_id=7,
    cumulative_cashable_cents=0,
    cumulative_restricted_cents=30_000,
    cumulative_nonrestricted_cents=0,
)

NO_INFO_WIRE = (
    "01 72 38  00 FF FF 00"
    + " 00" * 20
    + " 00"  # empty transaction ID
    + " 00 00 00 00 00 00 00"  # no date and time
    + " 00 00 00 00 00 00"  # no expiration, pool 0
    + " 05 00 00 00 00 00" * 3
)


def test_golden_lp72_reply_encodes_and_decodes() -> None:
    frame = H(LOAD_WIRE)
    assert check_crc(frame)
    assert LOAD.encode() == frame
    assert decode_reply(frame, AftInterrogate(1)) == LOAD


def test_no_transfer_information_is_status_ff_with_every_field_zero() -> None:
    reply = AftTransferReply.no_information(1)
    frame = reply.encode()
    assert frame[:-2] == H(NO_INFO_WIRE)
    assert check_crc(frame)
    back = decode_reply(frame, AftInterrogate(1))
    assert back == reply
    assert back.status is AftTransferStatus.NO_INFORMATION
    assert isinstance(back, AftTransferReply)
    assert back.transaction_at is None


def test_the_host_takes_a_bare_status_ff_reply() -> None:
    # some EGMs answer "nothing at this position" with just position and status
    assert decode_reply(H("01 72 02 00 FF B7 D2"), AftInterrogate(1)) == (
        AftTransferReply.no_information(1)
    )


def test_the_host_takes_a_reply_that_ends_after_the_transaction_id() -> None:
    body = H(LOAD_WIRE)[3:31]  # up to and including "T-1"
    frame = AftTransferReply.from_body(1, 0x72, body)
    assert isinstance(frame, AftTransferReply)
    assert frame.restricted_cents == 30_000
    assert frame.transaction_id == "T-1"
    assert (frame.transaction_at, frame.pool_id, frame.cumulative_restricted_cents) == (None, 0, 0)


@pytest.mark.parametrize(
    ("cut", "why"),
    [
        (31 + 5, "cut short"),  # inside date and time
        (len(H(LOAD_WIRE)) - 2 - 3, "cut short"),  # inside the last meter
    ],
)
def test_a_cut_tail_is_a_length_error(cut: int, why: str) -> None:
    body = H(LOAD_WIRE)[3:cut]
    with pytest.raises(LengthError, match=why):
        AftTransferReply.from_body(1, 0x72, body)


def test_meter_sizes_are_read_as_sent_and_trailing_bytes_refused() -> None:
    body = bytearray(H(LOAD_WIRE)[3:-2])
    # an EGM that sends 4-byte meters: same values
    short = body[:41] + H("04 00 00 00 00  04 00 03 00 00  04 00 00 00 00")
    reply = AftTransferReply.from_body(1, 0x72, bytes(short))
    assert reply == LOAD
    with pytest.raises(LengthError, match="after the meters"):
        AftTransferReply.from_body(1, 0x72, bytes(body) + b"\x00")
    body[41] = 0x0A  # a meter size above 9
    with pytest.raises(LengthError, match="size"):
        AftTransferReply.from_body(1, 0x72, bytes(body))
