"""The one interface through which the gateway talks to a slot machine.

SAS (serial or TCP through an interface board) and MQTT (networked interface boards)
are two implementations.  Everything above this line — banks, heats, recovery — is
protocol-agnostic and sees only these methods, values and exceptions.

Exceptions are split by what the caller should do:

* :class:`LinkTimeout` / :class:`LinkDown` — transient; retry (tenacity) and, if it
  persists through a heat, treat the machine as malfunctioned (T20).
* :class:`MachineRefused` — the machine answered but would not do it (NACK, busy past
  the retry budget, cashable credits on the meter, door open ...).  Not retried blindly.
* :class:`ProtocolFault` — garbage on the link; retryable like a timeout.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from gateway.scores import HeatScore


class DriverError(Exception):
    """Base of every error a machine driver raises."""


class LinkTimeout(DriverError):
    """No (complete) reply in time."""


class LinkDown(DriverError):
    """The link to the machine or its board is gone (socket closed, board offline)."""


class ProtocolFault(DriverError):
    """Bytes or payloads that do not form a valid reply (bad CRC, wrong length, ...)."""


class MachineRefused(DriverError):
    """The machine answered but refused the command."""


TRANSIENT_ERRORS: tuple[type[DriverError], ...] = (LinkTimeout, LinkDown, ProtocolFault)


class TournamentSupport(enum.Enum):
    NATIVE = "native"  # SAS LP 8C / board command: the EGM runs the timer and meters
    HOST_TIMED = "host-timed"  # the gateway locks, loads credits, times and scores


@dataclass(frozen=True, slots=True)
class MachineIdentity:
    game_id: str
    additional_id: str
    denomination_code: int
    max_bet: int
    paytable_id: str
    base_percent: str
    protocol_version: str
    serial_number: str
    tournament: TournamentSupport


class MachineEventKind(enum.Enum):
    """Events every driver reports in the same vocabulary (from SAS exceptions,
    MQTT board events or SNMP traps)."""

    DOOR_OPENED = "door-opened"
    DOOR_CLOSED = "door-closed"
    POWER_LOST = "power-lost"
    POWER_APPLIED = "power-applied"
    TILT = "tilt"
    HANDPAY_PENDING = "handpay-pending"
    HANDPAY_RESET = "handpay-reset"
    GAME_STARTED = "game-started"
    GAME_ENDED = "game-ended"
    LINK_DOWN = "link-down"
    LINK_UP = "link-up"
    OPERATOR_MENU = "operator-menu"
    OUT_OF_SERVICE = "out-of-service"
    QUEUE_OVERFLOW = "queue-overflow"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class MachineEvent:
    machine_id: str
    kind: MachineEventKind
    at: datetime
    code: int | None = None  # the protocol's own code (SAS exception byte), for the record


@runtime_checkable
class MachineDriver(Protocol):
    """An open link to one machine.  All methods are coroutines safe to retry."""

    machine_id: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def identity(self) -> MachineIdentity: ...

    async def credits(self) -> int:
        """Credits currently on the machine's credit meter."""
        ...

    async def lock(self) -> None:
        """Disable play (SAS LP 01); a game in progress completes first."""
        ...

    async def unlock(self) -> None:
        """Enable play (SAS LP 02)."""
        ...

    async def enter_tournament(self, credits: int, seconds: int) -> None:
        """Put the machine in tournament mode with ``credits`` and a ``seconds`` timer.

        On a HOST_TIMED machine the driver loads the credits itself and the timer is
        the gateway's alone.  The machine stays locked; :meth:`unlock` starts play.
        """
        ...

    async def exit_tournament(self) -> None: ...

    async def heat_score(self) -> HeatScore: ...

    async def read_clock(self) -> datetime: ...

    async def set_clock(self, when: datetime) -> None: ...

    async def poll_events(self) -> list[MachineEvent]:
        """Drain pending events (SAS general poll until 00; MQTT: the queued events)."""
        ...
