"""Readying and standing down a bank, shared by ``reelgate bank`` and the console: the
refusal of an enable while a machine is blocked, the refusal of a disable while a heat is
under way, the refusal of a floor change to a machine a heat holds, and the return of one
machine to normal play."""

from __future__ import annotations

from collections.abc import Sequence

from gateway.errors import OperatorError
from gateway.heats import states
from gateway.heats.preflight import MachineCheck
from gateway.machines.driver import DriverError
from gateway.machines.links import MachineLink
from storage.journal import Journal


def refuse_blocked(bank: str, checks: Sequence[MachineCheck], *, exclude_hint: str) -> None:
    """A blocked machine refuses the enable: fix it or leave it out, with a reason."""
    blocked = [c for c in checks if not c.ok]
    if blocked:
        first = blocked[0]
        raise OperatorError(
            f"bank {bank} not enabled: {first.machine_id} blocked "
            f"({'; '.join(first.blockers)}); fix it or {exclude_hint}"
            + (f" ({len(blocked) - 1} more blocked)" if len(blocked) > 1 else "")
        )


async def refuse_heat_under_way(journal: Journal, bank: str) -> None:
    for run in await journal.unsettled_runs(bank):
        if not states.is_terminal(run.state):
            raise OperatorError(
                f"bank {bank}: heat run {run.id} is {run.state.value}; "
                "abort it (or let it close) before disabling the bank"
            )


async def refuse_machine_in_heat(journal: Journal, machine_id: str) -> None:
    """A machine a heat run still holds is not added, moved or re-pointed under it."""
    for run in await journal.unsettled_runs():
        if not states.is_terminal(run.state) and machine_id in run.machines:
            raise OperatorError(f"machine {machine_id} is in heat run {run.id} ({run.state.value})")


async def normal_play(link: MachineLink) -> bool:
    """Exit tournament mode (harmless if not in it) and enable play."""
    try:
        await link.call(link.driver.exit_tournament)
        await link.call(link.driver.unlock)
    except DriverError:
        return False
    return True
