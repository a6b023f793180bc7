"""The Cash-up screen against ``reelgate cashup --json`` on the same database (a SQLite
file made by the CLI: the command opens only a migrated database): a day of cash and
card sales and a card refund (T23) by two cashiers shows every tender's and every
cashier's figures as the command reports them, and a cashier's screen as the
command's ``--cashier``."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.app.cli import main
from gateway.tournament import services as svc
from gateway.tournament.services.setup import create_tournament
from gateway.tournament.settings import TournamentSettings
from gateway.web.api import create_app
from gateway.web.console.render import rand
from storage.db import make_sessionmaker
from storage.enums import Tender
from tests.gateway.web.api.conftest import NOW, PASSWORD

from ...tournament.test_cli import _seed_floor
from ...training_db import _keyed_engine, add_accounts, cheap_hashes
from .conftest import sign_in_form

DAY = "2026-11-20"


async def _day_of_sales(url: str) -> None:
    engine = _keyed_engine(url)
    try:
        async with svc.unit_of_work(make_sessionmaker(engine)) as s:
            t = await create_tournament(s, "Ridge", TournamentSettings(), actor="director")
            ids = []
            for idn, name in (("8001015009087", "Ann"), ("8101015009086", "Ben")):
                p = await svc.add_player(
                    s, id_number=idn, name=name, date_of_birth=date(1980, 1, 1), actor="desk",
                    now=NOW,
                )  # fmt: skip
                ids.append(p.id)
            await svc.sell_entries(s, t.id, ids[0], cashier="thandi", now=NOW)
            card = await svc.sell_entries(
                s, t.id, ids[1], quantity=2, tender=Tender.CARD, cashier="sipho", now=NOW
            )
            await svc.refund_entry(
                s, card.entry_ids[0], rule=23, reason="left early", actor="sipho", now=NOW
            )
    finally:
        await engine.dispose()


def _cli(url: str, capsys: pytest.CaptureFixture[str], *more: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["cashup", "--date", DAY, "--database", url, "--json", *more]) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


async def _screens(url: str) -> dict[str, str]:
    engine = _keyed_engine(url)
    app = create_app(make_sessionmaker(engine), clock=lambda: NOW)
    pages = {}
    try:
        for account in ("aud", "thandi"):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                r = await sign_in_form(c, {"name": account, "password": PASSWORD})
                assert r.status_code == 303, r.text
                page = await c.get("/console/cashup", params={"date": DAY})
                assert page.status_code == 200, page.text
                pages[account] = page.text
    finally:
        await engine.dispose()
    return pages


def _row(who: str, f: dict[str, Any]) -> str:
    """A cashier's line as the screen renders it, from the command's figures."""
    cells = [
        f"{f['entries_sold']['seats']} / {rand(f['entries_sold']['amount_cents'])}",
        str(f["entries_complimentary"]["seats"]),
        f"{f['entries_refunded']['entries']} / {rand(f['entries_refunded']['amount_cents'])}",
        f"{f['super9_buy_ins']['tickets']} / {rand(f['super9_buy_ins']['amount_cents'])}",
        rand(
            f["super9_prizes_paid"]["amount_cents"]
            + f["tournament_prizes_paid"]["amount_cents"]
            + f["hotseat_prizes_paid"]["amount_cents"]
            + f["team_prizes_paid"]["amount_cents"]
        ),
        *(
            rand(f[k])
            for k in (
                "cash_in_cents",
                "cash_out_cents",
                "drawer_cents",
                "card_in_cents",
                "card_out_cents",
                "net_cents",
            )
        ),
    ]
    tds = "".join(f'\n  <td class="num">{c}</td>' for c in cells)
    return f'<th scope="row">{who}</th>{tds}'


def test_the_screen_shows_the_commands_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    cheap_hashes(monkeypatch)
    add_accounts(url, ("thandi", "cashier"), ("sipho", "cashier"), ("aud", "auditor"))
    asyncio.run(_day_of_sales(url))
    every, own = _cli(url, capsys), _cli(url, capsys, "--cashier", "thandi")
    assert every["reconciliation"]["ok"] is True
    tenders = {x["tender"]: x for x in every["totals"]["by_tender"]}
    assert tenders["card"]["in_cents"] == 10_000  # both tenders and a refund on the day
    assert tenders["card"]["out_cents"] == 5_000
    assert tenders["cash"]["in_cents"] == 5_000
    pages = asyncio.run(_screens(url))
    for x in every["totals"]["by_tender"]:
        line = (
            f'<tr data-tender="{x["tender"]}"><th scope="row">{x["tender"]}</th><td class="num">'
            f'{x["movements"]}</td><td class="num">{rand(x["in_cents"])}</td><td class="num">'
            f"{rand(x['out_cents'])}</td></tr>"
        )
        assert line in pages["aud"], x
    for x in every["by_cashier"]:
        assert _row(x["cashier"], x) in pages["aud"], x["cashier"]
    assert _row("Total", every["totals"]) in pages["aud"]
    assert f'<strong id="drawer">{rand(every["totals"]["drawer_cents"])}</strong>' in pages["aud"]
    # The cashier's screen is the command's --cashier: her line, her totals.
    assert [x["cashier"] for x in own["by_cashier"]] == ["thandi"]
    assert _row("thandi", own["by_cashier"][0]) in pages["thandi"]
    assert _row("Total", own["totals"]) in pages["thandi"]
    assert "sipho" not in pages["thandi"]
