"""The console's Cash-up screen (issue 26): the day's cash-up as ``GET /cashup`` and
``reelgate cashup`` build it, a cashier's own figures only, and the signed records of
the day, a tournament or a heat (``reelgate export``'s files, for roles holding both
``cashup.read`` and ``audit.read``), verified as ``reelgate export verify`` verifies."""

from __future__ import annotations

import io
import os
import socket
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select

from gateway.accounts.roles import Permission as P
from gateway.accounts.roles import Role, allowed
from gateway.records.document import ExportContext
from gateway.records.exporter import build_export, export_files, verify_export
from gateway.records.keys import AUDIT_KEY_ENV, SIGNING_KEY_ENV, load_public_key
from gateway.super9.venue import venue_zone
from gateway.tournament import services as svc
from gateway.web.console.render import rand
from storage.audit import AuditEntry
from storage.enums import Tender
from tests.gateway.web.api.conftest import NOW

from .conftest import Desk, signed_in

DAY = "2026-11-20"
EXPORT = f"/console/cashup/export?kind=cashup&id={DAY}"


async def _audit_rows(desk: Desk) -> int:
    async with desk.sessions() as s:
        return await s.scalar(select(func.count()).select_from(AuditEntry)) or 0


@pytest.mark.parametrize("role", list(Role))
async def test_the_screen_and_its_exports_open_only_for_their_roles(desk: Desk, role: Role) -> None:
    """The screen is cashup.read's; an export also needs audit.read (auditor, director)."""
    async with signed_in(desk, role.value) as client:
        page = await client.get("/console/cashup", params={"date": DAY})
        reads = allowed(role, P.CASHUP_READ)
        assert page.status_code == (200 if reads else 403)
        exports = reads and allowed(role, P.AUDIT_READ)
        r = await client.get(EXPORT)
        assert r.status_code == (200 if exports else 403), r.text[:300]
        if not exports:
            lacking = P.CASHUP_READ if not reads else P.AUDIT_READ
            assert f"role {role.value} may not {lacking.value}" in r.text
        if reads:
            assert ('id="signed"' in page.text) == exports


async def test_anonymous_is_sent_to_sign_in(desk: Desk) -> None:
    for path in ("/console/cashup", EXPORT):
        r = await desk.client.get(path)
        assert r.status_code == 303
        assert r.headers["location"].startswith("/console/login?next=/console/cashup")


async def test_the_day_opens_on_the_venues_today(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        r = await client.get("/console/cashup")
    assert r.status_code == 200
    assert "Cash-up Fri 20 Nov 2026" in r.text
    assert 'href="/console/cashup?date=2026-11-19"' in r.text
    assert 'href="/console/cashup?date=2026-11-21"' in r.text


async def test_a_cashier_sees_their_own_figures_only(desk: Desk) -> None:
    """As GET /cashup: the cashier's own line; another cashier's figures are a 403."""
    async with signed_in(desk, "cashier") as client:
        own = await client.get("/console/cashup", params={"date": DAY})
        other = await client.get("/console/cashup", params={"date": DAY, "cashier": "c"})
    assert own.status_code == 200
    assert "Figures of cashier only." in own.text
    assert '<th scope="row">cashier</th>' in own.text
    assert '<th scope="row">c</th>' not in own.text
    assert rand(10_000) in own.text  # the two Super 9 buy-ins
    assert other.status_code == 403
    assert "a cashier reads their own cash-up only" in other.text
    async with signed_in(desk, "auditor") as client:
        every = await client.get("/console/cashup", params={"date": DAY})
    assert '<th scope="row">c</th>' in every.text
    assert '<th scope="row">cashier</th>' in every.text


async def test_a_bad_day_is_one_line_naming_the_field(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        for day in ("2026-13-01", "0001-01-01"):
            r = await client.get("/console/cashup", params={"date": day})
            assert r.status_code == 422
            assert '<p class="flash error" role="alert">date: ' in r.text


async def test_a_downloaded_export_verifies_as_the_cli_verifies_it(
    desk: Desk, tmp_path: Path
) -> None:
    """The zip holds ``reelgate export``'s three files; ``export verify``'s function
    accepts the record, which is byte for byte the CLI's document for the same
    moment; a download writes no audit row, as the command writes none."""
    before = await _audit_rows(desk)
    async with signed_in(desk, "auditor") as client:
        signed_in_rows = await _audit_rows(desk)
        r = await client.get(EXPORT)
    assert r.status_code == 200, r.text[:300]
    assert r.headers["content-disposition"] == f'attachment; filename="cashup-{DAY}.zip"'
    bundle = zipfile.ZipFile(io.BytesIO(r.content))
    names = sorted(bundle.namelist())
    assert names == [f"cashup-{DAY}.html", f"cashup-{DAY}.json", f"cashup-{DAY}.json.sig"]
    bundle.extractall(tmp_path)
    public = load_public_key(Path(os.environ[SIGNING_KEY_ENV]).with_suffix(".pub"))
    verdict = verify_export(tmp_path / f"cashup-{DAY}.json", public)
    assert verdict.ok, verdict.problem
    assert verdict.document is not None
    assert verdict.document["kind"] == "cashup"
    async with desk.sessions() as s:
        venue = os.environ.get("REELGATE_VENUE") or socket.gethostname()
        ctx = ExportContext(venue, await venue_zone(s), NOW)
        from gateway.records.keys import load_signing_key

        cli = export_files(
            await build_export(s, "cashup", DAY, ctx),
            load_signing_key(Path(os.environ[SIGNING_KEY_ENV])),
        )
    assert cli[f"cashup-{DAY}.json"] == (tmp_path / f"cashup-{DAY}.json").read_bytes()
    assert await _audit_rows(desk) == signed_in_rows > before  # only the sign-in wrote


async def test_a_tournament_and_a_heat_are_exported_signed(desk: Desk, tmp_path: Path) -> None:
    public = load_public_key(Path(os.environ[SIGNING_KEY_ENV]).with_suffix(".pub"))
    async with signed_in(desk, "director") as client:
        page = await client.get("/console/cashup", params={"date": DAY})
        assert f'<option value="{desk.ids["done_heat"]}">' in page.text  # the day's heat
        for kind, ident in (
            ("tournament", desk.ids["tournament"]),
            ("heat", desk.ids["done_heat"]),
        ):
            r = await client.get("/console/cashup/export", params={"kind": kind, "id": ident})
            assert r.status_code == 200, r.text[:300]
            zipfile.ZipFile(io.BytesIO(r.content)).extractall(tmp_path)
            verdict = verify_export(tmp_path / f"{kind}-{ident}.json", public)
            assert verdict.ok, verdict.problem
            assert verdict.document is not None
            assert (verdict.document["kind"], verdict.document["id"]) == (kind, str(ident))


async def test_a_bad_export_is_one_line_naming_the_field(desk: Desk) -> None:
    async with signed_in(desk, "director") as client:
        for params, line in (
            ({"kind": "floor", "id": "1"}, "kind: "),
            ({"kind": "heat", "id": "x"}, "id: heat ID: "),
            ({"kind": "cashup", "id": "2026-02-30"}, "id: date: "),
        ):
            r = await client.get("/console/cashup/export", params=params)
            assert r.status_code == 422, params
            assert f'<p class="flash error" role="alert">{line}' in r.text, params


async def test_without_a_signing_key_nothing_unsigned_is_offered(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SIGNING_KEY_ENV)
    monkeypatch.delenv(AUDIT_KEY_ENV)  # its folder's signing.key would be found next
    async with signed_in(desk, "auditor") as client:
        page = await client.get("/console/cashup", params={"date": DAY})
        r = await client.get(EXPORT)
    assert 'id="no-key"' in page.text
    assert "/console/cashup/export" not in page.text
    assert r.status_code == 422
    assert "no signing key is configured on this gateway" in r.text
    assert r.headers["content-type"].startswith("text/html")


async def test_a_day_with_both_tenders_and_a_refund(desk: Desk) -> None:
    """A card sale, a refund of one of its entries (T23) beside the fixture's cash sales:
    each tender's in and out on the screen, the drawer cash only."""
    async with svc.unit_of_work(desk.sessions) as s:
        sale = await svc.sell_entries(
            s, desk.ids["tournament"], desk.ids["p2"], quantity=2, tender=Tender.CARD,
            cashier="cashier", now=NOW,
        )  # fmt: skip
        await svc.refund_entry(
            s, sale.entry_ids[0], rule=23, reason="left early", actor="cashier", now=NOW
        )
    async with signed_in(desk, "auditor") as client:
        r = await client.get("/console/cashup", params={"date": DAY})
    assert r.status_code == 200
    assert "reconciled</span>" in r.text
    card = '<tr data-tender="card"><th scope="row">card</th><td class="num">2</td>'
    assert card + f'<td class="num">{rand(10_000)}</td><td class="num">{rand(5_000)}</td>' in r.text
    assert f'<strong id="drawer">{rand(20_000)}</strong>' in r.text
