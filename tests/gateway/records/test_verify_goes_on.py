"""Issue 25.2: ``audit verify`` never stops on a finding.  A package price edited in the
database after a stage closed used to stop it (the settings no longer load: T5 wants a
single seat at the seat price, so recomputing the cut raised and the command exited 2
naming nothing); now the price is named by its seal, the cut as one that cannot be
recomputed, and every other finding after them is still named."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from ..tournament.conftest import Desk
from .test_checkpoints import _season, _verify


async def test_an_edited_package_price_is_named_and_verify_goes_on(
    desk: Desk, engine: AsyncEngine
) -> None:
    await _season(desk)
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE tournament_packages SET price_cents = 1"))
        await conn.execute(text("UPDATE players SET name = 'Mallory' WHERE name = 'Bongi'"))
        await conn.execute(
            text("UPDATE scores SET final_credits = 99999 WHERE final_credits = 900")
        )
    result = await _verify(engine, None)
    lines = [f.line() for f in result.findings]
    assert not result.ok
    assert any(line.startswith("tournament_packages ") and "differs from its seal" in line
               for line in lines), lines  # fmt: skip
    assert any(line.startswith("players ") and "differs from its seal" in line for line in lines)
    assert any(line.startswith("scores ") and "differs from its seal" in line for line in lines)
    (cut,) = [f for f in result.findings if f.table == "standings"]
    assert "cannot be recomputed" in cut.problem
    assert "rule 5: package 'single' is one seat" in cut.problem


async def test_a_cut_that_recomputes_still_names_its_changes(
    desk: Desk, engine: AsyncEngine
) -> None:
    """The per-cut guard does not swallow the standings check itself."""
    await _season(desk)
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE scores SET final_credits = 99999 WHERE final_credits = 900")
        )
    lines = [f.line() for f in (await _verify(engine, None)).findings]
    assert any(line.startswith("standings ") and "99999 credits now, 900 at the cut" in line
               for line in lines), lines  # fmt: skip
