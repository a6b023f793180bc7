"""AFT (Advanced Funds Transfer) long polls 72 and 74: credit loading without LP 8C.

Host-timed tournament fallback (EGMs whose LP A0 reply clears the tournament bit):

1. ``AftLockRequest`` (LP 74, lock code 00, condition "transfer to machine") and wait for
   ``AftStatusReply.game_lock_status == LOCKED``;
2. ``AftTransfer`` (LP 72, transfer type 00 in-house to machine) of the starting credits
   as **restricted** credits only (cashable and non-restricted amounts 0) with a pool ID and
   an expiration: restricted credits can be played but never cashed out (rules 12, 18);
3. unlock with ``Startup`` (LP 02) at the heat start; at the end ``Shutdown`` (LP 01),
   score from ``SendCurrentCredits`` (LP 1A), then sweep every credit back with an
   ``AftTransfer`` of type 80 (in-house from machine to host), since a win on restricted
   play lands on the cashable meter of a real EGM.

Amounts on the wire are cents (5 BCD bytes); the caller converts credits x denomination.
Field layouts follow SAS 6.02 section 8 as we read it; the trailing fields of the LP 72
reply (date, time, expiration, pool, cumulative meters) are kept raw in ``extra``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, Protocol

from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.errors import FieldError, LengthError
from protocols.sas.messages import DataReply, LongPoll, _ascii, _byte, _check_addr, _need, _text


class AftTransferCode(enum.IntEnum):
    FULL_ONLY = 0x00
    PARTIAL_ALLOWED = 0x01
    CANCEL = 0x80
    INTERROGATE = 0xFF


class AftTransferType(enum.IntEnum):
    IN_HOUSE_TO_MACHINE = 0x00
    BONUS_COIN_OUT_TO_MACHINE = 0x10
    BONUS_JACKPOT_TO_MACHINE = 0x11
    IN_HOUSE_TO_TICKET = 0x20
    DEBIT_TO_MACHINE = 0x40
    IN_HOUSE_TO_HOST = 0x80


class AftTransferStatus(enum.IntEnum):
    FULL_TRANSFER_OK = 0x00
    PARTIAL_TRANSFER_OK = 0x01
    PENDING = 0x40
    CANCELLED_BY_HOST = 0x80
    DUPLICATE_TRANSACTION_ID = 0x81
    INVALID_FUNCTION = 0x82
    INVALID_AMOUNT_OR_EXPIRATION = 0x83
    AMOUNT_EXCEEDS_LIMIT = 0x84
    AMOUNT_NOT_MULTIPLE_OF_DENOMINATION = 0x85
    PARTIAL_NOT_POSSIBLE = 0x86
    UNABLE_TO_TRANSFER_NOW = 0x87
    NOT_REGISTERED = 0x88
    REGISTRATION_KEY_MISMATCH = 0x89
    NO_POS_ID = 0x8A
    NO_INFORMATION = 0xFF


class AftLockCode(enum.IntEnum):
    REQUEST_LOCK = 0x00
    CANCEL_LOCK = 0x80
    INTERROGATE = 0xFF


class AftLockStatus(enum.IntEnum):
    LOCKED = 0x00
    LOCK_PENDING = 0x40
    NOT_LOCKED = 0xFF


TRANSFER_TO_MACHINE_OK = 0x01  # LP 74 transfer condition bit 0
TRANSFER_FROM_MACHINE_OK = 0x02  # bit 1


def _amount(value: int, name: str) -> bytes:
    try:
        return bcd_encode(value, 5)
    except ValueError:
        raise FieldError(f"{name} must be 0..9999999999 cents, not {value!r}") from None


class _TransferFields(Protocol):
    """What both directions of LP 72 carry in the same 20-byte run."""

    @property
    def cashable_cents(self) -> int: ...
    @property
    def restricted_cents(self) -> int: ...
    @property
    def nonrestricted_cents(self) -> int: ...
    @property
    def transfer_flags(self) -> int: ...
    @property
    def asset_number(self) -> int: ...


def _transfer_fields(msg: _TransferFields) -> bytes:
    """The 20-byte run both directions of LP 72 share: amounts, transfer flags, asset."""
    asset = msg.asset_number
    if not isinstance(asset, int) or not 0 <= asset <= 0xFFFFFFFF:
        raise FieldError(f"asset number must fit 4 bytes, not {asset!r}")
    return (
        _amount(msg.cashable_cents, "cashable amount")
        + _amount(msg.restricted_cents, "restricted amount")
        + _amount(msg.nonrestricted_cents, "non-restricted amount")
        + bytes((_byte(msg.transfer_flags, "transfer flags"),))
        + asset.to_bytes(4, "little")
    )


def _read_transfer_fields(body: bytes, at: int) -> dict[str, int]:
    """:func:`_transfer_fields` read back from ``body[at:at + 20]``, by field name."""
    return {
        "cashable_cents": bcd_decode(body[at : at + 5]),
        "restricted_cents": bcd_decode(body[at + 5 : at + 10]),
        "nonrestricted_cents": bcd_decode(body[at + 10 : at + 15]),
        "transfer_flags": body[at + 15],
        "asset_number": int.from_bytes(body[at + 16 : at + 20], "little"),
    }


@dataclass(frozen=True, slots=True)
class AftInterrogate(LongPoll):
    """LP 72 short form ``len=2 FF index``: status of transaction ``index`` (00 = last)."""

    CODE: ClassVar[int] = 0x72
    transaction_index: int = 0

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        _byte(self.transaction_index, "transaction index")

    def body(self) -> bytes:
        return bytes((AftTransferCode.INTERROGATE, self.transaction_index))


@dataclass(frozen=True, slots=True)
class AftTransfer(LongPoll):
    """LP 72 full form: move cents onto (or off) the EGM."""

    CODE: ClassVar[int] = 0x72
    transfer_type: int
    cashable_cents: int
    restricted_cents: int
    nonrestricted_cents: int
    transaction_id: str  # 1..20 ASCII, unique per transfer
    asset_number: int
    transfer_code: int = AftTransferCode.FULL_ONLY
    transaction_index: int = 0
    transfer_flags: int = 0
    registration_key: bytes = bytes(20)
    expiration: int = 0  # MMDDYYYY, or 0000NNNN = days; needed for restricted credits
    pool_id: int = 0
    receipt_data: bytes = b""
    lock_timeout_cs: int = 0  # hundredths of a second

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    def body(self) -> bytes:
        tid = _ascii(self.transaction_id, None, "transaction ID")
        if not 1 <= len(tid) <= 20:
            raise FieldError(f"transaction ID must be 1..20 characters, not {len(tid)}")
        if len(self.registration_key) != 20:
            raise FieldError("registration key must be 20 bytes")
        if not isinstance(self.pool_id, int) or not 0 <= self.pool_id <= 0xFFFF:
            raise FieldError(f"pool ID must fit 2 bytes, not {self.pool_id!r}")
        if len(self.receipt_data) > 255:
            raise FieldError("receipt data is at most 255 bytes")
        body = (
            bytes(
                (
                    _byte(self.transfer_code, "transfer code"),
                    _byte(self.transaction_index, "transaction index"),
                    _byte(self.transfer_type, "transfer type"),
                )
            )
            + _transfer_fields(self)
            + bytes(self.registration_key)
            + bytes((len(tid),))
            + tid
            + bcd_encode(self.expiration, 4)
            + self.pool_id.to_bytes(2, "little")
            + bytes((len(self.receipt_data),))
            + bytes(self.receipt_data)
            + bcd_encode(self.lock_timeout_cs, 2)
        )
        if len(body) > 255:
            raise FieldError("LP 72 message longer than 255 bytes")
        return body

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        if len(body) == 2 and body[0] == AftTransferCode.INTERROGATE:
            return AftInterrogate(addr, body[1])
        if len(body) < 45:
            raise LengthError(f"LP 72 transfer body too short ({len(body)} bytes)", body)
        tid_len = body[43]
        tid_end = 44 + tid_len
        rest = body[tid_end:]
        if len(rest) < 7 or len(rest) != 7 + rest[6] + 2:
            raise LengthError("LP 72 transfer: lengths inside the body disagree", body)
        return cls(
            addr,
            transfer_type=body[2],
            **_read_transfer_fields(body, 3),
            transaction_id=_text(body[44:tid_end], "transaction ID"),
            transfer_code=body[0],
            transaction_index=body[1],
            registration_key=bytes(body[23:43]),
            expiration=bcd_decode(rest[0:4]),
            pool_id=int.from_bytes(rest[4:6], "little"),
            receipt_data=bytes(rest[7 : 7 + rest[6]]),
            lock_timeout_cs=bcd_decode(rest[7 + rest[6] :]),
        )


@dataclass(frozen=True, slots=True)
class AftTransferReply(DataReply):
    """LP 72 reply: where the transfer stands, the amounts moved and its transaction ID."""

    CODE: ClassVar[int] = 0x72
    buffer_position: int
    transfer_status: int
    receipt_status: int
    transfer_type: int
    cashable_cents: int
    restricted_cents: int
    nonrestricted_cents: int
    transfer_flags: int
    asset_number: int
    transaction_id: str
    extra: bytes = b""  # date, time, expiration, pool ID, cumulative meters (as sent)

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @property
    def status(self) -> AftTransferStatus | None:
        try:
            return AftTransferStatus(self.transfer_status)
        except ValueError:
            return None

    def body(self) -> bytes:
        tid = _ascii(self.transaction_id, None, "transaction ID")
        if len(tid) > 20:
            raise FieldError("transaction ID is at most 20 characters")
        return (
            bytes(
                (
                    _byte(self.buffer_position, "buffer position"),
                    _byte(self.transfer_status, "transfer status"),
                    _byte(self.receipt_status, "receipt status"),
                    _byte(self.transfer_type, "transfer type"),
                )
            )
            + _transfer_fields(self)
            + bytes((len(tid),))
            + tid
            + bytes(self.extra)
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        if len(body) < 25 or len(body) < 25 + body[24]:
            raise LengthError(f"LP 72 reply body too short ({len(body)} bytes)", body)
        tid_end = 25 + body[24]
        return cls(
            addr,
            buffer_position=body[0],
            transfer_status=body[1],
            receipt_status=body[2],
            transfer_type=body[3],
            **_read_transfer_fields(body, 4),
            transaction_id=_text(body[25:tid_end], "transaction ID"),
            extra=bytes(body[tid_end:]),
        )


@dataclass(frozen=True, slots=True)
class AftLockRequest(LongPoll):
    """LP 74: lock the EGM for a transfer (00), cancel (80) or just ask (FF)."""

    CODE: ClassVar[int] = 0x74
    lock_code: int = AftLockCode.INTERROGATE
    transfer_condition: int = 0
    lock_timeout_cs: int = 0  # hundredths of a second, 2 BCD

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    def body(self) -> bytes:
        return bytes(
            (
                _byte(self.lock_code, "lock code"),
                _byte(self.transfer_condition, "transfer condition"),
            )
        ) + bcd_encode(self.lock_timeout_cs, 2)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        _need(body, 4, "LP 74")
        return cls(addr, body[0], body[1], bcd_decode(body[2:4]))


_STATUS_BODY = 35


@dataclass(frozen=True, slots=True)
class AftStatusReply(DataReply):
    """LP 74 reply: lock status, what transfers are possible, the credits on the EGM."""

    CODE: ClassVar[int] = 0x74
    asset_number: int
    game_lock_status: int
    available_transfers: int
    host_cashout_status: int
    aft_status: int
    max_buffer_index: int
    cashable_cents: int
    restricted_cents: int
    nonrestricted_cents: int
    transfer_limit_cents: int
    restricted_expiration: int
    restricted_pool_id: int

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @property
    def locked(self) -> bool:
        return self.game_lock_status == AftLockStatus.LOCKED

    def body(self) -> bytes:
        if not 0 <= self.asset_number <= 0xFFFFFFFF or not 0 <= self.restricted_pool_id <= 0xFFFF:
            raise FieldError("asset number must fit 4 bytes and pool ID 2 bytes")
        return (
            self.asset_number.to_bytes(4, "little")
            + bytes(
                _byte(v, n)
                for v, n in (
                    (self.game_lock_status, "game lock status"),
                    (self.available_transfers, "available transfers"),
                    (self.host_cashout_status, "host cashout status"),
                    (self.aft_status, "AFT status"),
                    (self.max_buffer_index, "max buffer index"),
                )
            )
            + _amount(self.cashable_cents, "cashable amount")
            + _amount(self.restricted_cents, "restricted amount")
            + _amount(self.nonrestricted_cents, "non-restricted amount")
            + _amount(self.transfer_limit_cents, "transfer limit")
            + bcd_encode(self.restricted_expiration, 4)
            + self.restricted_pool_id.to_bytes(2, "little")
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, _STATUS_BODY, "LP 74 reply")
        return cls(
            addr,
            asset_number=int.from_bytes(body[0:4], "little"),
            game_lock_status=body[4],
            available_transfers=body[5],
            host_cashout_status=body[6],
            aft_status=body[7],
            max_buffer_index=body[8],
            cashable_cents=bcd_decode(body[9:14]),
            restricted_cents=bcd_decode(body[14:19]),
            nonrestricted_cents=bcd_decode(body[19:24]),
            transfer_limit_cents=bcd_decode(body[24:29]),
            restricted_expiration=bcd_decode(body[29:33]),
            restricted_pool_id=int.from_bytes(body[33:35], "little"),
        )
