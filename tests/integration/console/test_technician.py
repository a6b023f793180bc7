"""A technician signs in, checks bank A and enables it, on emulated machines: every
machine's result is shown, a blocked machine (an open door) refuses the enable until it
is left out with a reason, and the floor map shows each machine's state."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import Page, expect

from storage.floor import FloorBank, FloorMachine

from .conftest import ConsoleGateway, Prepare, confirm, open_screen, sign_in


async def _bank(gw: ConsoleGateway) -> tuple[bool, dict[str, str | None]]:
    ctx = await gw.ctx()
    try:
        async with ctx.sessions() as s:
            bank = await s.get(FloorBank, "A")
            assert bank is not None
            machines = {m: (await s.get(FloorMachine, m)) for m in ("A-001", "A-002", "A-003")}
            return bank.enabled, {k: v.excluded_reason if v else None for k, v in machines.items()}
    finally:
        await ctx.close()


async def test_technician_checks_and_enables_a_bank(
    start_gateway: Callable[[Prepare | None], Awaitable[ConsoleGateway]], page: Page
) -> None:
    gw = await start_gateway(None)
    door = gw.bank.machines[1].machine
    door.open_slot_door()
    await sign_in(page, gw.url, "technician")
    await open_screen(page, "Floor")
    await expect(page.locator(".machine")).to_have_count(3)
    await page.get_by_role("link", name="Check · enable · disable").click()

    await page.get_by_role("button", name="Check bank A").click()
    await expect(page.locator("[data-check]")).to_have_count(3)
    blocked = page.locator(f'[data-check="{door.machine_id}"]')
    await expect(blocked).to_contain_text("blocked")
    await expect(blocked).to_contain_text("door")
    await expect(page.locator('[data-check="A-001"]')).to_contain_text("ok")

    # The blocked machine refuses the enable; nothing changes.
    await page.get_by_role("button", name="Enable bank A").click()
    await confirm(page)
    await expect(page.locator(".flash.error")).to_contain_text(f"{door.machine_id} blocked")
    assert (await _bank(gw))[0] is False

    # Left out with a reason, the bank is enabled; each machine's result is shown.
    await page.get_by_label(f"leave {door.machine_id} out").check()
    await page.get_by_label(f"reason for leaving {door.machine_id} out").fill("door lock broken")
    await page.get_by_role("button", name="Enable bank A").click()
    await confirm(page)
    await expect(page.locator(".flash.ok")).to_contain_text("Bank A enabled by technician")
    await expect(page.locator("[data-check]")).to_have_count(2)
    enabled, excluded = await _bank(gw)
    assert enabled is True
    assert excluded == {"A-001": None, "A-002": "door lock broken", "A-003": None}

    await open_screen(page, "Floor")
    await expect(page.locator(f'[data-machine="{door.machine_id}"]')).to_contain_text("excluded")
    await expect(page.locator('[data-machine="A-001"]')).to_contain_text("ready")
