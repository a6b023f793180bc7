"""AFT (Advanced Funds Transfer) long polls 72 and 74: credit loading without LP 8C.

Host-timed tournament fallback (EGMs whose LP A0 reply clears the tournament bit):

1. ``AftLockRequest`` (LP 74, lock code 00, condition "transfer to machine") and wait for
   ``AftStatusReply.game_lock_status == LOCKED``;
2. ``AftTransfer`` (LP 72, transfer type 00 in-house to machine) of the starting credits
   as **restricted** credits only (cashable and non-restricted amounts 0) with a pool ID and
   an expiration: restricted credits can be played but never cashed out (T12, T18);
3. unlock with ``Startup`` (LP 02) at the heat start; at the end ``Shutdown`` (LP 01),
   score from ``SendCurrentCredits`` (LP 1A), then sweep every credit back with an
   ``AftTransfer`` of type 80 (in-house from machine to host), since a win on restricted
   play lands on the cashable meter of a real EGM.

Amounts on the wire are cents (5 BCD bytes); the caller converts credits x denomination.
Field layouts follow SAS 6.02 section 8 as we read it, the LP 72 reply's trailing fields
(date and time, expiration, pool ID, cumulative meters) included.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import ClassVar, Protocol

from protocols.sas.bcd import bcd_decode, bcd_encode
from protocols.sas.errors import FieldError, LengthError
from protocols.sas.messages import (
    DataReply,
    LongPoll,
    _ascii,
    _byte,
    _check_addr,
    _check_wall_clock,
    _decode_datetime,
    _encode_datetime,
    _need,
    _text,
)


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
    """LP 72 transfer status (SAS 6.02 §8, table "transfer status codes").

    The high bits give the class: ``000xxxxx`` done, ``010xxxxx`` pending (interrogate
    again), ``100xxxxx`` failed, ``110xxxxx`` not compatible with the EGM's state; FF is
    "no transfer information" (an interrogation before any transfer, or the index
    asked for holds none).  A code outside this list is classed by its high bits
    (:func:`transfer_outcome`)."""

    FULL_TRANSFER_OK = 0x00
    PARTIAL_TRANSFER_OK = 0x01
    PENDING = 0x40
    CANCELLED_BY_HOST = 0x80
    DUPLICATE_TRANSACTION_ID = 0x81  # same ID as a transfer already in the history
    INVALID_FUNCTION = 0x82  # unsupported type, amount or index
    INVALID_AMOUNT_OR_EXPIRATION = 0x83  # non-BCD amount, expiration not valid
    AMOUNT_EXCEEDS_LIMIT = 0x84
    AMOUNT_NOT_MULTIPLE_OF_DENOMINATION = 0x85
    PARTIAL_NOT_POSSIBLE = 0x86  # EGM cannot do partial transfers to the host
    UNABLE_TO_TRANSFER_NOW = 0x87  # door open, tilt, disabled, cash out in progress ...
    NOT_REGISTERED = 0x88
    REGISTRATION_KEY_MISMATCH = 0x89
    NO_POS_ID = 0x8A
    NO_WON_CREDITS = 0x8B  # no won credits available for cash out
    NO_DENOMINATION = 0x8C  # no denomination set: cannot convert cents to credits
    EXPIRATION_NOT_VALID_FOR_TICKET = 0x8D
    TICKET_DEVICE_UNAVAILABLE = 0x8E
    RESTRICTED_POOL_MISMATCH = 0x8F  # restricted credits from another pool are on the EGM
    RECEIPT_DEVICE_UNAVAILABLE = 0x90
    INSUFFICIENT_RECEIPT_DATA = 0x91
    RECEIPT_NOT_ALLOWED = 0x92
    ASSET_NUMBER_MISMATCH = 0x93  # asset number zero or not this EGM's
    NOT_LOCKED = 0x94  # the transfer asked for a lock that is not in place
    INVALID_TRANSACTION_ID = 0x95
    UNEXPECTED_ERROR = 0x9F
    NOT_COMPATIBLE_WITH_CURRENT_TRANSFER = 0xC0
    UNSUPPORTED_TRANSFER_CODE = 0xC1
    NO_INFORMATION = 0xFF


class TransferOutcome(enum.Enum):
    """What a host does with a transfer status: stop (done or failed) or ask again."""

    DONE = "done"
    PENDING = "pending"
    FAILED = "failed"
    INCOMPATIBLE = "incompatible"  # 110xxxxx: the EGM's state, not the request
    NO_INFORMATION = "no information"


def transfer_outcome(status: int) -> TransferOutcome:
    """The class of an LP 72 status byte (its high three bits; FF on its own)."""
    if status == AftTransferStatus.NO_INFORMATION:
        return TransferOutcome.NO_INFORMATION
    high = status & 0xE0
    if high == 0x00:
        return TransferOutcome.DONE
    if high == 0x40:
        return TransferOutcome.PENDING
    if high == 0xC0:
        return TransferOutcome.INCOMPATIBLE
    return TransferOutcome.FAILED


def describe_transfer_status(status: int) -> str:
    """``"93 asset number mismatch"``: the code and its name, for refusals and logs."""
    try:
        name = AftTransferStatus(status).name.lower().replace("_", " ")
    except ValueError:
        name = f"unlisted ({transfer_outcome(status).value})"
    return f"{status:02X} {name}"


class AftReceiptStatus(enum.IntEnum):
    PRINTED = 0x00
    PRINTING = 0x20
    PENDING = 0x40
    NO_RECEIPT = 0xFF


class AftLockCode(enum.IntEnum):
    REQUEST_LOCK = 0x00
    CANCEL_LOCK = 0x80
    INTERROGATE = 0xFF


class AftLockStatus(enum.IntEnum):
    LOCKED = 0x00
    LOCK_PENDING = 0x40
    NOT_LOCKED = 0xFF


# LP 74 transfer condition (host) and available transfers (EGM) share bits 0-1.
TRANSFER_TO_MACHINE_OK = 0x01  # bit 0
TRANSFER_FROM_MACHINE_OK = 0x02  # bit 1
TRANSFER_TO_PRINTER_OK = 0x04  # bit 2
BONUS_TO_MACHINE_OK = 0x08  # transfer condition bit 3
# LP 74 reply, AFT status byte
AFT_STATUS_PRINTER_AVAILABLE = 0x01
AFT_STATUS_PARTIAL_TO_HOST = 0x02
AFT_STATUS_CUSTOM_TICKET_DATA = 0x04
AFT_STATUS_REGISTERED = 0x08
AFT_STATUS_IN_HOUSE_ENABLED = 0x10
AFT_STATUS_BONUS_ENABLED = 0x20
AFT_STATUS_DEBIT_ENABLED = 0x40
AFT_STATUS_ANY_ENABLED = 0x80


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


_METER_WIDTH = 5  # BCD bytes we send for each cumulative meter (SAS allows 0..9)


def _meter(value: int, name: str) -> bytes:
    """A cumulative meter as SAS 6.02 sends it: its size in bytes, then that many BCD."""
    return bytes((_METER_WIDTH,)) + _amount(value, name)


def _read_meters(tail: bytes, at: int) -> list[int]:
    """The three size-prefixed cumulative meters from ``tail[at:]``, which they must fill."""
    values = []
    for name in ("cashable", "restricted", "non-restricted"):
        if at >= len(tail) or tail[at] > 9:
            raise LengthError(f"LP 72 reply: cumulative {name} meter size missing or > 9", tail)
        size = tail[at]
        if at + 1 + size > len(tail):
            raise LengthError(f"LP 72 reply: cumulative {name} meter cut short", tail)
        values.append(bcd_decode(tail[at + 1 : at + 1 + size]))
        at += 1 + size
    if at != len(tail):
        raise LengthError(f"LP 72 reply: {len(tail) - at} bytes after the meters", tail)
    return values


_NO_DATE = bytes(7)  # MMDDYYYY HHMMSS all zero: no transaction, no date


@dataclass(frozen=True, slots=True)
class AftTransferReply(DataReply):
    """LP 72 reply (SAS 6.02): where the transfer stands, the amounts moved, its
    transaction ID, then when it was done, its expiration and pool ID, and the EGM's
    cumulative AFT meters (cents moved to it so far, by credit kind).

    Body: position, status, receipt status, type, amounts and flags and asset (20),
    ID length and ID, date MMDDYYYY (4 BCD) and time HHMMSS (3 BCD), expiration
    (4 BCD), pool ID (2 binary), then each cumulative meter as a size byte and that many
    BCD bytes.  A zero date and time (no transfer yet) is ``transaction_at=None``.

    Decoding also takes the bare ``position FF`` body some EGMs send when they hold no
    transfer information, and a body that ends after the transaction ID (pre-6.02); the
    missing fields are then zero."""

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
    transaction_at: dt.datetime | None = None  # EGM wall clock, no time zone
    expiration: int = 0  # MMDDYYYY, or 0000NNNN = days
    pool_id: int = 0
    cumulative_cashable_cents: int = 0
    cumulative_restricted_cents: int = 0
    cumulative_nonrestricted_cents: int = 0

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @property
    def status(self) -> AftTransferStatus | None:
        try:
            return AftTransferStatus(self.transfer_status)
        except ValueError:
            return None

    @classmethod
    def no_information(cls, addr: int, buffer_position: int = 0) -> AftTransferReply:
        """The answer to an interrogation when the EGM holds no transfer at that position
        (status FF): every other field zero, no receipt, an empty transaction ID."""
        return cls(
            addr,
            buffer_position=buffer_position,
            transfer_status=AftTransferStatus.NO_INFORMATION,
            receipt_status=0xFF,
            transfer_type=0,
            cashable_cents=0,
            restricted_cents=0,
            nonrestricted_cents=0,
            transfer_flags=0,
            asset_number=0,
            transaction_id="",
        )

    def body(self) -> bytes:
        tid = _ascii(self.transaction_id, None, "transaction ID")
        if len(tid) > 20:
            raise FieldError("transaction ID is at most 20 characters")
        if self.transaction_at is None:
            when = _NO_DATE
        else:
            _check_wall_clock(self.transaction_at)
            when = _encode_datetime(self.transaction_at)
        if not isinstance(self.pool_id, int) or not 0 <= self.pool_id <= 0xFFFF:
            raise FieldError(f"pool ID must fit 2 bytes, not {self.pool_id!r}")
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
            + when
            + bcd_encode(self.expiration, 4)
            + self.pool_id.to_bytes(2, "little")
            + _meter(self.cumulative_cashable_cents, "cumulative cashable meter")
            + _meter(self.cumulative_restricted_cents, "cumulative restricted meter")
            + _meter(self.cumulative_nonrestricted_cents, "cumulative non-restricted meter")
        )

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        if 2 <= len(body) < 25 and body[1] == AftTransferStatus.NO_INFORMATION:
            return cls.no_information(addr, body[0])
        if len(body) < 25 or len(body) < 25 + body[24]:
            raise LengthError(f"LP 72 reply body too short ({len(body)} bytes)", body)
        tid_end = 25 + body[24]
        tail = bytes(body[tid_end:])
        when: dt.datetime | None = None
        expiration = pool_id = 0
        meters = [0, 0, 0]
        if tail:
            if len(tail) < 13:
                raise LengthError("LP 72 reply: date, time, expiration or pool ID cut short", tail)
            meters = _read_meters(tail, 13)
            when = None if tail[:7] == _NO_DATE else _decode_datetime(tail[:7])
            expiration = bcd_decode(tail[7:11])
            pool_id = int.from_bytes(tail[11:13], "little")
        return cls(
            addr,
            buffer_position=body[0],
            transfer_status=body[1],
            receipt_status=body[2],
            transfer_type=body[3],
            **_read_transfer_fields(body, 4),
            transaction_id=_text(body[25:tid_end], "transaction ID"),
            transaction_at=when,
            expiration=expiration,
            pool_id=pool_id,
            cumulative_cashable_cents=meters[0],
            cumulative_restricted_cents=meters[1],
            cumulative_nonrestricted_cents=meters[2],
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
