"""AFT registration, long poll 73: the host registers itself as the EGM's AFT host.

Theory of operation (SAS 6.02 §8, as we read it).  An EGM accepts funds transfers from
the host that registered with it: that host's registration key (20 bytes) and POS ID
(4 bytes) are kept in its NV memory together with its own asset number.  A transfer
(LP 72) must then carry the EGM's asset number (status 93 otherwise; 0 is never an
asset number) and, on a machine that checks it, the same registration key (89).

Registration codes (host -> EGM):

====  ===================================  ==========================================
00    initialize registration              the EGM forgets any host, reports "ready"
01    register gaming machine              with asset number, key, POS ID
40    request operator acknowledgement     as 01, the attendant confirms at the EGM
80    unregister gaming machine            code only
FF    read current registration            code only: status, asset, key, POS ID
====  ===================================  ==========================================

Registration status (EGM -> host): 00 registration ready, 01 registered, 40 pending
(waiting for the operator's acknowledgement at the machine), 80 not registered.  A host
registers with 00 then 01 (or 40), and reads FF back.  The reply always carries the EGM's
own asset number, so FF is also how a host learns it (LP 74 reports it as well).

Frames: host ``addr 73 len code [asset(4) key(20) posID(4)] CRC``, ``len`` = 01 for codes
80 and FF, 1D otherwise; reply ``addr 73 1D status asset(4) key(20) posID(4) CRC``.
Asset number and POS ID are binary, least significant byte first (sas.md §1).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from protocols.sas.errors import FieldError, LengthError
from protocols.sas.messages import DataReply, LongPoll, _byte, _check_addr, _need

REGISTRATION_KEY_BYTES = 20
NO_KEY = bytes(REGISTRATION_KEY_BYTES)
"""The all-zero key: what a host without one sends (real EGMs refuse it for transfers)."""


class AftRegistrationCode(enum.IntEnum):
    INITIALIZE = 0x00
    REGISTER = 0x01
    REQUEST_OPERATOR_ACK = 0x40
    UNREGISTER = 0x80
    READ = 0xFF


class AftRegistrationStatus(enum.IntEnum):
    READY = 0x00
    REGISTERED = 0x01
    PENDING = 0x40  # waiting for the operator's acknowledgement at the EGM
    NOT_REGISTERED = 0x80


_CODE_ONLY = frozenset((AftRegistrationCode.UNREGISTER, AftRegistrationCode.READ))
_FULL_BODY = 1 + 4 + REGISTRATION_KEY_BYTES + 4


def _u32(value: int, name: str) -> bytes:
    if not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise FieldError(f"{name} must fit 4 bytes (0..4294967295), not {value!r}")
    return value.to_bytes(4, "little")


def _key(key: bytes) -> bytes:
    if not isinstance(key, bytes | bytearray) or len(key) != REGISTRATION_KEY_BYTES:
        raise FieldError(f"registration key must be {REGISTRATION_KEY_BYTES} bytes")
    return bytes(key)


def _fields(asset_number: int, registration_key: bytes, pos_id: int) -> bytes:
    return _u32(asset_number, "asset number") + _key(registration_key) + _u32(pos_id, "POS ID")


def _read_fields(body: bytes) -> tuple[int, bytes, int]:
    """Asset number, key and POS ID from the 28 bytes after the code/status byte."""
    return (
        int.from_bytes(body[1:5], "little"),
        bytes(body[5:25]),
        int.from_bytes(body[25:29], "little"),
    )


@dataclass(frozen=True, slots=True)
class AftRegister(LongPoll):
    """LP 73 from the host.  Codes 80 and FF carry nothing else: their fields must stay 0."""

    CODE: ClassVar[int] = 0x73
    registration_code: int = AftRegistrationCode.READ
    asset_number: int = 0
    registration_key: bytes = NO_KEY
    pos_id: int = 0

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @classmethod
    def read(cls, addr: int) -> AftRegister:
        return cls(addr, AftRegistrationCode.READ)

    def body(self) -> bytes:
        code = _byte(self.registration_code, "registration code")
        fields = _fields(self.asset_number, self.registration_key, self.pos_id)
        if code in _CODE_ONLY:
            if fields != bytes(28):
                raise FieldError(f"LP 73 code {code:02X} carries no asset number, key or POS ID")
            return bytes((code,))
        return bytes((code,)) + fields

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> LongPoll:
        if not body:
            raise LengthError("LP 73: no registration code", body)
        if body[0] in _CODE_ONLY:
            # Some hosts pad FF/80 to the full length: the fields mean nothing there.
            if len(body) not in (1, _FULL_BODY):
                raise LengthError(f"LP 73 code {body[0]:02X}: 1 or 29 bytes, not {len(body)}")
            return cls(addr, body[0])
        _need(body, _FULL_BODY, f"LP 73 code {body[0]:02X}")
        asset, key, pos = _read_fields(body)
        return cls(addr, body[0], asset, key, pos)


@dataclass(frozen=True, slots=True)
class AftRegistrationReply(DataReply):
    """LP 73 reply: registration status, the EGM's asset number, the key and POS ID of
    the host it is registered to (zeros when none)."""

    CODE: ClassVar[int] = 0x73
    registration_status: int
    asset_number: int
    registration_key: bytes = NO_KEY
    pos_id: int = 0

    def __post_init__(self) -> None:
        _check_addr(self.addr, 1)
        self.body()

    @property
    def status(self) -> AftRegistrationStatus | None:
        try:
            return AftRegistrationStatus(self.registration_status)
        except ValueError:
            return None

    @property
    def registered(self) -> bool:
        return self.registration_status == AftRegistrationStatus.REGISTERED

    def body(self) -> bytes:
        status = _byte(self.registration_status, "registration status")
        return bytes((status,)) + _fields(self.asset_number, self.registration_key, self.pos_id)

    @classmethod
    def from_body(cls, addr: int, code: int, body: bytes) -> DataReply:
        _need(body, _FULL_BODY, "LP 73 reply")
        asset, key, pos = _read_fields(body)
        return cls(addr, body[0], asset, key, pos)


def describe_registration_status(status: int) -> str:
    """``"80 not registered"``: code and name, for preflight reasons and logs."""
    try:
        name = AftRegistrationStatus(status).name.lower().replace("_", " ")
    except ValueError:
        name = "unlisted"
    return f"{status:02X} {name}"
