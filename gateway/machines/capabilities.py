"""Optional abilities a :class:`~gateway.machines.driver.MachineDriver` may have.

The heat runner asks ``isinstance(driver, PreparedUnlock)`` and so on (all
``runtime_checkable``); a driver declares an ability simply by implementing its members,
as :class:`gateway.machines.sas.SasDriver` does.  A driver without one is driven the
plain way, so every ability is an optimisation or an extra reading, never a requirement.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable

from gateway.scores import TournamentMeters

Trigger = Callable[[], Awaitable[None]]
"""Sends a prepared command at once (synchronously) and returns an awaitable for its ACK."""


@runtime_checkable
class PreparedUnlock(Protocol):
    def prepare_unlock(self) -> Trigger:
        """Frame the unlock ahead; raise a DriverError (nothing sent) if the link is not ready."""
        ...


@runtime_checkable
class PreparedLock(Protocol):
    def prepare_lock(self) -> Trigger:
        """Frame the lock ahead, like :meth:`PreparedUnlock.prepare_unlock`."""
        ...


@runtime_checkable
class PreparedCommands(PreparedUnlock, PreparedLock, Protocol):
    """Both: the bank starts and stops in one tight loop of sends (least skew)."""


@runtime_checkable
class QuirkReporter(Protocol):
    def quirks(self) -> list[str]:
        """What the machine did that its protocol does not say and the driver tolerated
        (a display field kept as received, bytes after a reply), each once, as seen so far
        on this driver's link (docs/sas.md, real machines).  Never a blocker."""
        ...


@runtime_checkable
class TournamentMeterReader(Protocol):
    async def tournament_meters(self) -> TournamentMeters:
        """The tournament meters alone (SAS LP 99): one poll; MachineRefused if there are none."""
        ...


@runtime_checkable
class LiveCredits(Protocol):
    """A driver whose machine can report each game's bet and win as it happens (SAS
    real-time event reporting, LP 0E): the heat's live credit display then follows from
    the event polls alone, with no meter read per change.  Only the live display: a
    seat's score is still read from the meters at the heat's end."""

    async def start_live_credits(self) -> bool:
        """Turn the reporting on and read the credit meter once, as the base the games'
        bets and wins move; False when the machine cannot (read :meth:`credits` then)."""
        ...

    def live_credits(self) -> int | None:
        """The credit meter as of the events drained so far; None while it is not known
        (reporting off, or events lost): read the meter."""
        ...

    def follow_live_credits(self, listener: Callable[[int], None] | None) -> None:
        """Call ``listener`` with the live credits each time an event moves them, as the
        event is read (mid-drain: a game's win is shown one poll after its bet, not when
        the drain ends); None stops it.  One listener at a time."""
        ...


@runtime_checkable
class PacedLink(Protocol):
    """A driver that spaces its own polls (SAS: at least 200 ms between polls to a machine,
    40 ms while it reports in real time)."""

    @property
    def min_spacing(self) -> float:
        """The gap kept now between two polls to the machine (seconds)."""
        ...


def min_spacing(driver: object) -> float:
    """The driver's own gap between two polls, 0 for an unpaced driver."""
    return float(driver.min_spacing) if isinstance(driver, PacedLink) else 0.0


@dataclass(frozen=True, slots=True)
class AftRegistration:
    """Where a machine stands as our funds-transfer (SAS AFT) host, after
    :meth:`AftRegistrar.register_aft`: its asset number, and either registered to us
    (``registered``, ``pos_id`` ours) or the reason it is not, for a preflight blocker."""

    asset_number: int
    registered: bool
    status: str  # "registered" | "refused" | "pending" | "not configured"
    pos_id: int | None = None
    reason: str | None = None


@runtime_checkable
class AftRegistrar(Protocol):
    """A driver that moves a host-timed heat's credits by funds transfer and must first be
    registered as the machine's transfer host (SAS LP 73)."""

    def use_aft_host(self, registration_key: str, pos_id: int) -> None:
        """The floor's registration key (40 hex digits) and POS ID for this machine."""
        ...

    async def register_aft(self) -> AftRegistration:
        """Read the machine's asset number and registration, registering it to us if it is
        not; a refusal is a result (with its reason), link trouble a DriverError."""
        ...


@runtime_checkable
class HeatBaseline(Protocol):
    """A driver that scores a heat from meter differences since tournament entry
    (host-timed SAS): the runner journals the entry meters and hands them back to a
    driver that did not see the entry (a restarted gateway)."""

    def heat_baseline(self) -> dict[str, int] | None:
        """The meters read at entry, as plain integers (None: no entry seen)."""
        ...

    def restore_heat_baseline(self, baseline: dict[str, int]) -> None:
        """Take a journaled baseline (ignored if this driver saw the entry itself)."""
        ...


@dataclass(frozen=True, slots=True)
class LinkCounters:
    """One machine link's traffic since the gateway opened it; every field only grows.

    ``polls`` are requests sent (SAS polls, MQTT commands); ``replies`` those answered;
    ``timeouts`` tries that got no reply in time; ``nacks`` tries the machine refused at
    the link level (SAS NACK, a board's refused or bad-request reply); ``retries`` the
    repeats sent; ``failures`` requests given up after every try.
    """

    polls: int = 0
    replies: int = 0
    timeouts: int = 0
    nacks: int = 0
    retries: int = 0
    failures: int = 0

    def __add__(self, other: LinkCounters) -> LinkCounters:
        theirs = asdict(other)
        return LinkCounters(**{name: mine + theirs[name] for name, mine in asdict(self).items()})


@runtime_checkable
class CountedLink(Protocol):
    """A driver that keeps :class:`LinkCounters` (read at a metrics scrape, never pushed)."""

    def link_counters(self) -> LinkCounters: ...


@runtime_checkable
class ConnectedLink(Protocol):
    """A driver that knows whether its connection to the machine (or its board) is up."""

    def link_connected(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class PrizeMachineState:
    """What a machine says of itself before a prize is credited to it (docs/rules.md#p3):
    whether it takes AFT credits from us (and why not), whether transfers to it are
    possible now, whether a game or a transfer is under way, and its transfer limit."""

    aft: bool
    locked: bool
    busy: bool
    in_tournament: bool = False
    limit_cents: int | None = None
    why_not_aft: str | None = None


@dataclass(frozen=True, slots=True)
class PrizeTransferResult:
    """What the machine said of one prize transfer, by its transaction ID: ``reading`` is
    one of ``done``, ``refused``, ``pending``, ``not seen`` (its last transfer is another,
    or none), ``duplicate`` (the ID is already in its history) or ``odd`` (done for
    another amount); ``egm_status`` the status byte (SAS LP 72), ``detail`` one line."""

    reading: str
    egm_status: int | None
    detail: str


@runtime_checkable
class PrizeTransfers(Protocol):
    """A driver that can credit a prize to its machine as promotional credits (SAS AFT)
    under a transaction ID the caller journaled first, and read that transfer back."""

    async def prize_state(self) -> PrizeMachineState: ...

    async def credit_prize(
        self, transaction_id: str, cents: int, expiration_days: int
    ) -> PrizeTransferResult: ...

    async def read_prize_transfer(self, transaction_id: str, cents: int) -> PrizeTransferResult: ...
