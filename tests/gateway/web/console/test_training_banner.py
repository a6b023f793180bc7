"""A training database (storage.database_mark) says so on every console page, as the
signs, the CLI, the API's header and the exports do: the banner is in the base template,
so the sign-in page, every screen and the pages of refusal carry it."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from storage.database_mark import DatabaseKind, mark
from storage.db import make_sessionmaker

from .conftest import Desk, sign_in_form, signed_in
from .test_pages import SCREENS

# Whole pages only: a fragment is swapped into a page that already carries the banner.
PAGES = [path for path in SCREENS if not path.endswith("/fragment")]

BANNER = 'id="training-banner"'


async def _train(engine: AsyncEngine) -> None:
    async with make_sessionmaker(engine)() as session, session.begin():
        await mark(session, DatabaseKind.TRAINING, at=datetime.now(UTC), by="tests")


async def test_a_production_console_shows_no_training_banner(desk: Desk) -> None:
    login = await desk.client.get("/console/login")
    assert login.status_code == 200
    assert BANNER not in login.text
    async with signed_in(desk, "director") as client:
        for path in ("/console/", *PAGES):
            r = await client.get(path)
            assert r.status_code in (200, 403), path
            assert BANNER not in r.text, path


async def test_every_console_page_of_a_training_database_says_training(
    desk: Desk, engine: AsyncEngine
) -> None:
    await _train(engine)
    login = await desk.client.get("/console/login")  # the first request: before anyone signs in
    assert login.status_code == 200
    assert BANNER in login.text
    assert "TRAINING database" in login.text
    refused = await sign_in_form(desk.client, {"name": "cashier", "password": "wrong password!"})
    assert refused.status_code == 401
    assert BANNER in refused.text
    async with signed_in(desk, "cashier") as client:  # a role refused some screens
        for path in ("/console/", *PAGES):
            r = await client.get(path)
            assert r.status_code in (200, 403), path
            assert BANNER in r.text, (path, r.status_code)


async def test_a_signed_in_page_learns_the_mark_without_the_sign_in_page(
    desk: Desk, engine: AsyncEngine
) -> None:
    await _train(engine)
    async with signed_in(desk, "director") as client:
        client._transport.app.state.api.training = None  # type: ignore[attr-defined]
        r = await client.get("/console/floor")  # unknown since the sign-in: read afresh
        assert r.status_code == 200
        assert BANNER in r.text
