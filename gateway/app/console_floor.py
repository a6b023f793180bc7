"""The console's :class:`~gateway.web.console.control.FloorControl` over a running
gateway: its links, supervisors and live heats (``reelgate serve --http``).

A bank check, enable or disable from the console uses the gateway's own links (the
gateway holds the bank's lease, so no other process may open them); the refusals are
those of ``reelgate bank`` (:mod:`gateway.heats.bank_readiness`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from gateway.app.gateway import RunningGateway
from gateway.errors import OperatorError
from gateway.floor.store import set_bank_enabled
from gateway.heats.bank_readiness import normal_play, refuse_blocked, refuse_heat_under_way
from gateway.heats.preflight import MachineCheck, add_health, check_bank
from gateway.machines.links import MachineLink
from gateway.web.console.control import BankResult, MachineLive


class GatewayFloor:
    def __init__(self, gateway: RunningGateway) -> None:
        self.gateway = gateway
        self._checks: dict[str, list[MachineCheck]] = {}
        self._busy: dict[str, asyncio.Lock] = {}

    def drives(self, bank: str) -> bool:
        ownership = self.gateway.ownership
        return bank in self.gateway.links and (ownership is None or ownership.drives(bank))

    def live(self, bank: str) -> Mapping[str, MachineLive]:
        gw = self.gateway
        supervisor = gw.supervisors.get(bank)
        heat = gw.scheduler.live.get(bank) if gw.scheduler is not None else None
        outcome = getattr(heat.runner, "out", None) if heat is not None else None
        seats = outcome.seats if outcome is not None else {}
        out: dict[str, MachineLive] = {}
        for machine_id in gw.links.get(bank, {}):
            status = supervisor.status.get(machine_id) if supervisor is not None else None
            claimed = supervisor is not None and machine_id in supervisor.claimed
            seat = seats.get(machine_id)
            out[machine_id] = MachineLive(
                online=claimed or (status is not None and status.online),
                conditions=() if status is None or claimed else tuple(status.conditions),
                in_heat=claimed,
                heat_state=seat.state.value if seat is not None else None,
                error=seat.error if seat is not None else "",
                acknowledged=seat.acknowledged if seat is not None else None,
            )
        return out

    def last_check(self, bank: str) -> Sequence[MachineCheck] | None:
        return self._checks.get(bank)

    def _links(self, bank: str) -> dict[str, MachineLink]:
        if not self.drives(bank):
            raise OperatorError(f"bank {bank}: not driven by this gateway")
        if self.gateway.scheduler is not None and bank in self.gateway.scheduler.live:
            raise OperatorError(f"bank {bank}: a heat is under way; wait for it to close")
        if self.gateway.scheduler is not None and self.gateway.scheduler.walkups_on(bank):
            raise OperatorError(f"bank {bank}: walk-up sessions are under way (W3)")
        return dict(self.gateway.links[bank])

    async def _checked(self, bank: str, links: Mapping[str, MachineLink]) -> list[MachineCheck]:
        """The preflight over the gateway's links.  The bank's supervisor drains the
        machines' events between heats, so its record of what is open (a door opened an
        hour ago) is merged in: it polls each machine once first, then holds off while
        the check runs, so the check and the supervisor never share a link."""
        supervisor = self.gateway.supervisors.get(bank)
        if supervisor is None:
            checks = await check_bank(links)
        else:
            await asyncio.gather(*(supervisor.poll_once(m) for m in links))
            supervisor.claim(links)
            try:
                checks = await check_bank(links)
            finally:
                supervisor.release(links)
            for check in checks:
                _merge_open(check, supervisor.status[check.machine_id].conditions)
        health = self.gateway.health
        watched = [m.id for m in self.gateway.context.floor.bank(bank).machines if m.snmp]
        if health is not None and watched:
            problems = await health.preflight([m for m in watched if m in links])
            add_health(checks, problems)
        self._checks[bank] = checks
        return checks

    def _lock(self, bank: str) -> asyncio.Lock:
        return self._busy.setdefault(bank, asyncio.Lock())

    async def check(self, bank: str) -> Sequence[MachineCheck]:
        async with self._lock(bank):
            return await self._checked(bank, self._links(bank))

    async def enable(self, bank: str, exclusions: Mapping[str, str], actor: str) -> BankResult:
        async with self._lock(bank):
            links = self._links(bank)
            unknown = sorted(set(exclusions) - set(links))
            if unknown:
                raise OperatorError(f"exclude {unknown[0]}: not a machine of bank {bank}")
            active = {m: link for m, link in links.items() if m not in exclusions}
            checks = await self._checked(bank, active)
            refuse_blocked(bank, checks, exclude_hint="leave it out with a reason")
            ctx = self.gateway.context
            await set_bank_enabled(
                ctx.sessions, bank, enabled=True, exclusions=exclusions, actor=actor
            )
            await ctx.reload_floor()
            return BankResult(bank, checks)

    async def disable(self, bank: str, actor: str) -> BankResult:
        async with self._lock(bank):
            links = self._links(bank)
            ctx = self.gateway.context
            await refuse_heat_under_way(ctx.journal, bank)
            results = await asyncio.gather(*(normal_play(link) for link in links.values()))
            await set_bank_enabled(ctx.sessions, bank, enabled=False, actor=actor)
            await ctx.reload_floor()
            return BankResult(bank, back_in_play=dict(zip(links, results, strict=True)))


def _merge_open(check: MachineCheck, conditions: Sequence[str]) -> None:
    for condition in conditions:
        if condition not in check.conditions:
            check.conditions.append(condition)
            check.blockers.append(
                "game in progress" if condition == "game" else f"{condition} open/pending"
            )
