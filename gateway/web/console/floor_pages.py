"""The floor map and a technician's bank check, enable and disable.

Check, enable and disable go to the process driving the bank (:class:`~.control.FloorControl`);
each shows the result of every machine.  Clearing a machine's SNMP trap marks is a row
change anyone with the permission may make here (as ``reelgate bank clear-mark``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response

from gateway.accounts.roles import Permission as P
from gateway.errors import OperatorError
from gateway.floor.model import NAME_PATTERN
from gateway.web.console.acting import attempt, done
from gateway.web.console.auth import Viewer, read_fresh, viewer
from gateway.web.console.control import BankResult, FloorControl
from gateway.web.console.floor_state import floor_map
from gateway.web.console.state import console_of
from storage.marks import clear_marks

router = APIRouter()
Bank = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,32}$")]
Machine = Annotated[str, Path(pattern=NAME_PATTERN.pattern)]


@router.get("/floor", response_class=HTMLResponse)
async def floor(request: Request, me: Viewer = viewer(P.BANK_READ)) -> Response:
    console = console_of(request)
    banks = await floor_map(me.session, console.control, console.retained())
    return console.pages.render(
        request, "floor.html", me, active="floor", banks=banks,
        live=console.feed is not None, gateway=console.control is not None,
    )  # fmt: skip


@router.get("/floor/fragment", response_class=HTMLResponse)
async def floor_fragment(request: Request, me: Viewer = viewer(P.BANK_READ)) -> Response:
    console = console_of(request)
    banks = await floor_map(me.session, console.control, console.retained())
    return console.pages.render(request, "floor_banks.html", me, banks=banks)


def _control(request: Request, bank: str) -> FloorControl:
    control = console_of(request).control
    if control is None or not control.drives(bank):
        raise OperatorError(
            f"bank {bank}: not driven by this process; use the console of the gateway "
            f"serving it (reelgate serve --http), or reelgate bank on its host"
        )
    return control


async def _bank_page(
    request: Request,
    me: Viewer,
    bank: str,
    result: BankResult | None,
    error: str = "",
    action: str = "",
) -> Response:
    console = console_of(request)
    banks = await floor_map(me.session, console.control, console.retained(), only=bank)
    if not banks:
        return console.pages.render(
            request, "floor.html", me, status=404, active="floor", banks=[],
            error=f"bank {bank!r} is not on the floor", live=False, gateway=False,
        )  # fmt: skip
    control = console.control
    checks = result.checks if result else (control.last_check(bank) if control else None)
    return console.pages.render(
        request, "bank.html", me, status=422 if error else 200, active="floor",
        bank=banks[0], checks=checks or [], result=result, error=error, action=action,
        can_direct=me.can(P.HEAT_DIRECT),
    )  # fmt: skip


@router.get("/floor/{bank}", response_class=HTMLResponse)
async def bank_page(request: Request, bank: Bank, me: Viewer = viewer(P.BANK_READ)) -> Response:
    return await _bank_page(request, me, bank, None)


async def _drive(
    request: Request, me: Viewer, bank: str, action: str, work: Callable[[], Awaitable[BankResult]]
) -> Response:
    """A bank action through the process driving it (its own transactions), then the
    bank's page with every machine's result, or the refusal in one line."""
    try:
        result, error = await work(), ""
    except OperatorError as exc:
        result, error = None, str(exc)
    await read_fresh(me)
    return await _bank_page(request, me, bank, result, error, action)


@router.post("/floor/{bank}/check", response_class=HTMLResponse)
async def check(
    request: Request, bank: Bank, me: Viewer = viewer(P.HEAT_DIRECT, alone=True)
) -> Response:
    async def work() -> BankResult:
        return BankResult(bank, await _control(request, bank).check(bank))

    return await _drive(request, me, bank, "check", work)


@router.post("/floor/{bank}/enable", response_class=HTMLResponse)
async def enable(
    request: Request, bank: Bank, me: Viewer = viewer(P.HEAT_DIRECT, alone=True)
) -> Response:
    exclusions = {
        key.removeprefix("exclude:"): me.field(f"reason:{key.removeprefix('exclude:')}")
        for key in me.form
        if key.startswith("exclude:")
    }

    async def work() -> BankResult:
        for machine, reason in exclusions.items():
            if not reason:
                raise OperatorError(f"reason for excluding {machine}: must not be empty")
        return await _control(request, bank).enable(bank, exclusions, me.name)

    return await _drive(request, me, bank, "enable", work)


@router.post("/floor/{bank}/disable", response_class=HTMLResponse)
async def disable(
    request: Request, bank: Bank, me: Viewer = viewer(P.HEAT_DIRECT, alone=True)
) -> Response:
    async def work() -> BankResult:
        return await _control(request, bank).disable(bank, me.name)

    return await _drive(request, me, bank, "disable", work)


@router.post("/machines/{machine}/clear-marks")
async def clear(
    request: Request, machine: Machine, me: Viewer = viewer(P.BANK_CLEAR_MARK)
) -> Response:
    bank = me.field("bank")
    reason = me.field("reason")

    async def work() -> int:
        if not reason:
            raise OperatorError("reason: say what was checked on the machine")
        return len(await clear_marks(me.session, machine, actor=me.name, reason=reason))

    out = await attempt(me, work)
    target = f"/console/floor/{bank}" if bank else "/console/floor"
    if not out.ok:
        return (
            await _bank_page(request, me, bank, None, out.error)
            if bank
            else done(target, out.error)
        )
    return done(target, f"{machine}: {out.value} trap mark(s) cleared")
