"""LP 73 (AFT register gaming machine), the LP 72 fields a real EGM checks (asset number,
registration key, transaction ID, expiration, pool ID) and every LP 72 transfer status.

Golden frames: the LP 72 interrogation is sas.md §2's own vector; the LP 73 frames are
our reading of SAS 6.02 §8 with the CRC computed (CRC-16/KERMIT, sas.md §2) and checked
here by the all-frame-CRC-is-zero rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocols.sas import (
    AftInterrogate,
    AftLockRequest,
    AftRegister,
    AftRegistrationCode,
    AftRegistrationReply,
    AftRegistrationStatus,
    AftStatusReply,
    AftTransfer,
    AftTransferStatus,
    AftTransferType,
    FieldError,
    LengthError,
    TransferOutcome,
    check_crc,
    decode_host_frame,
    decode_reply,
    describe_registration_status,
    describe_transfer_status,
    transfer_outcome,
)
from protocols.sas.aft import AFT_STATUS_REGISTERED

H = bytes.fromhex
KEY = bytes(range(1, 21))

READ_WIRE = "01 73 01 FF A7 65"
REGISTER_WIRE = (
    "01 73 1D 01"
    " E9 03 00 00"  # asset number 1001, low byte first
    " 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14"  # registration key
    " 2A 00 00 00"  # POS ID 42
    " 9B 77"
)
REGISTERED_WIRE = REGISTER_WIRE  # the reply has the same shape: status 01 = registered
NOT_REGISTERED_WIRE = "01 73 1D 80 E9 03 00 00" + " 00" * 24 + " 8F 31"


def test_sas_md_golden_lp72_interrogation() -> None:
    assert AftInterrogate(1).encode() == H("01 72 02 FF 00 0F 22")


def test_golden_lp73_read_registration() -> None:
    frame = H(READ_WIRE)
    assert check_crc(frame)
    assert AftRegister.read(1).encode() == frame
    assert decode_host_frame(frame) == AftRegister(1, AftRegistrationCode.READ)


def test_golden_lp73_register_with_asset_key_and_pos_id() -> None:
    frame = H(REGISTER_WIRE)
    assert check_crc(frame)
    poll = AftRegister(1, AftRegistrationCode.REGISTER, 1001, KEY, 42)
    assert poll.encode() == frame
    assert decode_host_frame(frame) == poll


def test_golden_lp73_replies() -> None:
    poll = AftRegister.read(1)
    registered = decode_reply(H(REGISTERED_WIRE), poll)
    assert registered == AftRegistrationReply(1, 0x01, 1001, KEY, 42)
    assert isinstance(registered, AftRegistrationReply)
    assert registered.registered
    refused = decode_reply(H(NOT_REGISTERED_WIRE), poll)
    assert isinstance(refused, AftRegistrationReply)
    assert refused.status is AftRegistrationStatus.NOT_REGISTERED
    assert refused.asset_number == 1001  # the EGM names its asset number even unregistered
    assert not refused.registered


@pytest.mark.parametrize("code", [AftRegistrationCode.UNREGISTER, AftRegistrationCode.READ])
def test_code_only_registration_polls_refuse_fields(code: int) -> None:
    assert len(AftRegister(1, code).body()) == 1
    with pytest.raises(FieldError, match="carries no asset number"):
        AftRegister(1, code, asset_number=7)


def test_padded_read_from_another_host_is_accepted_and_its_fields_ignored() -> None:
    body = bytes((0xFF,)) + bytes(range(28))
    assert AftRegister.from_body(1, 0x73, body) == AftRegister.read(1)


@pytest.mark.parametrize(
    ("body", "complaint"),
    [(b"", "no registration code"), (b"\x01\x00", "29 bytes"), (b"\xff\x00\x00", "1 or 29")],
)
def test_bad_lp73_bodies_are_length_errors(body: bytes, complaint: str) -> None:
    with pytest.raises(LengthError, match=complaint):
        AftRegister.from_body(1, 0x73, body)


@pytest.mark.parametrize(
    ("kwargs", "complaint"),
    [
        ({"asset_number": 2**32}, "asset number"),
        ({"pos_id": -1}, "POS ID"),
        ({"registration_key": b"short"}, "20 bytes"),
    ],
)
def test_lp73_fields_out_of_range_are_refused(kwargs: dict[str, object], complaint: str) -> None:
    with pytest.raises(FieldError, match=complaint):
        AftRegister(1, AftRegistrationCode.REGISTER, **kwargs)  # type: ignore[arg-type]


def test_lp72_carries_asset_key_transaction_expiration_and_pool() -> None:
    poll = AftTransfer(
        1,
        transfer_type=AftTransferType.IN_HOUSE_TO_MACHINE,
        cashable_cents=0,
        restricted_cents=50_000,
        nonrestricted_cents=0,
        transaction_id="RG-A01-0001",
        asset_number=1001,
        registration_key=KEY,
        expiration=1,
        pool_id=0x5247,
    )
    frame = poll.encode()
    assert check_crc(frame)
    body = frame[3:-2]
    assert body[:3] == H("00 00 00")  # full transfer only, index 0, in-house to machine
    assert body[3:18] == H("00 00 00 00 00  00 00 05 00 00  00 00 00 00 00")
    assert body[19:23] == H("E9 03 00 00")
    assert body[23:43] == KEY
    assert body[43] == 11
    assert body[44:55] == b"RG-A01-0001"
    assert body[55:59] == H("00 00 00 01")  # expiration: 1 day (0000NNNN)
    assert body[59:61] == H("47 52")
    assert decode_host_frame(frame) == poll


@pytest.mark.parametrize("tid", ["", "X" * 21])
def test_transaction_id_is_1_to_20_characters(tid: str) -> None:
    with pytest.raises(FieldError, match="transaction ID"):
        AftTransfer(1, 0, 0, 100, 0, transaction_id=tid, asset_number=1)


def test_lp74_reply_names_the_asset_number_and_the_registered_bit() -> None:
    reply = AftStatusReply(
        1, 1001, 0x00, 0x03, 0, AFT_STATUS_REGISTERED | 0x90, 1, 0, 50_000, 0, 10**8, 1, 7
    )
    frame = reply.encode()
    assert frame[3:7] == H("E9 03 00 00")
    assert frame[10] & AFT_STATUS_REGISTERED
    assert decode_reply(frame, AftLockRequest(1)) == reply


ALL_STATUSES = {
    0x00: TransferOutcome.DONE,
    0x01: TransferOutcome.DONE,
    0x40: TransferOutcome.PENDING,
    **{code: TransferOutcome.FAILED for code in range(0x80, 0x96)},
    0x9F: TransferOutcome.FAILED,
    0xC0: TransferOutcome.INCOMPATIBLE,
    0xC1: TransferOutcome.INCOMPATIBLE,
    0xFF: TransferOutcome.NO_INFORMATION,
}


def test_every_transfer_status_is_a_named_constant_with_its_class() -> None:
    assert {s.value for s in AftTransferStatus} == set(ALL_STATUSES)
    for code, outcome in ALL_STATUSES.items():
        assert transfer_outcome(code) is outcome, hex(code)
    assert describe_transfer_status(0x93) == "93 asset number mismatch"
    assert describe_transfer_status(0x88) == "88 not registered"
    assert describe_transfer_status(0x9A) == "9A unlisted (failed)"
    assert describe_registration_status(0x40) == "40 pending"


@given(st.integers(0, 255))
def test_unlisted_statuses_fall_in_their_class(code: int) -> None:
    outcome = transfer_outcome(code)
    if code == 0xFF:
        assert outcome is TransferOutcome.NO_INFORMATION
    else:
        expected = {
            0x00: TransferOutcome.DONE,
            0x40: TransferOutcome.PENDING,
            0xC0: TransferOutcome.INCOMPATIBLE,
        }.get(code & 0xE0, TransferOutcome.FAILED)  # undefined classes count as failed
        assert outcome is expected


@given(
    st.sampled_from([0x00, 0x01, 0x40]),
    st.integers(0, 2**32 - 1),
    st.binary(min_size=20, max_size=20),
    st.integers(0, 2**32 - 1),
)
def test_lp73_round_trip(code: int, asset: int, key: bytes, pos: int) -> None:
    poll = AftRegister(1, code, asset, key, pos)
    assert decode_host_frame(poll.encode()) == poll
    reply = AftRegistrationReply(1, code, asset, key, pos)
    assert decode_reply(reply.encode(), AftRegister.read(1)) == reply
