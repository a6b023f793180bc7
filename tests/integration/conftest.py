"""Databases for the whole-process tests: a SQLite file always, and a PostgreSQL
database of its own (created and dropped here) when ``REELGATE_DATABASE_URL`` names a
server.  Each is migrated with ``reelgate db upgrade``, as an operator would.

Browsers for the end-to-end tests (:mod:`tests.browser`, shared with the console's
suite): ``browser`` (one Debian chromium for the whole session, driven by Playwright;
never a downloaded browser) and ``page`` (a fresh context and page per test).
Playwright objects belong to the event loop that made them, so a test using them runs
in the session's loop, and so must its async fixtures::

    pytestmark = pytest.mark.asyncio(loop_scope="session")

    @pytest_asyncio.fixture(loop_scope="session")
    async def server() -> ...

``page`` is 1920×1080 (``await page.set_viewport_size(...)`` for another screen), with
``bypass_csp`` (Playwright's polling evaluates strings); page errors (uncaught
exceptions in our scripts) fail the test.  Both are skipped, saying
why, when the chromium binary is absent (``REELGATE_CHROMIUM`` names another one)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from gateway.app.cli import main
from storage.db import make_engine
from tests.browser import SCREEN, browser_fixture, page_fixture
from tests.conftest import POSTGRES_URL

_BACKENDS = ["sqlite"] + (["postgresql"] if POSTGRES_URL.startswith("postgresql") else [])


async def _admin(sql: str) -> None:
    engine = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(sql))
    finally:
        await engine.dispose()


@pytest.fixture(params=_BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh, migrated database."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'gw.db'}"
        assert main(["db", "upgrade", "--database", url]) == 0
        yield url
        return
    name = f"rg_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    try:
        assert main(["db", "upgrade", "--database", url]) == 0
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# One chromium for the session, a fresh screen-sized page per test (tests.browser).
browser = browser_fixture(scope="session", loop_scope="session")
page = page_fixture(SCREEN, loop_scope="session", bypass_csp=True)
