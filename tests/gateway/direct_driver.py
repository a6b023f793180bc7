"""A test double: a MachineDriver that calls an in-process EmulatedMachine directly.

No protocol, no sockets.  Used only by the unit tests of the heat state machine; the
integration tests drive the real SAS driver against emulators over TCP.  Faults are
injected with :attr:`fault` ("timeout" = the machine stops answering, "down" = the
connection drops) so the orchestration's error handling is exercised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from emulators.machine import EmulatedMachine, Event, MachineRefusal, ModelEvent
from gateway.machines.driver import (
    LinkDown,
    LinkTimeout,
    MachineEvent,
    MachineEventKind,
    MachineIdentity,
    MachineRefused,
    TournamentSupport,
)
from gateway.scores import HeatScore, TournamentMeters

_EVENT_MAP = {
    Event.TILT: MachineEventKind.TILT,
    Event.POWER_LOST: MachineEventKind.POWER_LOST,
    Event.POWER_APPLIED: MachineEventKind.POWER_APPLIED,
    Event.SLOT_DOOR_OPENED: MachineEventKind.DOOR_OPENED,
    Event.SLOT_DOOR_CLOSED: MachineEventKind.DOOR_CLOSED,
    Event.GAME_STARTED: MachineEventKind.GAME_STARTED,
    Event.GAME_ENDED: MachineEventKind.GAME_ENDED,
    Event.HANDPAY_PENDING: MachineEventKind.HANDPAY_PENDING,
    Event.HANDPAY_RESET: MachineEventKind.HANDPAY_RESET,
}


class DirectDriver:
    def __init__(self, machine: EmulatedMachine) -> None:
        self.machine = machine
        self.machine_id = machine.machine_id
        self.fault: str | None = None
        self.calls: list[str] = []
        self._events: list[ModelEvent] = []
        # (games played, coin in, games won, credits loaded) when a host-timed heat began
        self._host_start: tuple[int, int, int, int] | None = None
        machine.subscribe(self._events.append)

    async def _io(self, name: str) -> None:
        self.calls.append(name)
        await asyncio.sleep(0)  # a real driver yields on I/O; keep the scheduling honest
        if self.fault == "timeout":
            raise LinkTimeout(f"{self.machine_id}: no reply")
        if self.fault == "down":
            raise LinkDown(f"{self.machine_id}: connection closed")

    async def open(self) -> None:
        await self._io("open")

    async def close(self) -> None:
        self.calls.append("close")

    async def identity(self) -> MachineIdentity:
        await self._io("identity")
        i = self.machine.identity
        return MachineIdentity(
            game_id=i.game_id,
            additional_id=i.additional_id,
            denomination_code=i.denomination_code,
            max_bet=i.max_bet,
            paytable_id=i.paytable_id,
            base_percent=i.base_percent,
            protocol_version=i.sas_version,
            serial_number=i.serial_number,
            tournament=TournamentSupport.NATIVE
            if self.machine.tournament_supported
            else TournamentSupport.HOST_TIMED,
        )

    async def credits(self) -> int:
        await self._io("credits")
        return self.machine.credits

    async def lock(self) -> None:
        await self._io("lock")
        self._refusing(self.machine.lock_play)

    async def unlock(self) -> None:
        await self._io("unlock")
        self._refusing(self.machine.unlock_play)

    async def enter_tournament(self, credits: int, seconds: int) -> None:
        await self._io("enter_tournament")
        m = self.machine
        if m.tournament_supported:
            self._refusing(lambda: m.enter_tournament(credits, seconds))
            return
        if self._host_start is not None:
            return  # already loaded for this heat
        self._refusing(lambda: m.transfer_in_restricted(credits))
        self._host_start = (m.meters.games_played, m.meters.coin_in, m.meters.games_won, credits)

    async def exit_tournament(self) -> None:
        await self._io("exit_tournament")
        m = self.machine
        if m.tournament_supported:
            self._refusing(m.exit_tournament)
        else:
            self._refusing(m.transfer_out_restricted)
            self._host_start = None

    async def heat_score(self) -> HeatScore:
        await self._io("heat_score")
        m = self.machine
        if m.tournament_supported:
            t = m.tournament_meters()
            meters = TournamentMeters(t.games_played, t.games_won, t.credits_wagered, t.credits_won)
            return HeatScore(credits=m.credits, meters=meters)
        if self._host_start is None:
            raise MachineRefused("no host-timed heat on this machine")
        games0, coin0, won0, loaded = self._host_start
        wagered = m.meters.coin_in - coin0
        credits = m.credits  # the credit meter: loaded credits left plus wins
        return HeatScore(
            credits=credits,
            meters=TournamentMeters(
                games_played=m.meters.games_played - games0,
                games_won=m.meters.games_won - won0,
                credits_wagered=wagered,
                credits_won=credits - loaded + wagered,
            ),
        )

    async def read_clock(self) -> datetime:
        await self._io("read_clock")
        return self.machine.now()

    async def set_clock(self, when: datetime) -> None:
        await self._io("set_clock")
        self.machine.set_clock(when.astimezone(UTC))

    async def poll_events(self) -> list[MachineEvent]:
        await self._io("poll_events")
        out = [
            MachineEvent(self.machine_id, _EVENT_MAP[e.event], datetime.now(UTC))
            for e in self._events
            if e.event in _EVENT_MAP
        ]
        self._events.clear()
        return out

    @staticmethod
    def _refusing(action: object) -> None:
        try:
            action()  # type: ignore[operator]
        except MachineRefusal as exc:
            raise MachineRefused(str(exc)) from exc


class PreparedDirectDriver(DirectDriver):
    """Offers the optional ``prepare_unlock`` fast path the heat runner uses when present."""

    def prepare_unlock(self) -> Callable[[], Awaitable[None]]:
        self.calls.append("prepare_unlock")

        def trigger() -> Awaitable[None]:
            # the "frame" leaves now: the machine is enabled before anything is awaited
            self._refusing(self.machine.unlock_play)
            self.calls.append("unlock")
            return asyncio.sleep(0)

        return trigger
