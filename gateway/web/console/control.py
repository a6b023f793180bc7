"""What the console needs of the process that drives the machines.

Checking, enabling and disabling a bank talks to its machines, which only the process
holding the bank's lease may do (:mod:`gateway.heats.ownership`).  When the console runs
inside ``reelgate serve``, the composition root hands it a :class:`FloorControl` over the
gateway's own links; a console without one (``reelgate api`` on a desk host) shows the
stored floor and says where those actions are done instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gateway.heats.preflight import MachineCheck


@dataclass(frozen=True, slots=True)
class MachineLive:
    """One machine as the gateway sees it now."""

    online: bool
    conditions: tuple[str, ...] = ()  # open door, tilt, handpay, game in progress
    in_heat: bool = False  # claimed by a heat runner
    heat_state: str | None = None  # armed, playing, locked, scored, malfunction, released
    error: str = ""  # why a heat let it go (T20)
    acknowledged: str | None = None  # the last command the machine acknowledged in the heat


@dataclass(frozen=True, slots=True)
class BankResult:
    """The result of an enable or a disable, machine by machine."""

    bank: str
    checks: Sequence[MachineCheck] = ()
    back_in_play: Mapping[str, bool] = field(default_factory=dict)  # disable: machine -> ok


class FloorControl(Protocol):
    def drives(self, bank: str) -> bool: ...

    def live(self, bank: str) -> Mapping[str, MachineLive]: ...

    def last_check(self, bank: str) -> Sequence[MachineCheck] | None: ...

    async def check(self, bank: str) -> Sequence[MachineCheck]: ...

    async def enable(self, bank: str, exclusions: Mapping[str, str], actor: str) -> BankResult: ...

    async def disable(self, bank: str, actor: str) -> BankResult: ...
