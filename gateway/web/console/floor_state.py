"""The floor map: every bank and machine with one state a technician reads at a glance.

A machine's state comes from, in this order of precedence: its exclusion from an enabled
bank; the heat run under way or not yet settled (playing with its credits, in tournament
mode, locked, malfunction T20, release pending once the run ended); its stored SNMP trap
marks and the gateway's live supervision (offline, an open door); the last bank check's
blockers; and otherwise ready.  Storage is the truth for what is stored; the live parts
come from the process driving the bank (:class:`~.control.FloorControl`) and the feed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.heats.preflight import MachineCheck
from gateway.web.console.control import FloorControl, MachineLive
from storage.floor import FloorBank, FloorMachine
from storage.journal import TERMINAL_STATES, HeatRun, HeatRunMachine, MachineState
from storage.marks import MachineTrapMark

M = MachineState


@dataclass(frozen=True, slots=True)
class MachineView:
    machine_id: str
    position: int
    state: str  # css-friendly: ready, blocked, playing, tournament, locked, ...
    label: str
    why: str = ""
    credits: int | None = None


@dataclass(frozen=True, slots=True)
class BankView:
    name: str
    enabled: bool
    enabled_by: str | None
    driven: bool  # this process drives it: check / enable / disable here
    heat_run: int | None
    machines: list[MachineView] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for m in self.machines:
            out[m.state] = out.get(m.state, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class _Run:
    run_id: int
    ended: bool
    machines: dict[str, HeatRunMachine]


async def _open_runs(session: AsyncSession) -> dict[str, _Run]:
    runs = (await session.scalars(select(HeatRun).where(HeatRun.settled.is_(False)))).all()
    out: dict[str, _Run] = {}
    for run in sorted(runs, key=lambda r: r.id):
        seats = (
            await session.scalars(select(HeatRunMachine).where(HeatRunMachine.run_id == run.id))
        ).all()
        out[run.bank_name] = _Run(
            run.id, run.state in TERMINAL_STATES, {s.machine_id: s for s in seats}
        )
    return out


async def _marks(session: AsyncSession) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for mark in (await session.scalars(select(MachineTrapMark).order_by(MachineTrapMark.id))).all():
        out.setdefault(mark.machine_id, []).append(mark.kind)
    return out


def seat_credits(retained: Mapping[str, Any]) -> dict[str, int]:
    """Provisional credits of the heat signs show now (the feed's ``current`` heat)."""
    current = retained.get("current") or {}
    key = current.get("heat")
    if key is None:
        return {}
    prefix = f"heat/{key}/seat/"
    return {
        topic[len(prefix) :]: int(p["credits"])
        for topic, p in retained.items()
        if topic.startswith(prefix) and isinstance(p, dict) and p.get("credits") is not None
    }


_RUN_STATES = {
    M.PENDING: ("tournament", "heat starting"),
    M.ARMED: ("tournament", "in tournament mode"),
    M.PLAYING: ("playing", "playing"),
    M.LOCKED: ("locked", "locked at the heat's end"),
    M.SCORED: ("locked", "scored, locked"),
}


def _from_run(seat: HeatRunMachine, ended: bool, credits: int | None) -> MachineView | None:
    pos = 0
    if seat.state is M.MALFUNCTION:
        return MachineView(seat.machine_id, pos, "malfunction", "malfunction", seat.note or "T20")
    if seat.state is M.RELEASED:
        return None
    if ended:
        return MachineView(seat.machine_id, pos, "release-pending", "release pending",
                           "not yet back in normal play")  # fmt: skip
    state, label = _RUN_STATES[seat.state]
    return MachineView(
        seat.machine_id, pos, state, label, "", credits if state == "playing" else None
    )


def _from_live(
    machine_id: str, live: MachineLive | None, check: MachineCheck | None
) -> MachineView:
    if live is not None and live.heat_state == "malfunction":
        return MachineView(machine_id, 0, "malfunction", "malfunction", live.error)
    if live is not None and not live.online:
        return MachineView(machine_id, 0, "blocked", "blocked", "no answer on its link")
    if live is not None and live.conditions:
        return MachineView(
            machine_id, 0, "blocked", "blocked", "; ".join(live.conditions) + " open"
        )
    if check is not None and not check.ok:
        return MachineView(machine_id, 0, "blocked", "blocked", "; ".join(check.blockers))
    if live is None and check is None:
        return MachineView(machine_id, 0, "unknown", "not watched here", "")
    return MachineView(machine_id, 0, "ready", "ready", "")


def machine_view(
    fm: FloorMachine,
    bank_enabled: bool,
    run: _Run | None,
    marks: Sequence[str],
    live: MachineLive | None,
    check: MachineCheck | None,
    credits: int | None,
) -> MachineView:
    mid = fm.machine_id
    view: MachineView | None = None
    if bank_enabled and fm.excluded_reason:
        view = MachineView(mid, 0, "excluded", "excluded", fm.excluded_reason)
    elif run is not None and mid in run.machines:
        view = _from_run(run.machines[mid], run.ended, credits)
    if view is None and marks:
        view = MachineView(mid, 0, "blocked", "blocked", "marked: " + ", ".join(marks))
    if view is None:
        view = _from_live(mid, live, check)
    return MachineView(mid, fm.position, view.state, view.label, view.why, view.credits)


async def floor_map(
    session: AsyncSession,
    control: FloorControl | None,
    retained: Mapping[str, Any],
    only: str | None = None,
) -> list[BankView]:
    query = select(FloorBank).order_by(FloorBank.name)
    if only is not None:
        query = query.where(FloorBank.name == only)
    banks = (await session.scalars(query)).all()
    machines = (
        await session.scalars(
            select(FloorMachine).order_by(FloorMachine.bank_name, FloorMachine.position)
        )
    ).all()
    runs, marks, credits = await _open_runs(session), await _marks(session), seat_credits(retained)
    out: list[BankView] = []
    for bank in banks:
        driven = control is not None and control.drives(bank.name)
        live = control.live(bank.name) if control is not None and driven else {}
        checks = (
            {c.machine_id: c for c in (control.last_check(bank.name) or [])}
            if driven and control
            else {}
        )
        run = runs.get(bank.name)
        view = BankView(
            bank.name, bank.enabled, bank.enabled_by, driven, run.run_id if run else None
        )
        for fm in (m for m in machines if m.bank_name == bank.name):
            view.machines.append(
                machine_view(fm, bank.enabled, run, marks.get(fm.machine_id, []),
                             live.get(fm.machine_id), checks.get(fm.machine_id),
                             credits.get(fm.machine_id))
            )  # fmt: skip
        out.append(view)
    return out
