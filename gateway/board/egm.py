"""The EGM behind an interface board: :class:`~protocols.mqtt.board.BoardMachine` over a
machine driver (the gateway's :class:`~gateway.machines.sas.SasDriver` in production).

What maps from SAS to the v1 schema:

* **Commands** run on the driver, so the board does on the EGM exactly what the gateway
  does on a directly wired machine: ``lock``/``unlock`` are LP 01/02;
  ``enter-tournament``/``exit-tournament`` are LP 8C on a machine with tournament mode
  and, without it, the host-timed sequence (lock, AFT load of restricted credits, sweep
  at the end); ``read-meters`` is the driver's heat score (LP 1A plus LP 99, or the LP 1C
  differences since entry); ``read-clock``/``set-clock`` are LP 7E/7F; ``identity`` is
  LP 1F, 54 and A0.  The driver keeps the heat's entry meters in this process, so a
  host-timed heat's meters survive a *gateway* restart: they live at the machine.
* **Outcomes.**  A refusal (NACK, cashable credits, busy past its budget) is a
  ``refused`` reply; an EGM that does not answer (timeout, lost link, garbage) gets no
  reply at all (:class:`~protocols.mqtt.board.CommandDeferred`), so the gateway times
  out and retries as it would over SAS.  Every driver call is safe to repeat.
* **State** is what the board knows without a poll: door, power, tilt, handpay and game
  in progress follow the exceptions the event loop reads; ``locked`` follows the
  commands; credits and meters are the last read (after every game, and on request).
  SAS has no "tilt cleared" exception: a tilt clears when the next game starts.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gateway.board.clock import GatewayClock
from gateway.machines.driver import (
    DriverError,
    MachineDriver,
    MachineEvent,
    MachineEventKind,
    MachineRefused,
)
from gateway.scores import HeatScore, TournamentMeters
from protocols.mqtt import codec
from protocols.mqtt.board import CommandDeferred, CommandRefused
from protocols.mqtt.codec import BoardEventKind, Command

log = logging.getLogger(__name__)

_K = MachineEventKind
# SAS exceptions (as the driver names them) -> board events.  Codes the driver does not
# name (OTHER) have no board event; they are logged.
BOARD_KIND: dict[MachineEventKind, BoardEventKind] = {
    _K.DOOR_OPENED: BoardEventKind.DOOR_OPENED,
    _K.DOOR_CLOSED: BoardEventKind.DOOR_CLOSED,
    _K.POWER_LOST: BoardEventKind.POWER_LOST,
    _K.POWER_APPLIED: BoardEventKind.POWER_APPLIED,
    _K.TILT: BoardEventKind.TILT,
    _K.HANDPAY_PENDING: BoardEventKind.HANDPAY_PENDING,
    _K.HANDPAY_RESET: BoardEventKind.HANDPAY_RESET,
    _K.GAME_STARTED: BoardEventKind.GAME_STARTED,
    _K.GAME_ENDED: BoardEventKind.GAME_ENDED,
    _K.QUEUE_OVERFLOW: BoardEventKind.QUEUE_OVERFLOW,
    _K.OPERATOR_MENU: BoardEventKind.OPERATOR_MENU,
    _K.OUT_OF_SERVICE: BoardEventKind.OUT_OF_SERVICE,
}

# SAS exceptions -> the state flag they set.
_FLAGS: dict[MachineEventKind, tuple[str, bool]] = {
    _K.DOOR_OPENED: ("door_open", True),
    _K.DOOR_CLOSED: ("door_open", False),
    _K.POWER_LOST: ("powered", False),
    _K.POWER_APPLIED: ("powered", True),
    _K.TILT: ("tilted", True),
    _K.HANDPAY_PENDING: ("handpay_pending", True),
    _K.HANDPAY_RESET: ("handpay_pending", False),
    _K.GAME_STARTED: ("game_in_progress", True),
    _K.GAME_ENDED: ("game_in_progress", False),
}

Emit = Callable[[BoardEventKind, bool], None]  # (kind, meters moved)


@dataclass(slots=True)
class Heat:
    """The heat the gateway entered this machine in (its timer, for the state topic)."""

    credits: int
    seconds: int
    started_at: float | None = None  # monotonic, at the first unlock


@dataclass(slots=True)
class Snapshot:
    powered: bool = True
    locked: bool = False
    door_open: bool = False
    tilted: bool = False
    handpay_pending: bool = False
    game_in_progress: bool = False
    credits: int = 0
    meters: TournamentMeters = field(default_factory=lambda: TournamentMeters(0, 0, 0, 0))


class EgmMachine:
    """One EGM, reached through ``driver``; ``emit`` queues a board event."""

    def __init__(self, machine_id: str, driver: MachineDriver, clock: GatewayClock) -> None:
        self._machine_id = machine_id
        self.driver = driver
        self.clock = clock
        self.snapshot = Snapshot()
        self.heat: Heat | None = None
        self._emit: Emit = lambda kind, meters: None

    def attach(self, emit: Emit) -> None:
        self._emit = emit

    @property
    def machine_id(self) -> str:
        return self._machine_id

    def now(self) -> datetime:
        return self.clock.now()

    # -- what the board publishes ------------------------------------------------------
    def state(self, seq: int) -> codec.State:
        s = self.snapshot
        view = None
        h = self.heat
        if h is not None:
            left = float(h.seconds)
            if h.started_at is not None:
                left = max(0.0, h.seconds - (self.clock.monotonic() - h.started_at))
            view = codec.TournamentView(
                credits=s.credits,
                seconds_left=left,
                started=h.started_at is not None,
                time_up=h.started_at is not None and left == 0.0,
            )
        return codec.State(
            seq=seq,
            at=self.now(),
            powered=s.powered,
            locked=s.locked,
            door_open=s.door_open,
            tilted=s.tilted,
            handpay_pending=s.handpay_pending,
            game_in_progress=s.game_in_progress,
            credits=s.credits,
            tournament=view,
        )

    def meters(self, seq: int) -> codec.Meters:
        s, m = self.snapshot, self.snapshot.meters
        return codec.Meters(
            seq=seq,
            at=self.now(),
            credits=s.credits,
            in_tournament=self.heat is not None,
            games_played=m.games_played,
            games_won=m.games_won,
            credits_wagered=m.credits_wagered,
            credits_won=m.credits_won,
        )

    # -- events from the SAS loop ------------------------------------------------------
    def apply(self, event: MachineEvent) -> BoardEventKind | None:
        """Fold one driver event into the state; the board event it is, if any."""
        s = self.snapshot
        k = event.kind
        if k in _FLAGS:
            name, value = _FLAGS[k]
            setattr(s, name, value)
        if k is _K.GAME_STARTED:
            s.tilted = False  # playing again: SAS reports no "tilt cleared"
        kind = BOARD_KIND.get(k)
        if kind is None:
            code = "--" if event.code is None else f"{event.code:02X}"
            log.info("%s: SAS exception %s (%s): no board event", self._machine_id, code, k.value)
        return kind

    async def refresh(self) -> None:
        """Read the credit meter, and the heat's meters while in a heat (after a game)."""
        if self.heat is not None:
            self._score(await self.driver.heat_score())
        else:
            self.snapshot.credits = await self.driver.credits()

    def _score(self, score: HeatScore) -> None:
        self.snapshot.credits = score.credits
        self.snapshot.meters = score.meters

    # -- commands ----------------------------------------------------------------------
    async def run(self, cmd: Command, args: dict[str, Any]) -> dict[str, Any] | None:
        handler = _COMMANDS.get(cmd)
        if handler is None:  # show-message: SAS gives a host no line on the EGM's screen
            raise ValueError(f"{cmd.value}: this board has no display")
        try:
            return await handler(self, args)
        except MachineRefused as exc:
            raise CommandRefused(str(exc)) from None
        except DriverError as exc:  # timeout, link down, garbage: the EGM did not answer
            raise CommandDeferred(str(exc)) from None

    async def _lock(self, args: dict[str, Any]) -> None:
        await self.driver.lock()
        self.snapshot.locked = True
        self._emit(BoardEventKind.PLAY_LOCKED, False)

    async def _unlock(self, args: dict[str, Any]) -> None:
        await self.driver.unlock()
        self.snapshot.locked = False
        if self.heat is not None and self.heat.started_at is None:
            self.heat.started_at = self.clock.monotonic()
        self._emit(BoardEventKind.PLAY_ENABLED, False)

    async def _enter(self, args: dict[str, Any]) -> None:
        credits, seconds = int(args["credits"]), int(args["seconds"])
        h = self.heat
        if h is not None:
            if (h.credits, h.seconds) == (credits, seconds) and h.started_at is None:
                return  # the same heat, already entered: a retry loads nothing twice
            raise CommandRefused("already in a heat")
        await self.driver.enter_tournament(credits, seconds)
        self.heat = Heat(credits, seconds)
        self.snapshot.locked = True
        self.snapshot.credits = credits
        self.snapshot.meters = TournamentMeters(0, 0, 0, 0)
        self._emit(BoardEventKind.TOURNAMENT_ENTERED, True)

    async def _exit(self, args: dict[str, Any]) -> None:
        await self.driver.exit_tournament()
        was_in = self.heat is not None
        self.heat = None
        self.snapshot.locked = True  # the driver leaves the machine locked
        self.snapshot.credits = await self.driver.credits()
        if was_in:
            self._emit(BoardEventKind.TOURNAMENT_EXITED, True)

    async def _read_meters(self, args: dict[str, Any]) -> dict[str, Any]:
        score = await self.driver.heat_score()
        self._score(score)
        m = score.meters
        return {
            "credits": score.credits,
            "in_tournament": self.heat is not None,
            "games_played": m.games_played,
            "games_won": m.games_won,
            "credits_wagered": m.credits_wagered,
            "credits_won": m.credits_won,
        }

    async def _read_credits(self, args: dict[str, Any]) -> dict[str, Any]:
        self.snapshot.credits = await self.driver.credits()
        return {"credits": self.snapshot.credits}

    async def _read_clock(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"now": (await self.driver.read_clock()).isoformat()}

    async def _set_clock(self, args: dict[str, Any]) -> None:
        when = datetime.fromisoformat(str(args["when"]))  # the codec checked it
        self.clock.set(when)  # the board's own clock first: it needs no EGM
        await self.driver.set_clock(when)

    async def _identity(self, args: dict[str, Any]) -> dict[str, Any]:
        i = await self.driver.identity()
        return {
            "game_id": i.game_id,
            "additional_id": i.additional_id,
            "denomination_code": i.denomination_code,
            "max_bet": i.max_bet,
            "paytable_id": i.paytable_id,
            "base_percent": i.base_percent,
            "protocol_version": i.protocol_version,  # the EGM's SAS version, e.g. 602
            "serial_number": i.serial_number,
            "tournament": i.tournament.value,
        }

    async def _report_state(self, args: dict[str, Any]) -> None:
        await self.refresh()  # the core republishes status, state and meters


Handler = Callable[[EgmMachine, dict[str, Any]], Awaitable[dict[str, Any] | None]]
_COMMANDS: dict[Command, Handler] = {
    Command.LOCK: EgmMachine._lock,
    Command.UNLOCK: EgmMachine._unlock,
    Command.ENTER_TOURNAMENT: EgmMachine._enter,
    Command.EXIT_TOURNAMENT: EgmMachine._exit,
    Command.READ_METERS: EgmMachine._read_meters,
    Command.READ_CREDITS: EgmMachine._read_credits,
    Command.READ_CLOCK: EgmMachine._read_clock,
    Command.SET_CLOCK: EgmMachine._set_clock,
    Command.IDENTITY: EgmMachine._identity,
    Command.REPORT_STATE: EgmMachine._report_state,
}
