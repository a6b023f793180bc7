"""``bank check``: what would stop each machine of a bank from playing a heat.

Per machine: does it answer; does it support tournament mode natively (SAS 8C) or will
the heat be host-timed; are there cashable credits on the meter (tournament mode is
refused then, sas.md §5); is a door open, a tilt or a handpay pending, a game under way
(from the events it reports); is its clock within tolerance of the gateway's (if not it
is set, SAS 7F, and read back); for a host-timed machine whose driver moves credits by
AFT, is it registered to us as its AFT host -- preflight registers it (SAS LP 73, the
floor's key and POS ID), which is what lets the heat load credits, and reads its asset
number.  A machine that refuses (asset number 0, another host's registration, no
acknowledgement from the attendant, registration refused, no key in the floor file) is
a blocker here, with the machine's reason, not a malfunction in the heat.  Nothing else
is changed on the machine.  A machine whose
board has an SNMP agent also gets its device health (:func:`gateway.machines.health.board_problems`:
link, mains power, door, a trap that marked it), merged in by :func:`add_health`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from gateway.machines.capabilities import AftRegistrar, AftRegistration, QuirkReporter
from gateway.machines.driver import (
    DriverError,
    MachineEvent,
    MachineEventKind,
    MachineIdentity,
    TournamentSupport,
)
from gateway.machines.links import MachineLink

CLOCK_TOLERANCE_S = 2.0  # SAS clocks count whole seconds; allow one either side

_OPENS = {
    MachineEventKind.DOOR_OPENED: ("door", True),
    MachineEventKind.DOOR_CLOSED: ("door", False),
    MachineEventKind.TILT: ("tilt", True),
    MachineEventKind.HANDPAY_PENDING: ("handpay", True),
    MachineEventKind.HANDPAY_RESET: ("handpay", False),
    MachineEventKind.GAME_STARTED: ("game", True),
    MachineEventKind.GAME_ENDED: ("game", False),
    MachineEventKind.OPERATOR_MENU: ("operator menu", True),
    MachineEventKind.OUT_OF_SERVICE: ("out of service", True),
    MachineEventKind.POWER_LOST: ("power", True),
    MachineEventKind.POWER_APPLIED: ("power", False),
}


@dataclass(slots=True)
class MachineCheck:
    machine_id: str
    answers: bool = False
    tournament: str | None = None  # native | host-timed
    credits: int | None = None
    conditions: list[str] = field(default_factory=list)  # open door, tilt, ...
    health: list[str] = field(default_factory=list)  # SNMP device health problems
    clock_offset_s: float | None = None
    clock_set: bool = False
    aft: AftRegistration | None = None  # host-timed machines with an AFT driver
    # what the machine did that SAS does not say and the driver tolerated (never a blocker)
    quirks: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.blockers

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


def pending_conditions(events: list[MachineEvent]) -> list[str]:
    """Conditions still open after a run of events (an open door closed again is fine)."""
    state: dict[str, bool] = {}
    for e in events:
        hit = _OPENS.get(e.kind)
        if hit is not None:
            state[hit[0]] = hit[1]
    if state.pop("power", False):
        state["power lost"] = True
    return sorted(k for k, v in state.items() if v)


async def check_machine(
    link: MachineLink, *, tolerance_s: float = CLOCK_TOLERANCE_S
) -> MachineCheck:
    result = MachineCheck(link.machine_id)
    d = link.driver
    try:
        ident = await link.call(d.identity)
        result.answers = True
        result.tournament = ident.tournament.value
        result.aft = await _aft_registration(link, ident)
        result.credits = await link.call(d.credits)
        result.conditions = pending_conditions(await link.call(d.poll_events))
        machine_time = await link.call(d.read_clock)
        now = datetime.now(UTC)
        result.clock_offset_s = (machine_time - now).total_seconds()
        if abs(result.clock_offset_s) > tolerance_s:
            await link.call(lambda: d.set_clock(datetime.now(UTC)))  # SAS 7F
            result.clock_set = True
            again = await link.call(d.read_clock)
            result.clock_offset_s = (again - datetime.now(UTC)).total_seconds()
    except DriverError as exc:
        if not result.answers:
            result.blockers.append(f"no answer ({type(exc).__name__})")
            return result
        result.blockers.append(f"link error ({type(exc).__name__}: {exc})")
    if isinstance(d, QuirkReporter):
        result.quirks = d.quirks()
    aft = result.aft
    if aft is not None and not aft.registered:
        result.blockers.append(f"AFT registration {aft.status}: {aft.reason}")
    if result.credits:
        result.blockers.append(f"{result.credits} credits on the meter")
    for condition in result.conditions:
        result.blockers.append(
            "game in progress" if condition == "game" else f"{condition} open/pending"
        )
    if result.clock_offset_s is not None and abs(result.clock_offset_s) > tolerance_s:
        result.blockers.append(f"clock off by {result.clock_offset_s:+.0f} s after setting")
    return result


async def _aft_registration(link: MachineLink, ident: MachineIdentity) -> AftRegistration | None:
    """Register a host-timed machine as our AFT host (its credits come by transfer)."""
    driver = link.driver
    if ident.tournament is not TournamentSupport.HOST_TIMED or not isinstance(
        driver, AftRegistrar
    ):
        return None
    return await link.call(driver.register_aft)


async def check_bank(links: Mapping[str, MachineLink]) -> list[MachineCheck]:
    return list(await asyncio.gather(*(check_machine(link) for link in links.values())))


def add_health(checks: list[MachineCheck], problems: Mapping[str, list[str]]) -> None:
    """Merge SNMP health problems (machine -> problems) into the checks as blockers."""
    for check in checks:
        found = problems.get(check.machine_id, [])
        check.health = list(found)
        check.blockers.extend(f"snmp: {p}" for p in found)
