"""An emulated slot machine (EGM): the one truth behind every protocol face.

No protocol imports here.  The SAS, MQTT and SNMP faces are thin adapters that call
these methods and listen to :class:`ModelEvent` notifications, so a test can check
one machine through three protocols.

Time is injected: every method that depends on time takes it from ``self.clock`` (a
monotonic seconds function) so tests drive timers without sleeping.

A game may take time (``game_seconds`` > 0): the bet is wagered at the press, the result
lands when :meth:`tick` sees the game's time out.  A host lock (SAS LP 01) during a game
does not abort it: the game completes first (``shared/reference/sas.md`` §3).  With
``game_seconds == 0`` (the default) a spin is over as soon as it is pressed.

Tournament mode follows the regulators' common rules (``shared/reference/sas.md`` §5):
entry is refused while cashable credits are on the meter or a game, handpay, tilt or
open door is pending; tournament credits have no cash value (no cash-out, no bills);
the live accounting meters are untouched and separate tournament meters are kept.
The timer starts when play is first enabled after entry, and expiry locks play (the
machine's own backstop; the gateway's clock is the authority).
"""

from __future__ import annotations

import enum
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


class MachineRefusal(Exception):
    """The machine will not do what was asked, in its current state."""


class Event(enum.Enum):
    SLOT_DOOR_OPENED = "slot-door-opened"
    SLOT_DOOR_CLOSED = "slot-door-closed"
    POWER_LOST = "power-lost"
    POWER_APPLIED = "power-applied"
    TILT = "tilt"
    TILT_CLEARED = "tilt-cleared"
    HANDPAY_PENDING = "handpay-pending"
    HANDPAY_RESET = "handpay-reset"
    GAME_STARTED = "game-started"
    GAME_ENDED = "game-ended"
    PLAY_LOCKED = "play-locked"
    PLAY_ENABLED = "play-enabled"
    TOURNAMENT_ENTERED = "tournament-entered"
    TOURNAMENT_EXITED = "tournament-exited"
    TOURNAMENT_TIME_UP = "tournament-time-up"
    CREDITS_CHANGED = "credits-changed"


@dataclass(frozen=True, slots=True)
class ModelEvent:
    """A notification from the machine model to its protocol faces (not the gateway's
    ``gateway.machines.driver.MachineEvent``, which is what a driver reports to the heat)."""

    event: Event
    at: float  # machine clock (monotonic seconds)


@dataclass(frozen=True, slots=True)
class SpinResult:
    bet: int
    win: int
    stops: tuple[int, ...]
    credits_after: int


# Three reels of symbols; a line pays when all three stops show the same symbol.
# The strip and pays give a base return of about 92.5 % (see tests/emulators).
_REEL = ("CH", "BAR", "--", "7", "BAR", "CH", "BELL", "CH", "BAR", "--", "BELL", "CH")
_PAYS = {"CH": 8, "BAR": 20, "BELL": 40, "7": 100}
_CHERRY_ANY_TWO = 1  # two cherries on the first two reels return the bet


@dataclass(frozen=True, slots=True)
class _PendingGame:
    win: int
    ends_at: float  # machine clock


@dataclass(slots=True)
class AccountingMeters:
    """Live accounting meters (SAS LP 0F / 1C).  Tournament play never moves them."""

    cancelled_credits: int = 0
    coin_in: int = 0
    coin_out: int = 0
    drop: int = 0
    jackpot: int = 0
    games_played: int = 0
    games_won: int = 0
    slot_door_opened: int = 0
    power_resets: int = 0


@dataclass(slots=True)
class ModelTournamentMeters:
    """The model's own tournament meters, kept apart from the accounting meters (sas.md
    §5); the faces report them (SAS LP 95-99, MQTT) and the gateway reads them into its
    ``gateway.machines.driver.TournamentMeters``."""

    games_played: int = 0
    games_won: int = 0
    credits_wagered: int = 0
    credits_won: int = 0


@dataclass(slots=True)
class TournamentState:
    credits: int
    seconds: float  # time allowed from the first enabled play (less after a power cut)
    pulses: bool
    started_at: float | None = None  # clock value when play was first enabled
    time_up: bool = False
    meters: ModelTournamentMeters = field(default_factory=ModelTournamentMeters)


@dataclass(slots=True)
class Identity:
    game_id: str = "RG"
    additional_id: str = "001"
    denomination_code: int = 0x01  # SAS denomination code 01 = $0.01
    max_bet: int = 5
    progressive_group: int = 0
    game_options: int = 0
    paytable_id: str = "RG0001"
    base_percent: str = "9000"
    sas_version: str = "602"
    serial_number: str = ""


class EmulatedMachine:
    """One slot machine: reels, credit meter, locks, doors, tilts, power, tournament mode."""

    def __init__(
        self,
        machine_id: str,
        *,
        seed: int = 0,
        tournament_supported: bool = True,
        identity: Identity | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        game_seconds: float = 0.0,
    ) -> None:
        if game_seconds < 0:
            raise ValueError("game_seconds must not be negative")
        self.machine_id = machine_id
        self.game_seconds = game_seconds  # how long a game runs (0: instantaneous)
        self.tournament_supported = tournament_supported
        self.identity = identity or Identity(serial_number=f"EMU-{machine_id}")
        self.clock = clock
        self._wall_clock = wall_clock
        self._clock_offset = timedelta(0)  # set by the host (SAS LP 7F)
        self._rng = random.Random(seed)
        self._listeners: list[Callable[[ModelEvent], None]] = []
        self.cashable_credits = 0
        self.restricted_credits = 0  # non-cashable promo credits (host-timed heats)
        self.meters = AccountingMeters()
        self.play_locked = False  # by the host (SAS LP 01/02)
        self.slot_door_open = False
        self.tilted = False
        self.handpay_pending = False
        self.powered = True
        self.game_in_progress = False
        # The latest game's bet and win, for the protocol faces' reports of its start and
        # end (SAS real-time events 7E / 7F carry them).
        self.last_bet = 0
        self.last_win = 0
        self._game: _PendingGame | None = None  # the game in progress, if it takes time
        self.tournament: TournamentState | None = None
        self.last_tournament_meters = ModelTournamentMeters()

    # -- listeners -------------------------------------------------------------------
    def subscribe(self, listener: Callable[[ModelEvent], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[ModelEvent], None]) -> None:
        self._listeners.remove(listener)

    def _emit(self, event: Event) -> None:
        note = ModelEvent(event, self.clock())
        for listener in list(self._listeners):
            listener(note)

    # -- state queries ---------------------------------------------------------------
    @property
    def coin_in(self) -> int:
        """Credits wagered so far: the tournament's while in tournament mode."""
        t = self.tournament
        return t.meters.credits_wagered if t is not None else self.meters.coin_in

    @property
    def credits(self) -> int:
        """The credit meter a player sees: tournament credits while in tournament mode."""
        if self.tournament is not None:
            return self.tournament.credits
        return self.cashable_credits + self.restricted_credits

    @property
    def in_tournament(self) -> bool:
        return self.tournament is not None

    def tournament_seconds_left(self) -> float | None:
        t = self.tournament
        if t is None:
            return None
        if t.started_at is None:
            return float(t.seconds)
        return max(0.0, t.seconds - (self.clock() - t.started_at))

    def play_enabled(self) -> bool:
        self.tick()
        return (
            self.powered
            and not self.play_locked
            and not self.slot_door_open
            and not self.tilted
            and not self.handpay_pending
            and not (self.tournament is not None and self.tournament.time_up)
        )

    def now(self) -> datetime:
        """The machine's own date and time (the host may set it)."""
        return self._wall_clock() + self._clock_offset

    def set_clock(self, when: datetime) -> None:
        if when.tzinfo is None:
            raise ValueError("machine clock must be set with an aware datetime")
        self._clock_offset = when - self._wall_clock()

    def tick(self) -> None:
        """Advance timers: a game whose time is out ends (its result lands); expiry of
        the tournament timer locks play (the backstop)."""
        game = self._game
        if game is not None and self.powered and self.clock() >= game.ends_at:
            self._game = None
            self._finish(game.win)
        t = self.tournament
        if t is None or t.started_at is None or t.time_up:
            return
        if self.clock() - t.started_at >= t.seconds:
            t.time_up = True
            self._emit(Event.TOURNAMENT_TIME_UP)

    # -- host commands ---------------------------------------------------------------
    def lock_play(self) -> None:
        self._require_power()
        if not self.play_locked:
            self.play_locked = True
            self._emit(Event.PLAY_LOCKED)

    def unlock_play(self) -> None:
        self._require_power()
        if self.play_locked:
            self.play_locked = False
            t = self.tournament
            if t is not None and t.started_at is None:
                t.started_at = self.clock()
            self._emit(Event.PLAY_ENABLED)

    def enter_tournament(self, credits: int, seconds: int, *, pulses: bool = False) -> None:
        """Native tournament mode (SAS LP 8C).  Play stays locked until :meth:`unlock_play`."""
        self._require_power()
        if not self.tournament_supported:
            raise MachineRefusal("tournament mode not supported")
        if credits <= 0 or seconds <= 0:
            raise MachineRefusal("tournament needs positive credits and time")
        if self.tournament is not None:
            if (self.tournament.credits, self.tournament.seconds) == (credits, seconds) and (
                self.tournament.started_at is None
            ):
                return  # a repeated command for the same heat is harmless
            raise MachineRefusal("already in tournament mode")
        self._require_idle_for_tournament()
        self.tournament = TournamentState(credits=credits, seconds=seconds, pulses=pulses)
        self.play_locked = True
        self._emit(Event.TOURNAMENT_ENTERED)

    def exit_tournament(self) -> None:
        self._require_power()
        if self.tournament is None:
            return
        if self.game_in_progress:
            raise MachineRefusal("game in progress")
        self.last_tournament_meters = self.tournament.meters
        self.tournament = None  # tournament credits have no value: they simply vanish
        self._emit(Event.TOURNAMENT_EXITED)

    def tournament_meters(self) -> ModelTournamentMeters:
        t = self.tournament
        return t.meters if t is not None else self.last_tournament_meters

    def transfer_in_restricted(self, amount: int) -> None:
        """Host-timed heats on machines without tournament mode: load non-cashable credits."""
        self._require_power()
        if amount <= 0:
            raise MachineRefusal("transfer amount must be positive")
        if self.tournament is not None:
            raise MachineRefusal("funds transfer disabled in tournament mode")
        if self.cashable_credits:
            raise MachineRefusal("cashable credits on the meter")
        self._require_idle_for_tournament()
        self.restricted_credits += amount
        self._emit(Event.CREDITS_CHANGED)

    def transfer_out_restricted(self) -> int:
        """Host removes the remaining non-cashable credits at the end of a host-timed heat."""
        self._require_power()
        if self.game_in_progress:
            raise MachineRefusal("game in progress")
        amount, self.restricted_credits = self.restricted_credits, 0
        if amount:
            self._emit(Event.CREDITS_CHANGED)
        return amount

    def transfer_out(self, cashable: int, restricted: int) -> None:
        """Host sweeps credits off the machine (a funds transfer to the host) at the end of
        a host-timed heat: wins on restricted play land on the cashable meter, so both
        parts go (T12, T18).  Refused if more is asked than is on the meter."""
        self._require_power()
        if self.game_in_progress:
            raise MachineRefusal("game in progress")
        if not 0 <= cashable <= self.cashable_credits or not (
            0 <= restricted <= self.restricted_credits
        ):
            raise MachineRefusal("transfer amount exceeds the credits on the meter")
        self.cashable_credits -= cashable
        self.restricted_credits -= restricted
        if cashable or restricted:
            self._emit(Event.CREDITS_CHANGED)

    # -- player actions --------------------------------------------------------------
    def insert_bill(self, credits: int) -> None:
        self._require_power()
        if self.tournament is not None:
            raise MachineRefusal("bill acceptor disabled in tournament mode")
        if credits <= 0:
            raise MachineRefusal("bill value must be positive")
        self.cashable_credits += credits
        self.meters.drop += credits
        self._emit(Event.CREDITS_CHANGED)

    def cash_out(self) -> int:
        self._require_power()
        if self.tournament is not None:
            raise MachineRefusal("no cash-out in tournament mode")
        amount, self.cashable_credits = self.cashable_credits, 0
        self.meters.coin_out += amount
        if amount:
            self._emit(Event.CREDITS_CHANGED)
        return amount

    def spin(self, bet: int = 1) -> SpinResult:
        """A player presses spin.  Refused when play is disabled, a game is still running
        or credits are short.  With ``game_seconds`` > 0 the bet is wagered now and the
        win lands when :meth:`tick` ends the game (``credits_after`` is then the meter
        once it has)."""
        if not self.play_enabled():
            raise MachineRefusal("play disabled")
        if self.game_in_progress:
            raise MachineRefusal("game in progress")
        if bet <= 0 or bet > self.identity.max_bet:
            raise MachineRefusal(f"bet must be 1..{self.identity.max_bet}")
        if self.credits < bet:
            raise MachineRefusal("not enough credits")
        self.game_in_progress = True
        self.last_bet = bet
        stops = tuple(self._rng.randrange(len(_REEL)) for _ in range(3))
        win = bet * _line_pay(stops)
        # The wager is taken at the press, as on a real EGM (coin-in / credits wagered
        # meter at game start); the win is paid when the game ends.
        t = self.tournament
        if t is not None:
            t.credits -= bet
            t.meters.credits_wagered += bet
        else:
            self._debit(bet)
            self.meters.coin_in += bet
        self._emit(Event.GAME_STARTED)
        if self.game_seconds > 0:
            self._game = _PendingGame(win, self.clock() + self.game_seconds)
            return SpinResult(bet=bet, win=win, stops=stops, credits_after=self.credits + win)
        self._finish(win)
        return SpinResult(bet=bet, win=win, stops=stops, credits_after=self.credits)

    def _finish(self, win: int) -> None:
        """A game's end: the win lands on the credit meter and the game meters move (the
        bet was wagered at the start)."""
        self.last_win = win
        t = self.tournament
        if t is not None:
            t.credits += win
            t.meters.games_played += 1
            t.meters.credits_won += win
            t.meters.games_won += 1 if win else 0
        else:
            self.cashable_credits += win
            self.meters.games_played += 1
            self.meters.games_won += 1 if win else 0
        self.game_in_progress = False
        self._emit(Event.GAME_ENDED)

    def _debit(self, bet: int) -> None:
        # Restricted (promo) credits are played first, as on real EGMs.
        from_restricted = min(bet, self.restricted_credits)
        self.restricted_credits -= from_restricted
        self.cashable_credits -= bet - from_restricted

    # -- technician / fault actions ----------------------------------------------------
    def open_slot_door(self) -> None:
        if not self.slot_door_open:
            self.slot_door_open = True
            self.meters.slot_door_opened += 1
            self._emit(Event.SLOT_DOOR_OPENED)

    def close_slot_door(self) -> None:
        if self.slot_door_open:
            self.slot_door_open = False
            self._emit(Event.SLOT_DOOR_CLOSED)

    def tilt(self) -> None:
        self.tilted = True
        self._emit(Event.TILT)

    def clear_tilt(self) -> None:
        self.tilted = False
        self._emit(Event.TILT_CLEARED)

    def raise_handpay(self) -> None:
        self.handpay_pending = True
        self._emit(Event.HANDPAY_PENDING)

    def reset_handpay(self) -> bool:
        """Clear a pending handpay; False (and no event) when none was pending, so a
        remote reset of a machine with nothing to reset reports nothing."""
        if not self.handpay_pending:
            return False
        self.handpay_pending = False
        self._emit(Event.HANDPAY_RESET)
        return True

    def power_off(self) -> None:
        """Power loss.  NV memory keeps credits, meters and tournament state."""
        if self.powered:
            self._emit(Event.POWER_LOST)
            self.powered = False
            t = self.tournament
            if t is not None and t.started_at is not None and not t.time_up:
                # The timer does not run while the machine is dark.
                t.seconds = self.tournament_seconds_left() or 0.0
                t.started_at = None
            # NV memory keeps a game in progress: it completes once power is back.
            self.game_in_progress = self._game is not None

    def power_on(self) -> None:
        if not self.powered:
            self.powered = True
            self.meters.power_resets += 1
            # A machine comes back with play locked until the host enables it.
            self.play_locked = True
            self._emit(Event.POWER_APPLIED)

    def _require_power(self) -> None:
        if not self.powered:
            raise MachineRefusal("machine has no power")

    def _require_idle_for_tournament(self) -> None:
        if self.cashable_credits:
            raise MachineRefusal("cashable credits on the meter")
        if self.game_in_progress:
            raise MachineRefusal("game in progress")
        if self.handpay_pending:
            raise MachineRefusal("handpay pending")
        if self.tilted:
            raise MachineRefusal("machine tilted")
        if self.slot_door_open:
            raise MachineRefusal("slot door open")


def _line_pay(stops: tuple[int, ...]) -> int:
    symbols = [_REEL[s] for s in stops]
    if symbols[0] == symbols[1] == symbols[2] and symbols[0] in _PAYS:
        return _PAYS[symbols[0]]
    if symbols[0] == symbols[1] == "CH":
        return _CHERRY_ANY_TWO
    return 0
