"""SAS exception codes: the one-byte answers to a general poll (sas.md §4).

Exception 8C ("game selected") has nothing to do with long poll 8C, and there is no
tournament start/end exception: tournament state is known from ACKs and polls.
The AFT codes 69-6E are SAS 6.02's (§8), beyond sas.md §4's list.
"""

from __future__ import annotations

import enum


class SasException(enum.IntEnum):
    NO_ACTIVITY = 0x00
    SLOT_DOOR_OPENED = 0x11
    SLOT_DOOR_CLOSED = 0x12
    DROP_DOOR_OPENED = 0x13
    DROP_DOOR_CLOSED = 0x14
    CARD_CAGE_OPENED = 0x15
    CARD_CAGE_CLOSED = 0x16
    AC_POWER_APPLIED = 0x17
    AC_POWER_LOST = 0x18
    CASHBOX_DOOR_OPENED = 0x19
    CASHBOX_DOOR_CLOSED = 0x1A
    CASHBOX_REMOVED = 0x1B
    CASHBOX_INSTALLED = 0x1C
    BELLY_DOOR_OPENED = 0x1D
    BELLY_DOOR_CLOSED = 0x1E
    NO_ACTIVITY_WAITING_FOR_PLAYER = 0x1F
    GENERAL_TILT = 0x20
    OPERATOR_CHANGED_OPTIONS = 0x3C
    HANDPAY_PENDING = 0x51
    HANDPAY_RESET = 0x52
    AFT_TRANSFER_COMPLETE = 0x69
    AFT_REQUEST_HOST_CASHOUT = 0x6A
    AFT_REQUEST_HOST_CASHOUT_WIN = 0x6B
    AFT_REQUEST_TO_REGISTER = 0x6C
    AFT_REGISTRATION_ACKNOWLEDGED = 0x6D
    AFT_REGISTRATION_CANCELLED = 0x6E
    GAME_LOCKED = 0x6F  # also: an AFT lock that was pending is now granted
    EXCEPTION_BUFFER_OVERFLOW = 0x70
    GAME_STARTED = 0x7E
    GAME_ENDED = 0x7F
    GAME_SELECTED = 0x8C
    OPERATOR_MENU_ENTERED = 0x84
    OPERATOR_MENU_EXITED = 0x85
    OUT_OF_SERVICE = 0x86


def describe_exception(code: int) -> str:
    """Human name of an exception code; unknown codes are named by their hex value."""
    try:
        return SasException(code).name.lower().replace("_", " ")
    except ValueError:
        return f"exception {code:02X}"
